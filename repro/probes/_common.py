"""Probe stage, shared plumbing of the spectral and critical-band probes (torch).

Moving uint8 crops to the device, the study's top-1 decision rule (``Top1``: argmax over 1000
classes, counts per condition), per-image seeding and the chunked work of the stimulus synthesis."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
import torch

from repro.base.device import resolve_device as choose
from repro.base.errors import DataError
from repro.base.results import ConditionCount, Counts
from repro.datasets.base import ImageBatch, ImageSource

T = TypeVar("T")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``repro.base.device.resolve_device`` as a ``torch.device``."""
    return torch.device(choose(None if device is None else str(device)))


def to_unit_float(
    images: np.ndarray, device: torch.device, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """uint8 (N, 3, H, W) -> float in [0, 1] on ``device`` (torchvision ToTensor's x / 255).

    The uint8 array travels to the device first, 4x less transfer than float."""
    return torch.from_numpy(np.ascontiguousarray(images)).to(device).to(dtype).div_(255.0)


class Top1:
    """The study's decision over the 1000 ImageNet classes: the argmax of the logits.

    The decision is right when it is the label; every item needs a label. Counts per condition
    (in the order given), no records (the decision rule of the spectral and critical-band probes,
    ``repro.measurements.loop``)."""

    version = ""

    def __init__(
        self, source: ImageSource, model: Any = None, *, conditions: Sequence[str] = (), **_: Any
    ):
        self.source = source
        self.tally = Counts(conditions)
        self.records: list[dict[str, Any]] = []

    def labels(self, batch: ImageBatch) -> np.ndarray:
        if (batch.labels < 0).any():
            bad = [n for n, y in zip(batch.names, batch.labels, strict=True) if y < 0][:3]
            raise DataError(
                f"{self.source.name}: items without a label (label -1), e.g. {bad}; "
                "probes need labelled images"
            )
        return np.asarray(batch.labels, dtype=np.int64)

    def add(
        self, condition: str, batch: ImageBatch, labels: np.ndarray, logits: torch.Tensor
    ) -> np.ndarray:
        if logits.ndim != 2 or logits.shape[0] != labels.shape[0]:
            raise ValueError(
                f"model output must be (N, classes) for N={labels.shape[0]}, got "
                f"{tuple(logits.shape)}"
            )
        decisions = logits.argmax(dim=1).cpu().numpy()
        self.tally.add(condition, int((decisions == labels).sum()), int(labels.shape[0]))
        return decisions

    def counts(self) -> list[ConditionCount]:
        return self.tally.counts()


def image_seed(seed: int, name: str, condition: str) -> int:
    """A 63-bit seed for one (run seed, image, condition).

    Noise depends on nothing else, so it is the same for any batch size, device, worker count or
    image order."""
    digest = hashlib.sha256(f"{int(seed)}\x1f{name}\x1f{condition}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def run_chunks(work: Callable[[T], None], tasks: Sequence[T], device: torch.device) -> None:
    """Run the independent chunk tasks, spread over worker threads on a CPU.

    On a CPU with a budget of several torch threads, the chunks are spread over that many worker
    threads that each run torch single-threaded (coarse-grained: no thread synchronisation inside
    the many small operations, which costs dearly on a busy machine); every chunk is computed the
    same way either way, so the results do not depend on it. The caller's thread setting is
    restored afterwards."""
    workers = min(torch.get_num_threads(), len(tasks)) if device.type == "cpu" else 1
    if workers <= 1:
        for task in tasks:
            work(task)
        return

    previous = torch.get_num_threads()

    def single(task: T) -> None:
        torch.set_num_threads(1)
        work(task)

    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(single, tasks))
    finally:
        torch.set_num_threads(previous)

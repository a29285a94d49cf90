"""Shared by the `real` tests and the snapshot command (``python -m tests.real.make_snapshots``):
run a probe on a real stimulus set while recording what the model saw and returned.

``Recorder`` wraps the (normalizing) zoo model: it keeps every logit row in order, the range
of the input the probe handed over (must be [0, 1]: the model normalizes inside, a probe
must not), and a sha256 of those inputs' uint8 pixels (so a snapshot mismatch caused by a
different JPEG decoder shows as such, not as a model change). From the logits follow the
16-class category scores (mean softmax per category, as the probes decide) and each
decision's margin (top score minus runner-up), which bounds how fragile a decision is.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from repro.datasets.categories16 import get_mapping

BATCH = 16  # on 2 CPU cores faster than 64 for EfficientNet-Lite0 (less system time)
SETS = {
    "cue_conflict": ("shape-bias", "texture-vs-shape/cue-conflict"),
    "cbmsplit": ("critical-band", "critical-band-masking/CBMSplit"),
}


class Recorder(torch.nn.Module):
    """Passes input through ``model``; records logits (float64 copies), input range and pixels."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model
        self.logits: list[np.ndarray] = []
        self.lo, self.hi = float("inf"), float("-inf")
        self.pixels = hashlib.sha256()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.lo, self.hi = min(self.lo, float(x.min())), max(self.hi, float(x.max()))
        self.pixels.update(torch.round(x.float() * 255).to(torch.uint8).cpu().numpy().tobytes())
        out = self.model(x)
        self.logits.append(out.detach().double().cpu().numpy())
        return out

    def all_logits(self) -> np.ndarray:
        return np.concatenate(self.logits, axis=0)


class Float64(torch.nn.Module):
    """The same network in float64 end to end (input cast, weights and normalization double)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model.double()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x.double())


def category_scores(logits: np.ndarray, dtype: Any = np.float32) -> np.ndarray:
    """(N, 16) mean softmax per category; softmax in ``dtype`` (float32: as the probes do)."""
    t = torch.from_numpy(np.asarray(logits)).to(
        torch.float32 if dtype == np.float32 else torch.float64
    )
    return get_mapping().category_scores(torch.softmax(t, dim=1).numpy())


def margins(scores: np.ndarray) -> np.ndarray:
    top2 = np.sort(scores, axis=1)[:, -2:]
    return top2[:, 1] - top2[:, 0]


def decisions(scores: np.ndarray) -> list[str]:
    cats = get_mapping().categories
    return [cats[i] for i in np.argmax(scores, axis=1)]


@dataclass
class Run:
    result: Any  # ProbeResult
    names: list[str]
    logits: np.ndarray
    seconds: float
    input_range: tuple[float, float]
    pixels_sha256: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def images_per_second(self) -> float:
        return len(self.names) / self.seconds


def run_set(
    model: torch.nn.Module, stimulus_set: str, data_dir: Path, *, batch_size: int = BATCH
) -> Run:
    """Measure ``model`` on one real set with its probe's registered measurement for that set
    (splits 0-4 for CBMSplit), as the probe command does."""
    from repro.measurements.loop import run
    from repro.measurements.probe_data import open_data
    from repro.measurements.registry import probe_measurement

    probe, folder = SETS[stimulus_set]
    m = probe_measurement(probe, stimulus_set)
    source = open_data(m, data_dir / folder)
    rec = Recorder(model)
    start = time.perf_counter()
    result = run(m, rec, source, device="cpu", batch_size=batch_size, seed=0)
    seconds = time.perf_counter() - start
    return Run(
        result,
        list(source.names),
        rec.all_logits(),
        seconds,
        (rec.lo, rec.hi),
        rec.pixels.hexdigest(),
    )


def probe_decisions(run: Run, stimulus_set: str) -> list[str]:
    """The decisions the probe itself recorded, image by image (names in source order)."""
    key = "imagename"
    by_name = {r[key]: r["object_response"] for r in run.result.records}
    import os

    return [
        by_name[os.path.basename(n) if stimulus_set == "cue_conflict" else n] for n in run.names
    ]


def counts_of(run: Run) -> dict[str, list[int]]:
    return {c.condition: [c.k, c.n] for c in run.result.conditions}

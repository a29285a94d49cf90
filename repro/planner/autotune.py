"""Runner, batch size and memory format per (model, device) from measurement, cached.

The probes used to run every model at batch 64. On a CPU that is the slow choice: the
activations of a 64-image batch of a 224 px network are hundreds of MB, glibc serves blocks that
large with fresh ``mmap`` calls and returns them on ``free``, so every batch faults its memory in
again (the shape-bias probe on EfficientNet-Lite0 spent more system than user time).
``tune`` times a forward pass of a few candidate batch sizes in both memory formats
(contiguous NCHW and ``channels_last``) on random 224 px input, and keeps the fastest per image;
the choice is cached per (model, device, torch version, threads) in
``<cache>/autotune.json`` (``REPRO_CACHE_DIR``), so it is measured once.

A probe that synthesises its stimuli (``synthesising``: a measurement whose stimuli are made from
each image before the model sees them, the critical band's 29 conditions and the spectral filter's
22 plus clean, in their 1000- and 16-class forms) runs, per batch, the synthesis once and the
model once per condition (the passes the measurement declares). Timing the forward pass alone picks
the batch that is fastest for the model, not for that step (on a CPU the critical band's synthesis
and noise cost about as much as the 29 passes of a small model). With ``step=<measurement>`` the
synthesis of a batch of each candidate size is timed too (``_time_synthesis``: the measurement's own
stimulus maker on random crops) and the batch size with the least time per source image of the whole
step is kept (``choose``); the table then holds source images per second through the whole step.
The allocator fix (glibc keeps freed activations in the heap for reuse, without new page faults)
is ``repro.base.allocator.keep_freed_memory``, which every command applies at its start.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repro.base import atomic
from repro.base.allocator import keep_freed_memory
from repro.base.registry import resolve_lazy
from repro.base.settings import user_cache_dir
from repro.datasets.base import ImageBatch
from repro.measurements.registry import MEASUREMENTS

#: batch sizes tried per device kind (an accelerator wants large batches, a CPU small ones)
CANDIDATES = {"cpu": (8, 16, 32, 64), "cuda": (64, 128, 256, 512)}


def synthesising(step: str) -> Any:
    """The registered measurement ``step`` when it synthesises its stimuli, else None.

    A measurement synthesises its stimuli from each image before the model sees them
    (``Stimuli.derived``: the critical band's 29 conditions, the spectral filter's 22 plus clean);
    None: a forward pass per image, or an attack."""
    if step not in MEASUREMENTS:
        return None
    m = MEASUREMENTS.get(step)
    return m if m.stimuli.derived else None


@dataclass(frozen=True)
class Choice:
    batch_size: int
    channels_last: bool
    images_per_s: float  # source images per second through the tuned step
    table: tuple[tuple[int, bool, float], ...]  # (batch size, channels_last, images/s) measured
    cached: bool = False
    step: str = "forward"  # "forward", or the measurement whose synthesis and passes were timed


def cache_file() -> Path:
    return user_cache_dir() / "autotune.json"


def _key(model_name: str, device: Any, step: str = "forward") -> str:
    import torch

    key = f"{model_name}|{device}|torch {torch.__version__}|threads {torch.get_num_threads()}"
    return key if step == "forward" else f"{key}|step {step}"


def choose(
    forward: dict[tuple[int, bool], float],
    synthesis: dict[int, float] | None = None,
    passes: int = 1,
) -> tuple[tuple[int, bool, float], ...]:
    """The table of source images per second through the whole per-batch step, fastest first.

    From seconds per batch, the forward pass of each (batch size, channels_last) and the synthesis
    of each batch size (none: nothing synthesised):
    ``b / (synthesis(b) + passes * forward(b, cl))``, fastest first (ties: the smaller batch, then
    contiguous)."""
    if not forward:
        raise ValueError("choose needs at least one timed forward pass")
    synthesis = synthesis or {}
    rows = []
    for (b, cl), seconds in forward.items():
        if b not in synthesis and synthesis:
            raise ValueError(f"no synthesis time for batch size {b}")
        rows.append((int(b), bool(cl), b / (synthesis.get(b, 0.0) + passes * seconds)))
    rows.sort(key=lambda r: (-r[2], r[0], r[1]))  # on the exact rates, rounded for the table only
    return tuple((b, cl, round(rate, 2)) for b, cl, rate in rows)


def _time_synthesis(step: str, batch: int, device: Any, repeats: int) -> float:
    """Seconds (best of ``repeats``) to make the stimuli of measurement ``step`` for one batch.

    The batch is random 224 px crops on ``device``; the stimuli are made with the measurement's own
    maker and consumed one by one as the probe loop does."""
    import torch

    m = synthesising(step)
    dev = torch.device(device)
    crops = np.random.default_rng(0).integers(0, 256, (batch, 3, 224, 224), dtype=np.uint8)
    images = ImageBatch(
        crops, np.zeros(batch, dtype=np.int64), [f"autotune_{i:05d}.png" for i in range(batch)]
    )
    _, make = resolve_lazy(m.stimuli.make)(**{**m.resolve_kwargs(), "seed": 0, "batch_size": batch})

    def once() -> None:
        for _, x in make(images, None, device=dev, model=None, labels=images.labels):
            x.sum()  # touch it, as a model would
        if dev.type == "cuda":
            torch.cuda.synchronize()

    best = float("inf")
    once()  # warm-up (compiled kernels, allocator)
    for _ in range(repeats):
        t = time.perf_counter()
        once()
        best = min(best, time.perf_counter() - t)
    return best


def _time_forward(model: Any, batch: int, channels_last: bool, device: Any, repeats: int) -> float:
    """Seconds per forward pass of ``model`` on random (batch, 3, 224, 224) input.

    The best of ``repeats``."""
    import torch

    x = torch.rand(batch, 3, 224, 224, device=device)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    best = float("inf")
    with torch.inference_mode():
        model(x)  # warm-up (allocator, kernel selection)
        for _ in range(repeats):
            if torch.device(device).type == "cuda":
                torch.cuda.synchronize()
            t = time.perf_counter()
            model(x)
            if torch.device(device).type == "cuda":
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t)
    return best


def tune(
    model: Any,
    model_name: str,
    device: Any,
    *,
    candidates: tuple[int, ...] | None = None,
    repeats: int = 2,
    refresh: bool = False,
    step: str = "forward",
) -> Choice:
    """The fastest (batch size, memory format) of ``model`` on ``device`` for ``step``.

    Cached by name. ``step``: ``forward`` (the forward pass alone) or a measurement that synthesises
    its stimuli (its synthesis plus its passes per image; any other measurement name is a forward
    pass per image)."""
    import torch

    measurement = synthesising(step)
    step = step if measurement is not None else "forward"
    key = _key(model_name, device, step)
    path = cache_file()
    cache: dict[str, Any] = {}
    if path.exists():
        try:
            cache = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            cache = {}
    if key in cache and not refresh:
        c = cache[key]
        return Choice(
            int(c["batch_size"]),
            bool(c["channels_last"]),
            float(c["images_per_s"]),
            tuple(tuple(r) for r in c["table"]),
            cached=True,
            step=str(c.get("step", "forward")),
        )  # type: ignore[misc]
    kind = torch.device(device).type
    sizes = candidates or CANDIDATES.get(kind, CANDIDATES["cuda"])
    forward: dict[tuple[int, bool], float] = {}
    for channels_last in (False, True):
        m = (
            model.to(memory_format=torch.channels_last)
            if channels_last
            else model.to(memory_format=torch.contiguous_format)
        )
        for b in sizes:
            forward[(int(b), channels_last)] = _time_forward(
                m, int(b), channels_last, device, repeats
            )
    model.to(memory_format=torch.contiguous_format)
    synthesis = (
        {int(b): _time_synthesis(step, int(b), device, repeats) for b in sizes}
        if step != "forward"
        else None
    )
    table = choose(
        forward, synthesis, measurement.passes().forward if measurement is not None else 1
    )
    best = table[0]
    choice = Choice(best[0], best[1], best[2], table, step=step)
    cache[key] = asdict(choice) | {"cached": False}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = atomic.temp_file(path)  # the umask's mode, a temp name the store's cleaner knows
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(cache, indent=1))
        atomic.publish(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return choice


@dataclass(frozen=True)
class Layout:
    """How a probe runs a model: images per batch and the model's memory format."""

    batch_size: int
    memory_format: str  # "contiguous" or "channels_last"


def model_key(spec: str) -> str:
    """The cache name of a model given as a zoo name or a file (its file name without suffix)."""
    path = Path(spec).expanduser()
    return path.stem if path.is_file() else spec


def layout_for(
    model: Any, spec: str, device: Any, batch_size: int | None = None, measurement: str = "forward"
) -> Layout:
    """The layout a model runs in: ``batch_size`` as given (contiguous), or for None autotuned.

    The autotuned choice is this model and device's for ``measurement``'s per-batch step (``tune``,
    cached under ``model_key(spec)``): the model is then put in that memory format, and on a CPU
    glibc is first told to keep freed memory (``keep_freed_memory``)."""
    import torch

    if batch_size is not None:
        return Layout(int(batch_size), "contiguous")
    if torch.device(device).type == "cpu":
        keep_freed_memory()
    choice = tune(model, model_key(spec), device, step=measurement)
    if choice.channels_last:
        model.to(memory_format=torch.channels_last)
    return Layout(choice.batch_size, "channels_last" if choice.channels_last else "contiguous")

"""Runner, batch size and memory format per (model, device) from measurement, cached.

The probes used to run every model at batch 64. On a CPU that is the slow choice: the
activations of a 64-image batch of a 224 px network are hundreds of MB, glibc serves blocks that
large with fresh ``mmap`` calls and returns them on ``free``, so every batch faults its memory in
again (the shape-bias probe on EfficientNet-Lite0 spent more system than user time, issue 14).
``tune`` times a forward pass of a few candidate batch sizes in both memory formats
(contiguous NCHW and ``channels_last``) on random 224 px input, and keeps the fastest per image;
the choice is cached per (model, device, torch version, threads) in
``<cache>/autotune.json`` (``REPRO_CACHE_DIR``), so it is measured once. ``keep_freed_memory``
is the allocator fix: it raises glibc's mmap and trim thresholds (``mallopt``) so that freed
activations stay in the heap and are reused without new page faults (the same as setting
``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_`` in the environment before start).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repro.base import atomic

#: batch sizes tried per device kind (an accelerator wants large batches, a CPU small ones)
CANDIDATES = {"cpu": (8, 16, 32, 64), "cuda": (64, 128, 256, 512)}
#: glibc ``mallopt`` parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
#: bytes: allocations below this come from the heap, and freed heap memory above the trim
#: threshold is kept (glibc caps the mmap threshold at 32 MiB on 64-bit: HEAP_MAX / 2)
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_THRESHOLD = 1024 * 1024 * 1024


@dataclass(frozen=True)
class Choice:
    batch_size: int
    channels_last: bool
    images_per_s: float
    table: tuple[tuple[int, bool, float], ...]  # (batch size, channels_last, images/s) measured
    cached: bool = False


def keep_freed_memory() -> bool:
    """Make glibc keep freed large blocks for reuse (see the module docstring). Returns whether it
    could (False on a C library without ``mallopt``). Call once, before the first big tensor."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    except (OSError, AttributeError):
        return False


def cache_file() -> Path:
    from repro.base.settings import user_cache_dir

    return user_cache_dir() / "autotune.json"


def _key(model_name: str, device: Any) -> str:
    import torch

    return f"{model_name}|{device}|torch {torch.__version__}|threads {torch.get_num_threads()}"


def _time_forward(model: Any, batch: int, channels_last: bool, device: Any, repeats: int) -> float:
    """Images per second of ``model`` on random (batch, 3, 224, 224) input (best of ``repeats``)."""
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
    return batch / best


def tune(model: Any, model_name: str, device: Any, *, candidates: tuple[int, ...] | None = None,
         repeats: int = 2, refresh: bool = False) -> Choice:
    """The fastest (batch size, memory format) of ``model`` on ``device`` (cached by name)."""
    import torch

    key = _key(model_name, device)
    path = cache_file()
    cache: dict[str, Any] = {}
    if path.exists():
        try:
            cache = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            cache = {}
    if key in cache and not refresh:
        c = cache[key]
        return Choice(int(c["batch_size"]), bool(c["channels_last"]), float(c["images_per_s"]),
                      tuple(tuple(r) for r in c["table"]), cached=True)  # type: ignore[misc]
    kind = torch.device(device).type
    sizes = candidates or CANDIDATES.get(kind, CANDIDATES["cuda"])
    table: list[tuple[int, bool, float]] = []
    for channels_last in (False, True):
        m = model.to(memory_format=torch.channels_last) if channels_last else model.to(memory_format=torch.contiguous_format)
        for b in sizes:
            table.append((int(b), channels_last, round(_time_forward(m, int(b), channels_last, device, repeats), 2)))
    model.to(memory_format=torch.contiguous_format)
    best = max(table, key=lambda r: r[2])
    choice = Choice(best[0], best[1], best[2], tuple(table))
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


def layout_for(model: Any, spec: str, device: Any, batch_size: int | None = None) -> Layout:
    """``batch_size`` as given (contiguous), or for None the autotuned choice of this model and
    device (``tune``, cached under ``model_key(spec)``): the model is then put in that memory
    format, and on a CPU glibc is first told to keep freed memory (``keep_freed_memory``)."""
    import torch

    if batch_size is not None:
        return Layout(int(batch_size), "contiguous")
    if torch.device(device).type == "cpu":
        keep_freed_memory()
    choice = tune(model, model_key(spec), device)
    if choice.channels_last:
        model.to(memory_format=torch.channels_last)
    return Layout(choice.batch_size, "channels_last" if choice.channels_last else "contiguous")

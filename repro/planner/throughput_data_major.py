"""Runner, data-major throughput: each batch decoded once and run through N resident models.

The device check's step for 8 ResNet-50s (``python -m repro throughput --data-major N``): images per
second of a generated ImageNet-C-like JPEG set (224 x 224,
``repro.planner.decode_rate.generated_jpegs``) decoded once per batch and run through N resident
copies of the model, decode included, in float32 and in bfloat16 autocast with ``channels_last``;
beside it the model-major baseline of the same run (each copy decoding the set for itself), so the
ratio is measured on the device it is for.

Decoding: ``repro.datasets.decode.decode_into`` on every core (threads; PIL releases the GIL),
the next batch decoded in a background thread while the models run on the current one (the
data-major path's overlap). Each model's argmax comes back to the host per batch (what a
decision rule does), so the device's queue is drained batch by batch. One untimed batch first
(kernel selection, lazy loading). ``passes_per_s`` counts model passes (images x N), the unit of
the cost model's device rates: ``python -m repro plan --throughput`` reads these runs for the
data-major projection of the classify stage.
"""

from __future__ import annotations

import copy
import os
import queue
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from repro.datasets.decode import decode_into
from repro.datasets.layout import Item
from repro.datasets.specs import AS_IS_224
from repro.planner.decode_rate import generated_jpegs

DEFAULT_IMAGES = 1024
PRECISIONS = ("float32", "bfloat16")


def _batches(paths: Sequence[Path], batch_size: int, workers: int) -> Iterator[np.ndarray]:
    items = [Item(str(p), 0, p.name) for p in paths]
    for i in range(0, len(items), batch_size):
        chunk = items[i : i + batch_size]
        out = np.empty((len(chunk), 3, 224, 224), dtype=np.uint8)
        decode_into(out, chunk, AS_IS_224, workers=workers)
        yield out


def _prefetched(it: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """``it`` one batch ahead, in a background thread."""
    q: queue.Queue[Any] = queue.Queue(maxsize=1)
    end = object()

    def fill() -> None:
        try:
            for x in it:
                q.put(x)
        except BaseException as exc:  # handed to the consumer
            q.put(exc)
        q.put(end)

    t = threading.Thread(target=fill, daemon=True)
    t.start()
    while True:
        x = q.get()
        if x is end:
            break
        if isinstance(x, BaseException):
            raise x
        yield x
    t.join()


def _forward(models: Sequence[Any], images: np.ndarray, device: Any, precision: str) -> int:
    import torch

    x = torch.from_numpy(images).to(device).float().div_(255)
    if precision == "bfloat16":
        x = x.contiguous(memory_format=torch.channels_last)
    n = 0
    for m in models:
        if precision == "bfloat16":
            with torch.autocast(torch.device(device).type, dtype=torch.bfloat16):
                logits = m(x)
        else:
            logits = m(x)
        logits.float().argmax(1).cpu()
        n += len(images)
    return n


def _timed(
    models: Sequence[Any],
    paths: Sequence[Path],
    device: Any,
    precision: str,
    batch_size: int,
    workers: int,
    data_major: bool,
) -> tuple[float, int]:
    import torch

    t0 = time.perf_counter()
    passes = 0
    with torch.inference_mode():
        if data_major:
            for images in _prefetched(_batches(paths, batch_size, workers)):
                passes += _forward(models, images, device, precision)
        else:
            for m in models:
                for images in _prefetched(_batches(paths, batch_size, workers)):
                    passes += _forward([m], images, device, precision)
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - t0, passes


def measure(
    model: Any,
    n_models: int,
    device: Any,
    *,
    images: int = DEFAULT_IMAGES,
    batch_size: int = 128,
    workers: int | None = None,
    precisions: Sequence[str] = PRECISIONS,
    folder: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """One run per precision: data-major and model-major seconds over ``images`` generated JPEGs.

    The ``images`` are 224 px JPEGs, run through ``n_models`` copies of ``model`` (see the module
    docstring)."""
    import torch

    workers = workers or os.cpu_count() or 1
    out = []
    with tempfile.TemporaryDirectory(prefix="repro-data-major-") as tmp:
        paths = generated_jpegs(Path(folder or tmp), images, (224, 224), prefix="ILSVRC2012_val_")
        base = model.to(device).eval()
        for precision in precisions:
            models = [copy.deepcopy(base) for _ in range(n_models)]
            if precision == "bfloat16":
                models = [m.to(memory_format=torch.channels_last) for m in models]
            _timed(
                models, paths[:batch_size], device, precision, batch_size, workers, True
            )  # warm-up, untimed
            dm_s, passes = _timed(models, paths, device, precision, batch_size, workers, True)
            mm_s, mm_passes = _timed(models, paths, device, precision, batch_size, workers, False)
            out.append(
                {
                    "precision": precision,
                    "channels_last": precision == "bfloat16",
                    "models": n_models,
                    "images": len(paths),
                    "batch_size": batch_size,
                    "decode_workers": workers,
                    "seconds": round(dm_s, 4),
                    "passes": passes,
                    "passes_per_s": passes / dm_s,
                    "images_per_s": len(paths) / dm_s,
                    "model_major_seconds": round(mm_s, 4),
                    "model_major_passes_per_s": mm_passes / mm_s,
                    "data_major_over_model_major": dm_s / mm_s,
                }
            )
            del models
            if torch.device(device).type == "cuda":
                torch.cuda.empty_cache()
    return out


def format_runs(runs: Sequence[dict[str, Any]]) -> str:
    lines = [
        "data-major throughput (generated 224 px JPEGs, decode included; passes = images x models):"
    ]
    for r in runs:
        lines.append(
            f"  {r['precision']:<9} {r['models']} models x {r['images']} images: data-major "
            f"{r['seconds']:.1f} s ({r['passes_per_s']:,.0f} passes/s), model-major "
            f"{r['model_major_seconds']:.1f} s ({r['model_major_passes_per_s']:,.0f} passes/s): "
            f"ratio {r['data_major_over_model_major']:.2f}"
        )
    return "\n".join(lines)

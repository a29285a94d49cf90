"""Runner, decode rate: images decoded per second on one core of this machine.

Measured for each preprocessing the datasets use, on generated JPEGs. ``python -m repro plan``
budgets decoding with it; the throughput harness writes it into its JSON, so a measurement made on a
device box carries that box's rate and core count.

* ``RESIZE_CROP``: ImageNet-size JPEGs (500 x 375, the typical ImageNet validation image)
  through ``Resize(256)`` + ``CenterCrop(224)`` (ImageNet val, -V2, -A, -R, -Sketch);
* ``AS_IS_224``: 224 x 224 JPEGs used as they are (ImageNet-C and -C-bar, the cue-conflict and
  Stylized images).

The images are smooth random patterns with pixel noise, saved at JPEG quality 90 (as the bench's
ImageNet-like sets: ``generated_jpegs``), decoded by ``repro.datasets.decode.decode`` exactly as a
sweep decodes them. The rate is images per second of the decoding thread's CPU time (the best of
``ROUNDS`` rounds), so other load on the machine does not lower it. Cached in
``<cache>/throughput/decode-<host>.json`` (``REPRO_CACHE_DIR``) by host, Pillow version and code
version.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from repro.base.settings import user_cache_dir
from repro.datasets.decode import decode
from repro.datasets.specs import AS_IS_224, RESIZE_CROP

VERSION = "1"
#: generated image size (width, height) per preprocessing
SIZES = {RESIZE_CROP: (500, 375), AS_IS_224: (224, 224)}
N_IMAGES = 24
ROUNDS = 3


def generated_jpegs(
    folder: str | os.PathLike[str],
    n: int,
    size: tuple[int, int],
    *,
    seed: int = 0,
    prefix: str = "img",
) -> list[Path]:
    """``n`` generated JPEGs of ``size`` (width, height) in ``folder``.

    A coarse random pattern upsampled, with pixel noise, quality 90 (about as costly to decode as a
    photograph of that size)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    out = []
    Path(folder).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        coarse = rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)
        arr = np.asarray(Image.fromarray(coarse).resize(size, Image.Resampling.BILINEAR)).astype(
            np.int16
        )
        arr = np.clip(arr + rng.integers(-20, 21, arr.shape), 0, 255).astype(np.uint8)
        path = Path(folder) / f"{prefix}{i:05d}.JPEG"
        Image.fromarray(arr).save(path, quality=90)
        out.append(path)
    return out


def _rate(paths: list[Path], preprocessing: str) -> float:
    decode(str(paths[0]), preprocessing)  # warm: the transform is built, the code paths loaded
    best = float("inf")
    for _ in range(ROUNDS):
        t0 = time.thread_time()
        for p in paths:
            decode(str(p), preprocessing)
        best = min(best, time.thread_time() - t0)
    return len(paths) / best if best > 0 else float("inf")


def measure(n: int = N_IMAGES) -> dict[str, Any]:
    """Decodes per second per core for each preprocessing of ``SIZES`` (see the module doc)."""
    import PIL

    rates = {}
    with tempfile.TemporaryDirectory(prefix="repro-decode-") as tmp:
        for pre, size in SIZES.items():
            rates[pre] = round(_rate(generated_jpegs(Path(tmp) / str(size[0]), n, size), pre), 1)
    return {
        "version": VERSION,
        "per_core_per_s": rates,
        "cores": os.cpu_count() or 1,
        "host": platform.node(),
        "pillow": PIL.__version__,
        "images": n,
        "sizes": {k: list(v) for k, v in SIZES.items()},
        "clock": f"thread CPU time, best of {ROUNDS} rounds",
    }


def cache_path() -> Path:
    return user_cache_dir() / "throughput" / f"decode-{platform.node() or 'host'}.json"


def cached(refresh: bool = False) -> dict[str, Any]:
    """This machine's decode rates, from the cache or measured now.

    From the cache when they were measured here by this code and Pillow, else measured now and
    cached (written atomically)."""
    import PIL

    path = cache_path()
    if not refresh:
        try:
            doc = json.loads(path.read_text())
            if (
                doc.get("version") == VERSION
                and doc.get("pillow") == PIL.__version__
                and doc.get("host") == platform.node()
                and set(doc.get("per_core_per_s", {})) == set(SIZES)
            ):
                return doc
        except (OSError, ValueError, AttributeError):
            pass
    doc = measure()
    try:
        from repro.base import atomic

        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = atomic.temp_file(path)
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(doc, indent=1) + "\n")
        atomic.publish(tmp)
        os.replace(tmp, path)
    except OSError:  # a read-only cache: the rate is still measured, only not kept
        pass
    return doc

"""Generated miniature copies of every dataset, in the real layout and file naming.

Pipeline stage: datasets (test and demo data). ``make_mini(DIR)`` writes ``DIR/<name>/`` for
every dataset in ``specs.SPECS`` that has mini copies (all but the small critical-band stimulus
sets GraySplit and CBMSplit, ``spec.has_mini``): real class folders (ImageNet wnids, ImageNetV2
``0..999`` folders, the 16 model-vs-human categories), real file naming (``ILSVRC2012_val_<8
digits>.JPEG``, ``<shape><n>-<texture><n>.png``, ``NNNN_sty_dnn_0_<cat>_00_...png``),
ImageNet-C/C-bar ``<corruption>/<severity>/`` folders (all 19 / 10 corruptions x 5
severities). Each mini dataset keeps ``spec.mini_classes`` classes (evenly spaced over the
real class list) with ``per_class x spec.mini_factor`` images per class (per condition), and a
``.repro-mini.json`` manifest that makes the validators expect exactly those counts. Images
are small random smooth patterns (48-96 px for the datasets that are resized, 224 px for the
ones used as is), fully determined by the seed. ``DIR/repro.toml`` configures every root.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import shutil
import zlib
from pathlib import Path

import numpy as np

from repro.base.errors import ConfigError, DataError
from repro.datasets.classes import class_folders
from repro.datasets.layout import MINI_FORMAT, MINI_MARKER
from repro.datasets.specs import CATEGORIES16, SPECS, DatasetSpec, get_spec

R_RENDITIONS = (
    "art",
    "cartoon",
    "deviantart",
    "embroidery",
    "graffiti",
    "graphic",
    "misc",
    "origami",
    "painting",
    "sculpture",
    "sketch",
    "sticker",
    "tattoo",
    "toy",
    "videogame",
)


def mini_classes(spec: DatasetSpec) -> list[str]:
    """The class folders a mini copy keeps: ``spec.mini_classes`` evenly spaced real ones."""
    real = class_folders(spec.classes)
    k = min(spec.mini_classes, len(real))
    return [real[(i * len(real)) // k] for i in range(k)]


def _rng(seed: int, *parts: object) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32("/".join(map(str, parts)).encode())])


def _image(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A smooth random RGB pattern (uint8 HxWx3): a coarse grid of colours upsampled."""
    from PIL import Image

    coarse = rng.integers(
        0, 256, size=(int(rng.integers(3, 9)), int(rng.integers(3, 9)), 3), dtype=np.uint8
    )
    img = Image.fromarray(coarse).resize((width, height), Image.Resampling.BILINEAR)
    arr = np.asarray(img).astype(np.int16)
    arr += rng.integers(-12, 13, size=arr.shape, dtype=np.int16)  # a little texture
    return np.clip(arr, 0, 255).astype(np.uint8)


def _write(path: Path, arr: np.ndarray) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    img = Image.fromarray(arr)
    if path.suffix.lower() == ".png":
        img.save(buf, format="PNG", compress_level=6)
    else:
        img.save(buf, format="JPEG", quality=90)
    path.write_bytes(buf.getvalue())


def _val_ids(seed: int, n: int) -> list[int]:
    """n distinct validation-image numbers in 1..50000, deterministic."""
    ids = _rng(seed, "val-ids").permutation(50_000)[:n] + 1
    return [int(i) for i in ids]


def _files_for(
    spec: DatasetSpec, classes: list[str], per: int, seed: int
) -> list[tuple[str, str, int]]:
    """(class folder, file name, side) for one condition; side 0 means 'small random size'."""
    out: list[tuple[str, str, int]] = []
    size = 224 if spec.image_size == 224 else 0
    if spec.name in ("imagenet_val", "imagenet_c", "imagenet_cbar"):
        ids = iter(_val_ids(seed, len(classes) * per))
        for c in classes:
            out += [(c, f"ILSVRC2012_val_{next(ids):08d}.JPEG", size) for _ in range(per)]
    elif spec.name == "imagenet_v2":
        for c in classes:
            out += [
                (c, hashlib.sha1(f"{seed}/{c}/{j}".encode()).hexdigest() + ".jpeg", size)
                for j in range(per)
            ]
    elif spec.name == "imagenet_a":
        for c in classes:
            out += [
                (c, f"0.{zlib.crc32(f'{seed}/{c}/{j}'.encode()) % 10**6:06d}_{c}_{j}.jpg", size)
                for j in range(per)
            ]
    elif spec.name == "imagenet_r":
        for c in classes:
            out += [(c, f"{R_RENDITIONS[j % len(R_RENDITIONS)]}_{j}.jpg", size) for j in range(per)]
    elif spec.name == "imagenet_sketch":
        for c in classes:
            out += [(c, f"sketch_{j}.JPEG", size) for j in range(per)]
    elif spec.name == "cue_conflict":
        rng = _rng(seed, spec.name, "textures")
        for c in classes:
            for j in range(per):
                # the first image of a category has texture == shape (dropped by shape bias)
                texture = c if j == 0 else str(rng.choice([t for t in CATEGORIES16 if t != c]))
                out.append((c, f"{c}{j + 1}-{texture}{int(rng.integers(1, 4))}.png", size))
    elif spec.name == "stylized":
        ids = iter(_val_ids(seed, len(classes) * per))
        k = 0
        for c in classes:
            for j in range(per):
                k += 1
                out.append(
                    (
                        "",
                        f"{k:04d}_sty_dnn_0_{c}_00_{c}-{j + 1:04d}-"
                        f"ILSVRC2012-val-{next(ids):08d}.png",
                        size,
                    )
                )
    else:  # pragma: no cover - a new spec needs its naming here
        raise ValueError(f"make_mini: no file naming for dataset {spec.name!r}")
    return out


def _make_one(spec: DatasetSpec, root: Path, per_class: int, seed: int) -> int:
    classes = mini_classes(spec)
    per = per_class * spec.mini_factor
    files = _files_for(spec, classes, per, seed)
    n = 0
    for cond in spec.conditions:
        base = root / cond if cond else root
        if spec.layout == "sessions":
            base = root / "dnn" / "session-1"
        for folder, fname, side in files:
            rng = _rng(seed, spec.name, cond, folder, fname)
            if side:
                w = h = side
            else:
                w, h = int(rng.integers(48, 97)), int(rng.integers(48, 97))
            _write(base / folder / fname if folder else base / fname, _image(rng, w, h))
            n += 1
    marker = {
        "format": MINI_FORMAT,
        "dataset": spec.name,
        "mini": True,
        "classes": classes,
        "per_class": per,
        "seed": seed,
        "conditions": [c for c in spec.conditions if c],
        "images": n,
        "note": "generated by `python -m repro data make-mini`; NOT real data: numbers "
        "measured on it are not evidence",
    }
    (root / MINI_MARKER).write_text(json.dumps(marker, indent=1) + "\n")
    return n


BUILD_PREFIX = ".mini-build-"
MAX_PER_CLASS = 100  # images per class and condition: 100,000 ImageNet-val images at most


def _reusable(root: Path, spec: DatasetSpec, per_class: int, seed: int) -> int | None:
    """Images of a complete mini copy at ``root`` made with these settings, else None."""
    marker = root / MINI_MARKER
    if not marker.is_file():
        return None
    try:
        info = json.loads(marker.read_text())
    except ValueError:
        return None
    same = (
        info.get("format") == MINI_FORMAT
        and info.get("dataset") == spec.name
        and info.get("seed") == seed
        and info.get("per_class") == per_class * spec.mini_factor
    )
    return int(info.get("images", 0)) if same else None


def _write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    tmp.write_text(text)
    os.replace(tmp, path)


def make_mini(
    directory: str | Path,
    *,
    per_class: int = 2,
    seed: int = 0,
    datasets: list[str] | None = None,
    resume: bool = False,
) -> dict[str, Path]:
    """Write a mini copy of every dataset (or of ``datasets``) under ``directory``.

    Returns {dataset name: root}. Existing mini copies in ``directory`` are replaced (with
    ``resume``: kept when made with the same settings, so an interrupted build goes on where it
    stopped); a folder that is not a mini copy is never overwritten. Each dataset is built in a
    private ``.mini-build-*`` folder and renamed into place when complete, so an interrupted
    build never leaves a half-written dataset; its leftovers are removed by the next build
    (which holds the folder's lock, so no concurrent builder is harmed).
    """
    if not 1 <= per_class <= MAX_PER_CLASS:
        raise ConfigError(
            f"per_class (--per-class) = {per_class}: expected an integer 1..{MAX_PER_CLASS} (a "
            "mini copy is for tests and trials; measure the real dataset for more images)"
        )
    if not 0 <= seed < 2**63:
        raise ConfigError(f"seed (--seed) = {seed}: expected an integer 0..2**63-1")
    directory = Path(directory).expanduser()
    names = (
        [get_spec(n).name for n in datasets]
        if datasets
        else [n for n, spec in SPECS.items() if spec.has_mini]
    )
    no_mini = [n for n in names if not SPECS[n].has_mini]
    if no_mini:
        raise DataError(
            f"{', '.join(no_mini)}: no generated mini copies exist of this dataset (the real one "
            "is small and lies in the data directory)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    roots: dict[str, Path] = {}
    counts: dict[str, int] = {}
    lock = os.open(directory, os.O_RDONLY)  # flock on the folder itself: no lock file left in it
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in directory.glob(
            f"{BUILD_PREFIX}*"
        ):  # a killed build's leftovers (we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        for name in names:
            root = directory / name
            kept = _reusable(root, SPECS[name], per_class, seed) if resume else None
            if kept is not None:
                counts[name], roots[name] = kept, root
                continue
            if root.exists() and not (root / MINI_MARKER).is_file():
                raise DataError(
                    f"{root}: exists and is not a generated mini copy (no {MINI_MARKER}); "
                    "refusing to overwrite it"
                )
            build = directory / f"{BUILD_PREFIX}{name}-{os.getpid()}"
            build.mkdir()
            try:
                counts[name] = _make_one(SPECS[name], build, per_class, seed)
                if root.exists():
                    shutil.rmtree(root)
                os.rename(build, root)
            finally:
                shutil.rmtree(build, ignore_errors=True)
            roots[name] = root
        manifest = {
            "format": MINI_FORMAT,
            "mini": True,
            "per_class": per_class,
            "seed": seed,
            "datasets": {n: {"root": n, "images": counts[n]} for n in names},
        }
        _write_text_atomic(directory / "mini-manifest.json", json.dumps(manifest, indent=1) + "\n")
        toml = [
            "# generated by `python -m repro data make-mini`: use with REPRO_CONFIG=<this file>",
            "[datasets]",
        ] + [f'{n} = "{roots[n].resolve()}"' for n in names]
        _write_text_atomic(directory / "repro.toml", "\n".join(toml) + "\n")
    finally:
        os.close(lock)  # releases the flock
    return roots

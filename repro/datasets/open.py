"""``open_dataset``: configured root -> validated layout -> (cached) ImageSource.

Pipeline stage: datasets. The root comes from the argument, else
``repro.settings.dataset_root(name)`` (``REPRO_<NAME>_ROOT`` or ``[datasets] <name>`` in
``repro.toml``). The layout and every image count are checked before anything is decoded.
A root that is the top folder written by ``make-mini`` (holding ``<name>/``) is accepted too.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

from repro.datasets.base import ImageBatch, ImageSource
from repro.datasets.cache import CachedSource
from repro.datasets.decode import FileSource
from repro.datasets.layout import (
    MINI_MARKER,
    check_conditions,
    expectation,
    require_root,
    scan_condition,
)
from repro.datasets.specs import DatasetSpec, get_spec

LAZY_ABOVE = 500_000  # items of a corruption dataset above which parts re-list their files on use


class ConcatSource:
    """Several sources read one after another (ImageNet-C: one part per corruption/severity).

    A batch never spans two parts, so per-condition counts stay exact; ``parts`` maps each
    condition (``gaussian_noise/3``) to its source.
    """

    def __init__(self, name: str, parts: dict[str, ImageSource], *, mini: bool = False, root: str = "",
                 label_space: str = "imagenet1k"):
        self.name = name
        self.parts = parts
        self.mini = mini
        self.root = root
        self.label_space = label_space

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts.values())

    def batches(self, batch_size: int) -> Iterator[ImageBatch]:
        for part in self.parts.values():
            yield from part.batches(batch_size)
            release = getattr(part, "release", None)
            if release is not None:
                release()  # one part's item list in memory at a time

    def fingerprint(self) -> str:
        import hashlib

        h = hashlib.sha256()
        for cond, part in self.parts.items():
            h.update(f"{cond}\t{part.fingerprint()}\n".encode())
        return h.hexdigest()[:32]


def _resolve_root(spec: DatasetSpec, root: str | Path | None) -> Path:
    from repro.settings import dataset_root

    if root is None:
        root = dataset_root(spec.name)
    path = require_root(spec, Path(root) if root is not None else None)
    nested = path / spec.name
    if not (path / MINI_MARKER).is_file() and (nested / MINI_MARKER).is_file():
        return nested  # the make-mini top folder
    return path


def open_files(name: str, root: str | Path | None = None, *, mini: bool = False) -> FileSource | ConcatSource:
    """The validated dataset as sources that decode every image on each pass (no cache)."""
    spec = get_spec(name)
    path = _resolve_root(spec, root)
    exp = expectation(spec, path, mini=mini)
    check_conditions(spec, path)
    if spec.layout != "corruptions":
        return FileSource(spec.name, scan_condition(spec, path, "", exp), spec.preprocessing, root=str(path),
                          mini=exp.mini, label_space=spec.label_space)
    parts: dict[str, ImageSource] = {}
    for cond in spec.conditions:  # every condition is validated now; large item lists are re-listed on use
        items = scan_condition(spec, path, cond, exp)
        lazy = len(items) * len(spec.conditions) > LAZY_ABOVE
        parts[cond] = FileSource(f"{spec.name}/{cond}", None if lazy else items, spec.preprocessing,
                                 root=str(path), mini=exp.mini, label_space=spec.label_space,
                                 loader=partial(scan_condition, spec, path, cond, exp), n=len(items))
    return ConcatSource(spec.name, dict(parts), mini=exp.mini, root=str(path), label_space=spec.label_space)


def open_dataset(name: str, root: str | Path | None = None, *, mini: bool = False, cache: bool = True,
                 cache_dir: str | Path | None = None, workers: int | None = None) -> ImageSource:
    """A validated, ordered ImageSource of uint8 (N, 3, 224, 224) crops for dataset ``name``.

    ``mini=True`` requires a generated mini copy (its manifest sets the expected counts; a
    mini copy is recognised by its manifest either way, and the source's ``mini`` attribute
    says so). ``cache=False`` decodes every image on each pass instead of reading the crop
    cache (``cache_dir``, default ``<user cache>/crops``), which is built on first use.

    ``graysplit`` and ``cbmsplit`` (Subramanian et al. 2023's sets, 16-class labels) are read by
    ``repro.datasets.critical_band_stimuli`` (their probe splits 0-4; no mini copies).
    """
    from repro.datasets.critical_band_stimuli import STIMULUS_SETS, open_stimulus_set

    if name.lower() in STIMULUS_SETS:
        if mini:
            from repro.errors import DataError

            raise DataError(f"{name}: there are no generated mini copies of this set; use the real one "
                            "(in the data directory)")
        return open_stimulus_set(name, root, cache=cache, cache_dir=cache_dir)
    files = open_files(name, root, mini=mini)
    if not cache:
        return files
    cdir = Path(cache_dir) if cache_dir is not None else None
    if isinstance(files, ConcatSource):
        parts: dict[str, ImageSource] = {
            c: CachedSource(p, cdir, workers=workers)  # type: ignore[arg-type]
            for c, p in files.parts.items()
        }
        return ConcatSource(files.name, parts, mini=files.mini, root=files.root, label_space=files.label_space)
    return CachedSource(files, cdir, workers=workers)

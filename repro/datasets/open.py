"""``open_dataset``: configured root -> validated layout -> (cached) ImageSource.

Pipeline stage: datasets. The root comes from the argument, else
``repro.datasets.roots.dataset_root(name, data_dir)`` (``REPRO_<NAME>_ROOT`` or ``[datasets]
<name>`` in ``repro.toml``, else the dataset's folder in the data directory the caller passes
down, for the datasets that have one). The layout and every image count are checked before anything
is decoded. A root that is the top folder written by ``make-mini`` (holding ``<name>/``) is accepted
too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path

from repro.base.errors import DataError
from repro.datasets.base import ImageBatch, ImageSource
from repro.datasets.cache import CachedSource
from repro.datasets.critical_band_stimuli import PROBE_SPLITS, stimulus_files
from repro.datasets.decode import FileSource
from repro.datasets.layout import (
    MINI_MARKER,
    check_conditions,
    expectation,
    require_root,
    scan_condition,
)
from repro.datasets.roots import dataset_root
from repro.datasets.specs import DatasetSpec, get_spec
from repro.datasets.subset import Subset, stratified_names
from repro.datasets.subset import provenance as subset_provenance

LAZY_ABOVE = 500_000  # items of a corruption dataset above which parts re-list their files on use


class ConcatSource:
    """Several sources read one after another (ImageNet-C: one part per corruption/severity).

    A batch never spans two parts, so per-condition counts stay exact; ``parts`` maps each
    condition (``gaussian_noise/3``) to its source.
    """

    def __init__(
        self,
        name: str,
        parts: dict[str, ImageSource],
        *,
        mini: bool = False,
        root: str = "",
        label_space: str = "imagenet1k",
    ):
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
        h = hashlib.sha256()
        for cond, part in self.parts.items():
            h.update(f"{cond}\t{part.fingerprint()}\n".encode())
        return h.hexdigest()[:32]


def _resolve_root(
    spec: DatasetSpec, root: str | Path | None, data_dir: str | Path | None = None
) -> Path:
    if root is None:
        root = dataset_root(spec.name, data_dir)
    path = require_root(spec, Path(root) if root is not None else None)
    nested = path / spec.name
    if not (path / MINI_MARKER).is_file() and (nested / MINI_MARKER).is_file():
        return nested  # the make-mini top folder
    return path


def _no_mini(spec: DatasetSpec) -> DataError:
    return DataError(
        f"{spec.name}: there are no generated mini copies of this dataset; use the real one "
        f"(SOURCES.md: {spec.source})"
    )


def open_files(
    name: str,
    root: str | Path | None = None,
    *,
    mini: bool = False,
    data_dir: str | Path | None = None,
    splits: Sequence[str] | None = None,
    subset: Subset | None = None,
) -> FileSource | ConcatSource:
    """The validated dataset as sources that decode every image on each pass (no cache).

    ``data_dir``: the data directory, for datasets that lie there by default (``spec.data_folder``)
    when ``root`` is None and none is configured. ``splits``: the splits of a ``splits`` dataset
    (default its probe splits 0-4); an error for any other dataset. ``subset``: only a declared,
    seeded, class-stratified subset of the images (``repro.datasets.subset``; the same images in
    every condition), with its provenance in the source's ``subset`` attribute.
    """
    spec = get_spec(name)
    if subset is not None and spec.layout == "splits":
        raise DataError(
            f"{spec.name}: a declared subset is not offered for the split datasets (their splits "
            "are the subsets)"
        )
    if spec.layout == "splits":
        if mini:
            raise _no_mini(spec)
        return stimulus_files(
            spec.name,
            _resolve_root(spec, root, data_dir),
            splits=tuple(splits) if splits else PROBE_SPLITS,
        )
    if splits:
        raise DataError(
            f"{spec.name}: splits {list(splits)} given, but only the split datasets "
            "(graysplit, cbmsplit) have splits"
        )
    path = _resolve_root(spec, root, data_dir)
    exp = expectation(spec, path, mini=mini)
    check_conditions(spec, path)
    if spec.layout != "corruptions":
        items = scan_condition(spec, path, "", exp)
        chosen = (
            None
            if subset is None
            else set(stratified_names(items, subset, f"{spec.name} at {path}"))
        )
        source = FileSource(
            spec.name,
            items if chosen is None else [it for it in items if it.name in chosen],
            spec.preprocessing,
            root=str(path),
            mini=exp.mini,
            label_space=spec.label_space,
        )
        source.subset = None if chosen is None else subset_provenance(subset, sorted(chosen))  # type: ignore[arg-type]
        return source
    parts: dict[str, ImageSource] = {}
    chosen = None
    for (
        cond
    ) in spec.conditions:  # every condition is validated now; large item lists are re-listed on use
        items = scan_condition(spec, path, cond, exp)
        lister = partial(scan_condition, spec, path, cond, exp)
        if subset is not None:
            if (
                chosen is None
            ):  # the same images in every condition (names relative to the condition)
                chosen = frozenset(
                    stratified_names(
                        [_Relative(it, cond) for it in items], subset, f"{spec.name} at {path}"
                    )
                )
            items = [it for it in items if _relative(it.name, cond) in chosen]
            lister = partial(_only, lister, chosen, cond)
        lazy = len(items) * len(spec.conditions) > LAZY_ABOVE
        parts[cond] = FileSource(
            f"{spec.name}/{cond}",
            None if lazy else items,
            spec.preprocessing,
            root=str(path),
            mini=exp.mini,
            label_space=spec.label_space,
            loader=lister,
            n=len(items),
        )
    out = ConcatSource(
        spec.name, dict(parts), mini=exp.mini, root=str(path), label_space=spec.label_space
    )
    out.subset = None if chosen is None else subset_provenance(subset, sorted(chosen))  # type: ignore[arg-type]
    return out


def _relative(name: str, condition: str) -> str:
    """An item's name without its condition's folders.

    ``gaussian_noise/1/n01.../x.JPEG`` -> ``n01.../x.JPEG``."""
    prefix = condition + "/"
    return name[len(prefix) :] if name.startswith(prefix) else name


class _Relative:
    """An item seen by its name relative to its condition (for choosing a subset once for all)."""

    def __init__(self, item, condition: str):
        self.name, self.label = _relative(item.name, condition), item.label


def _only(lister, names: frozenset[str], condition: str) -> list:
    return [it for it in lister() if _relative(it.name, condition) in names]


def open_dataset(
    name: str,
    root: str | Path | None = None,
    *,
    mini: bool = False,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    workers: int | None = None,
    data_dir: str | Path | None = None,
    splits: Sequence[str] | None = None,
    subset: Subset | None = None,
) -> ImageSource:
    """A validated, ordered ImageSource of uint8 (N, 3, 224, 224) crops for dataset ``name``.

    ``mini=True`` requires a generated mini copy (its manifest sets the expected counts; a
    mini copy is recognised by its manifest either way, and the source's ``mini`` attribute
    says so). ``cache=False`` decodes every image on each pass instead of reading the crop
    cache (``cache_dir``, default ``<user cache>/crops``), which is built on first use.
    ``data_dir`` and ``splits``: as for ``open_files`` (``graysplit`` and ``cbmsplit``, the
    critical band's original stimuli, lie in the data directory by default and are read by
    ``repro.datasets.critical_band_stimuli``; they have no mini copies). ``subset``: a declared
    subset of the images (``open_files``); the returned source's ``subset`` attribute says which.
    """
    files = open_files(name, root, mini=mini, data_dir=data_dir, splits=splits, subset=subset)
    if not cache:
        return files
    cdir = Path(cache_dir) if cache_dir is not None else None
    if isinstance(files, ConcatSource):
        parts: dict[str, ImageSource] = {
            c: CachedSource(p, cdir, workers=workers)  # type: ignore[arg-type]
            for c, p in files.parts.items()
        }
        out = ConcatSource(
            files.name, parts, mini=files.mini, root=files.root, label_space=files.label_space
        )
        out.subset = getattr(files, "subset", None)  # type: ignore[attr-defined]
        return out
    cached = CachedSource(files, cdir, workers=workers)
    cached.subset = getattr(files, "subset", None)  # type: ignore[attr-defined]
    return cached

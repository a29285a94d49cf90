"""Readers for the stimulus sets of Subramanian et al. 2023's critical-band experiment.

The sets come from the repository ajaysub110/critical-band-masking (``stimuli/``); these are
readers with layout validation for the ``splits`` datasets of ``repro.datasets.specs``
(``graysplit``, ``cbmsplit``).

Pipeline stage: datasets. Both are 16-class sets (model-vs-human's categories); the category
is the last ``_`` field of each file name, never a folder:

- ``graysplit``: ``GraySplit/{0,1,2,3,4,train}/<i>_color_gray_g_<category>.JPEG``, grayscale
  ImageNet validation images, 224 x 224 (stored as RGB JPEGs), 210 per numbered split and 50
  in ``train`` (1,100 in all);
- ``cbmsplit``: ``CBMSplit/<split>/<i>_cbm_noise<sd>_freq<band>_gray_g_<category>.JPEG``, the
  authors' pre-made critical-band stimuli: image ``<i>`` of a split is GraySplit's ``<i>`` with
  ONE condition (noise SD in {0, 0.02, 0.04, 0.08, 0.16}, band 0..6) applied, read from its name.

Splits: the original protocol measures on splits 0-4 and uses ``train`` to fit its
thresholds' psychometric functions, so a reader returns ``PROBE_SPLITS`` (0-4, 1,050 images,
the spec's ``total``) by default; ``splits=`` selects others (e.g. ``("train",)`` or all of
``SPLITS``). Images are used as they are (``AS_IS_224``: ToTensor only, a file of another size
is an error). Item names are ``<split>/<file>`` (indices repeat across splits). The root is
always given by the caller (``repro.datasets.open`` resolves it, with the data directory
passed down); nothing here reads settings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from repro.base.errors import DataError
from repro.datasets.cache import CachedSource
from repro.datasets.decode import FileSource, crop_size
from repro.datasets.layout import Item
from repro.datasets.specs import AS_IS_224, CATEGORIES16, SPECS, DatasetSpec

if TYPE_CHECKING:
    from repro.datasets.cache import CachedSource
    from repro.datasets.decode import FileSource

SPLITS: tuple[str, ...] = ("0", "1", "2", "3", "4", "train")
PROBE_SPLITS: tuple[str, ...] = ("0", "1", "2", "3", "4")  # the original protocol's test splits
PER_SPLIT: Mapping[str, int] = {"0": 210, "1": 210, "2": 210, "3": 210, "4": 210, "train": 50}
# The conditions CBMSplit's file names carry: the critical-band grid of METHODS.md section 3
# (repro.scoring.critical_band.NOISE_SDS / N_BANDS, which this layer cannot import; a unit
# test checks that the two agree).
CBM_NOISE_SDS: tuple[float, ...] = (0.0, 0.02, 0.04, 0.08, 0.16)
CBM_BANDS = 7
STIMULUS_SETS: tuple[str, ...] = tuple(
    name for name, spec in SPECS.items() if spec.layout == "splits"
)


def get_set(name: str) -> DatasetSpec:
    """The spec of a ``splits`` dataset (``graysplit`` or ``cbmsplit``)."""
    key = name.lower().replace("-", "_")
    if key not in STIMULUS_SETS:
        raise DataError(f"unknown stimulus set {name!r} (known: {', '.join(STIMULUS_SETS)})")
    return SPECS[key]


def _has_condition(spec: DatasetSpec) -> bool:
    return "sd" in spec.file_regex().groupindex


def cbm_condition(name: str) -> tuple[float, int]:
    """(noise SD, band) of a CBMSplit item name or file name (``0/12_cbm_noise0.04_freq3_...``)."""
    spec = SPECS["cbmsplit"]
    m = spec.file_regex().fullmatch(os.path.basename(name))
    if m is None:
        raise DataError(f"{name}: not a CBMSplit file name; expected {spec.pattern_help}")
    return _condition(m, name)


def _condition(m: re.Match[str], where: str) -> tuple[float, int]:
    sd, band = float(m.group("sd")), int(m.group("band"))
    if sd not in CBM_NOISE_SDS:
        raise DataError(
            f"{where}: noise SD {m.group('sd')} is not one of "
            f"{', '.join(f'{s:g}' for s in CBM_NOISE_SDS)}"
        )
    if not 0 <= band < CBM_BANDS:
        raise DataError(f"{where}: band {band} is not in 0..{CBM_BANDS - 1}")
    return sd, band


def graysplit_name(cbm_name: str) -> str:
    """The GraySplit item a CBMSplit item was made from.

    ``<split>/<i>_cbm_noise<sd>_freq<band>_gray_g_<c>.JPEG`` ->
    ``<split>/<i>_color_gray_g_<c>.JPEG`` (same split, same index, same category)."""
    m = SPECS["cbmsplit"].file_regex().fullmatch(os.path.basename(cbm_name))
    if m is None:
        raise DataError(
            f"{cbm_name}: not a CBMSplit file name; expected {SPECS['cbmsplit'].pattern_help}"
        )
    folder = os.path.dirname(cbm_name)
    gray = f"{m.group('index')}_color_gray_g_{m.group('category')}.JPEG"
    return f"{folder}/{gray}" if folder else gray


def category_of(name: str) -> str:
    """The category of a GraySplit/CBMSplit file name: its last ``_`` field without extension."""
    return os.path.basename(name).rsplit("_", 1)[-1].split(".")[0]


def _fail(spec: DatasetSpec, root: Path, msg: str) -> DataError:
    return DataError(f"{spec.name} at {root}: {msg}")


def check_splits(splits: Iterable[str]) -> tuple[str, ...]:
    """The split names as a tuple; DataError unless they are distinct names among ``SPLITS``."""
    chosen = tuple(str(x) for x in splits)
    bad = [x for x in chosen if x not in SPLITS]
    if bad or not chosen or len(set(chosen)) != len(chosen):
        raise DataError(f"splits {list(chosen)}: expected distinct names among {', '.join(SPLITS)}")
    return chosen


def scan(
    stimulus_set: DatasetSpec | str, root: str | Path, splits: Sequence[str] = PROBE_SPLITS
) -> list[Item]:
    """Validate the selected splits of ``root`` and return their items.

    Items come in split order, then image index. Folders, file names, categories, conditions,
    indices 0..n-1 and counts are checked before anything is decoded; each problem is a one-line
    DataError naming the file."""
    s = get_set(stimulus_set) if isinstance(stimulus_set, str) else stimulus_set
    chosen = check_splits(splits)
    path = Path(root).expanduser()
    if not path.is_dir():
        raise _fail(
            s,
            path,
            f"folder not found (expected {s.title}: <split>/{s.pattern_help}, splits "
            f"{', '.join(SPLITS)})",
        )
    with os.scandir(path) as it:
        present = sorted(e.name for e in it if e.is_dir() and not e.name.startswith("."))
    unexpected = [p for p in present if p not in SPLITS]
    missing = [x for x in chosen if x not in present]
    if missing or unexpected:
        parts = ([f"missing {', '.join(f'{m}/' for m in missing)}"] if missing else []) + (
            [f"unexpected {', '.join(f'{u}/' for u in unexpected)}"] if unexpected else []
        )
        raise _fail(s, path, f"expected split folders {', '.join(SPLITS)}; {'; '.join(parts)}")
    regex = s.file_regex()
    conditions = _has_condition(s)
    items: list[Item] = []
    for split in chosen:
        folder = path / split
        found: dict[int, Item] = {}
        with os.scandir(folder) as it:
            entries = sorted((e.name, e.is_dir()) for e in it if not e.name.startswith("."))
        for name, is_dir in entries:
            where = f"{split}/{name}"
            if is_dir:
                raise _fail(s, path, f"{where}: unexpected sub-folder inside a split folder")
            m = regex.fullmatch(name)
            if m is None:
                raise _fail(s, path, f"{where}: file name does not match {s.pattern_help}")
            if conditions:
                _condition(m, f"{s.name} at {path}: {where}")
            index = int(m.group("index"))
            if index in found:
                raise _fail(
                    s, path, f"{where}: image index {index} also used by {found[index].name}"
                )
            found[index] = Item(str(folder / name), CATEGORIES16.index(m.group("category")), where)
        want = PER_SPLIT[split]
        if len(found) != want:
            raise _fail(s, path, f"{split}/: expected {want} images, found {len(found)}")
        gaps = [i for i in range(want) if i not in found]
        if gaps:
            raise _fail(
                s,
                path,
                f"{split}/: expected image indices 0..{want - 1}, index {gaps[0]} is missing",
            )
        items.extend(found[i] for i in range(want))
    return items


def detect(folder: str | Path) -> str | None:
    """Which of the two sets ``folder`` holds: ``graysplit``, ``cbmsplit`` or None.

    ``graysplit`` or ``cbmsplit`` when ``folder`` has the split folders of one of the two sets
    (judged by the first file of its first split folder), else None. Does not validate."""
    path = Path(folder).expanduser()
    for split in SPLITS:
        sub = path / split
        if not sub.is_dir():
            continue
        with os.scandir(sub) as it:
            names = sorted(e.name for e in it if e.is_file() and not e.name.startswith("."))
        for name in STIMULUS_SETS:
            if names and SPECS[name].file_regex().fullmatch(names[0]):
                return name
        return None
    return None


def stimulus_files(
    name: str,
    root: str | Path,
    *,
    splits: Sequence[str] = PROBE_SPLITS,
    preprocessing: str = AS_IS_224,
) -> FileSource:
    """The validated set at ``root`` as a FileSource, decoded on every pass.

    The images are uint8 (N, 3, S, S) RGB with 16-class labels (index in ``CATEGORIES16``), in
    split then index order.

    ``preprocessing``: ``AS_IS_224`` (the protocol: the files as they are, S = 224) or a
    resize-crop id (``repro.datasets.decode.resize_crop_id``, e.g. a model's native transform for
    a check of its weights).
    """
    s = get_set(name)
    chosen = check_splits(splits)
    path = Path(root).expanduser()
    items = scan(s, path, chosen)
    return FileSource(
        f"{s.name}[{'+'.join(chosen)}]",
        items,
        preprocessing,
        root=str(path),
        label_space=s.label_space,
    )


def open_stimulus_set(
    name: str,
    root: str | Path,
    *,
    splits: Sequence[str] = PROBE_SPLITS,
    cache: bool = False,
    cache_dir: str | Path | None = None,
    preprocessing: str = AS_IS_224,
    workers: int | None = None,
) -> FileSource | CachedSource:
    """``stimulus_files``, read through the decode-once crop cache when ``cache`` (224 px only)."""
    files = stimulus_files(name, root, splits=splits, preprocessing=preprocessing)
    if not cache:
        return files
    if crop_size(preprocessing) != 224:
        raise DataError(
            f"{files.name}: the crop cache holds 224 px crops; preprocessing {preprocessing!r} "
            "needs cache=False"
        )

    return CachedSource(files, Path(cache_dir) if cache_dir is not None else None, workers=workers)

"""Dataset specs as data: layout, expected counts, file naming, label space, preprocessing.

Pipeline stage: datasets (what a reader expects on disk before anything is decoded). The specs
are declared in ``data/datasets.toml`` (one table per dataset, with the sources of its numbers);
this module reads them into ``DatasetSpec``s. No torch, and no file access but that one file.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError, UnknownNameError
from repro.base.registry import Registry

# The study's two preprocessing pipelines (ids are stored with every cached crop).
RESIZE_CROP = "pil-rgb/resize256-bilinear/centercrop224/v1"  # Resize(256) + CenterCrop(224)
AS_IS_224 = "pil-rgb/as-is-224/v1"  # ToTensor only: the files are already 224 x 224

IMAGENET_C_CORRUPTIONS = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",  # noise
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",  # blur
    "snow",
    "frost",
    "fog",
    "brightness",  # weather
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",  # digital
    "speckle_noise",
    "gaussian_blur",
    "spatter",
    "saturate",  # the 4 extra (METHODS.md Q3)
)
IMAGENET_CBAR_CORRUPTIONS = (
    "blue_noise_sample",
    "brownish_noise",
    "caustic_refraction",
    "checkerboard_cutout",
    "cocentric_sine_waves",
    "inverse_sparkles",
    "perlin_noise",
    "plasma_noise",
    "single_frequency_greyscale",
    "sparkles",
)
SEVERITIES = (1, 2, 3, 4, 5)

# model-vs-human's 16 entry-level categories, in its (alphabetical) order; the label of a
# cue-conflict or stylized image is the index of its shape category in this tuple.
CATEGORIES16 = (
    "airplane",
    "bear",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "car",
    "cat",
    "chair",
    "clock",
    "dog",
    "elephant",
    "keyboard",
    "knife",
    "oven",
    "truck",
)

_CAT = "|".join(CATEGORIES16)
IMAGE_FILE = r"[^/]+\.(?:jpe?g|png)"  # any image file (case-insensitive match)


@dataclass(frozen=True)
class DatasetSpec:
    """What one dataset looks like on disk and how it is read.

    ``layout``:
      - ``wnid_folders``: ``<root>/<wnid>/<file>``; label = ImageNet-1k index of the wnid.
      - ``index_folders``: ``<root>/<k>/<file>`` with k = 0..999 (ImageNetV2); label = int(k),
        mapped explicitly (never ImageFolder's lexicographic order).
      - ``corruptions``: ``<root>/<corruption>/<severity>/<wnid>/<file>``.
      - ``category_folders``: ``<root>/<category>/<file>`` with the 16 categories (cue-conflict).
      - ``sessions``: ``<root>/dnn/session-1/<file>`` (model-vs-human sets with sessions);
        the category is a field of the file name.
      - ``splits``: ``<root>/<split>/<i>_..._<category>.JPEG`` with splits ``0..4`` and
        ``train`` (Subramanian et al. 2023's GraySplit / CBMSplit); the category is the last
        field of the file name; read by ``repro.datasets.critical_band_stimuli``, which counts
        the probe splits 0-4 (``total``) by default.
    ``classes``: the set of class folders: ``imagenet1k`` (1000 wnids), ``imagenet_a`` /
    ``imagenet_r`` (their 200 wnids), ``index1k`` (``0``..``999``), ``categories16``.
    ``per_class``: exact images per class folder (per condition), or None when it varies.
    ``total``: images in all (per condition for ``corruptions``).
    ``file_pattern``: full-match regex for file names; named groups are checked by the reader.
    ``name_style``: item names are the bare ``file`` name (unique in the dataset) or the
    ``relpath`` below the root.
    ``mini_classes``: how many class folders a generated mini copy keeps (evenly spaced over
    the real list; 0: the dataset has no generated mini copy); ``mini_factor``: images per
    class in a mini copy = factor x ``--per-class``.
    ``data_folder``: where the dataset lies below the data directory when no root is
    configured (None: it must be configured), e.g. the critical-band stimuli that SOURCES.md
    puts there.
    """

    name: str
    title: str
    layout: str
    classes: str
    per_class: int | None
    total: int
    preprocessing: str
    file_pattern: str
    name_style: str
    label_space: str  # "imagenet1k" (labels 0..999) or "categories16" (index in CATEGORIES16)
    pattern_help: str
    source: str
    mini_classes: int
    mini_factor: int = 1
    corruptions: tuple[str, ...] = field(default=())
    severities: tuple[int, ...] = field(default=())
    image_size: int | None = None  # required size of every file (AS_IS_224 datasets)
    data_folder: str | None = None  # default root below the data directory (None: configured only)

    @property
    def has_mini(self) -> bool:
        """Whether ``make-mini`` generates a copy of this dataset."""
        return self.mini_classes > 0

    def file_regex(self) -> re.Pattern[str]:
        return re.compile(
            self.file_pattern, re.IGNORECASE if self.file_pattern == IMAGE_FILE else 0
        )

    @property
    def conditions(self) -> list[str]:
        """``corruption/severity`` sub-folders (corruption datasets), else ``[""]``."""
        if self.layout != "corruptions":
            return [""]
        return [f"{c}/{s}" for c in self.corruptions for s in self.severities]


#: where the datasets are declared: one TOML table per dataset (fields as in ``DatasetSpec``)
SPECS_FILE = Path(__file__).parent / "data" / "datasets.toml"
_PREPROCESSING = {"resize_crop": RESIZE_CROP, "as_is_224": AS_IS_224}
_CORRUPTIONS = {"imagenet_c": IMAGENET_C_CORRUPTIONS, "imagenet_cbar": IMAGENET_CBAR_CORRUPTIONS}


def _named(path: Path, name: str, key: str, value: Any, known: dict[str, Any]) -> Any:
    if value not in known:
        raise ConfigError(
            f"{path}: [{name}] {key} = {value!r}: expected one of {', '.join(map(repr, known))}"
        )
    return known[value]


#: the fields every table of the specs file gives (the others have defaults; ``per_class``: None)
REQUIRED_FIELDS = tuple(
    f.name
    for f in fields(DatasetSpec)
    if f.default is MISSING and f.default_factory is MISSING and f.name not in ("name", "per_class")
)


def read_specs(path: Path = SPECS_FILE) -> list[DatasetSpec]:
    """The datasets declared in ``path`` (``SPECS_FILE``), names resolved (see its header).

    Anything else is a ConfigError naming the file, the table and the field."""
    try:
        tables = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the dataset specs: {exc}") from None
    known = {f.name for f in fields(DatasetSpec)} - {"name"}
    out = []
    for name, raw in tables.items():
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: {name!r} is not a table (one [table] per dataset)")
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ConfigError(f"{path}: [{name}] unknown field(s) {', '.join(unknown)}")
        missing = [f for f in REQUIRED_FIELDS if f not in raw]
        if missing:
            raise ConfigError(f"{path}: [{name}] missing field(s) {', '.join(missing)}")
        raw = {"per_class": None, **raw}
        raw["preprocessing"] = _named(
            path, name, "preprocessing", raw["preprocessing"], _PREPROCESSING
        )
        pattern = str(raw["file_pattern"])
        raw["file_pattern"] = (
            IMAGE_FILE if pattern == "image_file" else pattern.replace("{categories}", _CAT)
        )
        if "corruptions" in raw:
            raw["corruptions"] = _named(path, name, "corruptions", raw["corruptions"], _CORRUPTIONS)
            raw["severities"] = SEVERITIES
        try:
            out.append(DatasetSpec(name=name, **raw))
        except TypeError as exc:  # a required field missing
            raise ConfigError(f"{path}: [{name}] {exc}") from None
    return out


#: the datasets ``repro`` can open, by name; ``SPECS.register(spec.name, spec)`` adds one
SPECS: Registry[DatasetSpec] = Registry("dataset")
for _spec in read_specs():
    SPECS.register(_spec.name, _spec)


def get_spec(name: str) -> DatasetSpec:
    key = name.replace("-", "_")
    if key not in SPECS:
        close = difflib.get_close_matches(key, SPECS, n=2)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UnknownNameError(f"unknown dataset {name!r} (known: {', '.join(SPECS)}){hint}")
    return SPECS[key]


LAYOUT_HELP = {
    "wnid_folders": "class folders, <wnid>/<image>",
    "index_folders": "class folders 0..999, <k>/<image>",
    "corruptions": "<corruption>/<severity>/<wnid>/<image>",
    "category_folders": "category folders, <category>/<image>",
    "sessions": "dnn/session-1/<image> (the category in the file name)",
    "splits": "split folders 0, 1, 2, 3, 4, train, <split>/<image> (the category in the file name)",
}


def describe_layout(spec: DatasetSpec) -> str:
    """What a dataset's folder must look like, in one line (for error messages)."""
    return f"{spec.title}: {LAYOUT_HELP.get(spec.layout, spec.layout)}, {spec.pattern_help}"

"""Dataset specs as data: layout, expected counts, file naming, label space, preprocessing.

Pipeline stage: datasets (what a reader expects on disk before anything is decoded). The
numbers and layouts come from METHODS.md sections 2-3 and from the loaders of the published
study (paulgavrikov/biases_vs_generalization@9168ac8 ``code/eval_imagenet_*.py``,
``utils.assert_imagenet_consistency``) and of model-vs-human (``modelvshuman/datasets``).
No torch, no file access here.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from repro.base.errors import UnknownNameError
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


#: the datasets ``repro`` can open, by name; ``SPECS.register(spec.name, spec)`` adds one
SPECS: Registry[DatasetSpec] = Registry("dataset")
for _spec in [
    DatasetSpec(
        name="imagenet_val",
        title="ILSVRC2012 validation set",
        layout="wnid_folders",
        classes="imagenet1k",
        per_class=50,
        total=50_000,
        preprocessing=RESIZE_CROP,
        file_pattern=r"ILSVRC2012_val_\d{8}\.JPEG",
        pattern_help="ILSVRC2012_val_<8 digits>.JPEG",
        name_style="file",
        label_space="imagenet1k",
        source="image-net.org ILSVRC2012_img_val.tar, sorted into wnid folders",
        mini_classes=100,
        mini_factor=1,
    ),
    DatasetSpec(
        name="imagenet_v2",
        title="ImageNetV2 matched-frequency",
        layout="index_folders",
        classes="index1k",
        per_class=10,
        total=10_000,
        preprocessing=RESIZE_CROP,
        file_pattern=IMAGE_FILE,
        pattern_help="an image file (.jpeg/.jpg/.png)",
        name_style="relpath",
        label_space="imagenet1k",
        source="imagenetv2-matched-frequency.tar.gz (folders 0..999, or zero-padded 000..999)",
        mini_classes=100,
        mini_factor=1,
    ),
    DatasetSpec(
        name="imagenet_a",
        title="ImageNet-A",
        layout="wnid_folders",
        classes="imagenet_a",
        per_class=None,
        total=7_500,
        preprocessing=RESIZE_CROP,
        file_pattern=IMAGE_FILE,
        pattern_help="an image file (.jpeg/.jpg/.png)",
        name_style="relpath",
        label_space="imagenet1k",
        source="imagenet-a.tar (Hendrycks et al. 2021)",
        mini_classes=20,
        mini_factor=1,
    ),
    DatasetSpec(
        name="imagenet_r",
        title="ImageNet-R",
        layout="wnid_folders",
        classes="imagenet_r",
        per_class=None,
        total=30_000,
        preprocessing=RESIZE_CROP,
        file_pattern=IMAGE_FILE,
        pattern_help="an image file (.jpeg/.jpg/.png)",
        name_style="relpath",
        label_space="imagenet1k",
        source="imagenet-r.tar (Hendrycks et al. 2021)",
        mini_classes=20,
        mini_factor=1,
    ),
    DatasetSpec(
        name="imagenet_sketch",
        title="ImageNet-Sketch",
        layout="wnid_folders",
        classes="imagenet1k",
        per_class=None,
        total=50_889,
        preprocessing=RESIZE_CROP,
        file_pattern=IMAGE_FILE,
        pattern_help="an image file (.jpeg/.jpg/.png)",
        name_style="relpath",
        label_space="imagenet1k",
        source="ImageNet-Sketch (Wang et al. 2019), the sketch/ folder",
        mini_classes=100,
        mini_factor=1,
    ),
    DatasetSpec(
        name="imagenet_c",
        title="ImageNet-C (19 corruptions incl. the 4 extra)",
        layout="corruptions",
        classes="imagenet1k",
        per_class=50,
        total=50_000,
        preprocessing=AS_IS_224,
        file_pattern=r"ILSVRC2012_val_\d{8}\.JPEG",
        pattern_help="ILSVRC2012_val_<8 digits>.JPEG",
        name_style="relpath",
        label_space="imagenet1k",
        source="ImageNet-C (Hendrycks & Dietterich 2019), incl. extra corruptions",
        mini_classes=2,
        mini_factor=1,
        corruptions=IMAGENET_C_CORRUPTIONS,
        severities=SEVERITIES,
        image_size=224,
    ),
    DatasetSpec(
        name="imagenet_cbar",
        title="ImageNet-C-bar",
        layout="corruptions",
        classes="imagenet1k",
        per_class=50,
        total=50_000,
        preprocessing=AS_IS_224,
        # generated locally by the C-bar script, which keeps the validation file names;
        # the extension depends on how it was saved
        file_pattern=r"ILSVRC2012_val_\d{8}\.(?:JPEG|jpe?g|png)",
        pattern_help="ILSVRC2012_val_<8 digits>.JPEG (or .jpg/.png)",
        name_style="relpath",
        label_space="imagenet1k",
        source="ImageNet-C-bar (Mintun et al. 2021), generated at 224 px",
        mini_classes=4,
        mini_factor=1,
        corruptions=IMAGENET_CBAR_CORRUPTIONS,
        severities=SEVERITIES,
        image_size=224,
    ),
    DatasetSpec(
        name="cue_conflict",
        title="model-vs-human cue-conflict stimuli",
        layout="category_folders",
        classes="categories16",
        per_class=80,
        total=1_280,
        preprocessing=AS_IS_224,
        file_pattern=rf"(?P<shape>{_CAT})\d+-(?P<texture>{_CAT})\d+\.png",
        pattern_help="<shape><n>-<texture><n>.png with 16-class names (airplane1-bicycle2.png)",
        name_style="file",
        label_space="categories16",
        source="bethgelab/model-vs-human datasets/cue-conflict",
        mini_classes=16,
        mini_factor=3,
        image_size=224,
        data_folder="texture-vs-shape/cue-conflict",  # SOURCES.md puts the 1,280 real stimuli there
    ),
    DatasetSpec(
        name="stylized",
        title="model-vs-human Stylized-ImageNet",
        layout="sessions",
        classes="categories16",
        per_class=50,
        total=800,
        preprocessing=AS_IS_224,
        file_pattern=(
            rf"\d{{4}}_sty_dnn_0_(?P<shape>{_CAT})_00_(?P=shape)-\d{{4}}"
            r"-ILSVRC2012-val-\d{8}\.png"
        ),
        pattern_help="<4 digits>_sty_dnn_0_<category>_00_<category>-<4 digits>-ILSVRC2012-val-<8 digits>.png",
        name_style="file",
        label_space="categories16",
        source="bethgelab/model-vs-human datasets/stylized (dnn/session-1)",
        mini_classes=16,
        mini_factor=1,
        image_size=224,
    ),
    # Subramanian et al. 2023 (ajaysub110/critical-band-masking ``stimuli/``), the critical
    # band's original protocol (METHODS.md section 3): 16-class sets, category = the last
    # ``_`` field of the file name; 210 images in each split 0-4 (the probe splits,
    # ``total``) and 50 in ``train``. No mini copies: the real sets are small and shared.
    DatasetSpec(
        name="graysplit",
        title="Subramanian et al. 2023 GraySplit (grayscale ImageNet val, 16 categories)",
        layout="splits",
        classes="categories16",
        per_class=None,
        total=1_050,
        preprocessing=AS_IS_224,
        file_pattern=rf"(?P<index>\d+)_color_gray_g_(?P<category>{_CAT})\.JPEG",
        pattern_help="<i>_color_gray_g_<category>.JPEG with a 16-class category (e.g. 0_color_gray_g_knife.JPEG)",
        name_style="relpath",
        label_space="categories16",
        source="ajaysub110/critical-band-masking stimuli/GraySplit",
        mini_classes=0,
        image_size=224,
        data_folder="critical-band-masking/GraySplit",
    ),
    DatasetSpec(
        name="cbmsplit",
        title="Subramanian et al. 2023 CBMSplit (pre-made critical-band stimuli, 16 categories)",
        layout="splits",
        classes="categories16",
        per_class=None,
        total=1_050,
        preprocessing=AS_IS_224,
        file_pattern=(
            rf"(?P<index>\d+)_cbm_noise(?P<sd>\d+(?:\.\d+)?)_freq(?P<band>\d+)_gray_g_"
            rf"(?P<category>{_CAT})\.JPEG"
        ),
        pattern_help=(
            "<i>_cbm_noise<sd>_freq<band>_gray_g_<category>.JPEG (e.g. "
            "0_cbm_noise0.16_freq5_gray_g_knife.JPEG)"
        ),
        name_style="relpath",
        label_space="categories16",
        source="ajaysub110/critical-band-masking stimuli/CBMSplit (made from GraySplit by the authors' code)",
        mini_classes=0,
        image_size=224,
        data_folder="critical-band-masking/CBMSplit",
    ),
]:
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

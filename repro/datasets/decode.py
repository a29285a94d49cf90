"""Decoding: the study's one preprocessing, and an ImageSource that decodes on each pass.

The preprocessing is applied to image files; the ImageSource decodes every image on each pass
(the reference the crop cache is checked against).

Pipeline stage: datasets. ``RESIZE_CROP`` is exactly torchvision's test transform on a PIL
image (``Image.open`` -> ``convert("RGB")`` -> ``transforms.Resize(256)`` (bilinear, shorter
side) -> ``transforms.CenterCrop(224)``), kept as uint8 before ``ToTensor``; ``AS_IS_224``
is ``ToTensor`` only (ImageNet-C, C-bar, cue-conflict, stylized: the files are 224 px, and a
file of any other size is an error). torch/torchvision are imported inside the functions.
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

from repro.base.errors import DataError
from repro.datasets.base import ImageBatch
from repro.datasets.digests import digests
from repro.datasets.layout import Item
from repro.datasets.specs import AS_IS_224

CROP = 224
# Resize(shorter side) + CenterCrop ids: RESIZE_CROP is one of them; a model's native eval
# transform (e.g. bicubic 256 -> 224 for EfficientNet-Lite0) is another
_RESIZE_CROP_RE = re.compile(
    r"pil-rgb/resize(?P<resize>\d+)-(?P<interp>bilinear|bicubic)/centercrop(?P<crop>\d+)/v1"
)


def resize_crop_id(resize: int, crop: int, interpolation: str = "bilinear") -> str:
    """The preprocessing id of a torchvision resize followed by a centre crop.

    The transform is torchvision's ``Resize(resize, interpolation)`` + ``CenterCrop(crop)``."""
    pid = f"pil-rgb/resize{int(resize)}-{interpolation}/centercrop{int(crop)}/v1"
    if not _RESIZE_CROP_RE.fullmatch(pid) or int(crop) > int(resize):
        raise ValueError(f"not a valid resize-crop preprocessing: {pid!r}")
    return pid


def crop_size(preprocessing: str) -> int:
    """Side of the square uint8 images a preprocessing id produces."""
    m = _RESIZE_CROP_RE.fullmatch(preprocessing)
    if m:
        return int(m.group("crop"))
    if preprocessing == AS_IS_224:
        return CROP
    raise ValueError(f"unknown preprocessing id {preprocessing!r}")


@cache
def _transform(preprocessing: str) -> Callable | None:
    m = _RESIZE_CROP_RE.fullmatch(preprocessing)
    if m:  # RESIZE_CROP and the other resize-crop ids
        from torchvision import transforms

        mode = {
            "bilinear": transforms.InterpolationMode.BILINEAR,
            "bicubic": transforms.InterpolationMode.BICUBIC,
        }[m.group("interp")]
        return transforms.Compose(
            [
                transforms.Resize(int(m.group("resize")), interpolation=mode),
                transforms.CenterCrop(int(m.group("crop"))),
            ]
        )
    if preprocessing == AS_IS_224:
        return None
    raise ValueError(f"unknown preprocessing id {preprocessing!r}")


def decode(path: str, preprocessing: str) -> np.ndarray:
    """One file -> uint8 (3, 224, 224) RGB crop, by the named preprocessing."""
    from PIL import Image

    transform = _transform(preprocessing)
    try:
        with open(path, "rb") as fh, warnings.catch_warnings():
            # PIL warns above MAX_IMAGE_PIXELS and raises above twice that: either way a file
            # announcing that many pixels is refused before it is decompressed. (The filter is
            # process-wide while this block runs; from decode threads it only ever turns this
            # one warning into an error.)
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(fh).convert("RGB")  # what torchvision's ImageFolder loader does
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise DataError(
            f"{path}: refused as a decompression bomb ({' '.join(str(exc).split())}); an image of "
            "this dataset has far fewer pixels: replace the file"
        ) from None
    except OSError as exc:
        raise DataError(
            f"{path}: cannot decode image ({' '.join(str(exc).split())}); replace or remove the "
            "file (`python -m repro data check --build-cache` finds every such file)"
        ) from None
    if transform is not None:
        img = transform(img)
    elif img.size != (CROP, CROP):
        raise DataError(
            f"{path}: expected a {CROP}x{CROP} image (this dataset is used as is, without resize), "
            f"found {img.size[0]}x{img.size[1]}"
        )
    arr = np.asarray(img, dtype=np.uint8)
    return np.ascontiguousarray(arr.transpose(2, 0, 1))


def decode_into(
    out: np.ndarray,
    items: Sequence[Item],
    preprocessing: str,
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    chunk: int = 256,
) -> None:
    """Decode ``items`` into ``out[i]`` (uint8 (N, 3, 224, 224)).

    Threads when workers > 1 (PIL releases the GIL while decoding and resizing).
    ``progress(n)`` gets the number of images done so far."""

    def one(i: int) -> None:
        out[i] = decode(items[i].path, preprocessing)

    done = 0
    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 and len(items) >= 16 else None
    try:
        for start in range(0, len(items), chunk):
            idx = range(start, min(start + chunk, len(items)))
            if pool is None:
                for i in idx:
                    one(i)
            else:
                list(pool.map(one, idx))
            done += len(idx)
            if progress:
                progress(done)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class FileSource:
    """An ImageSource that decodes every file on every pass (no cache)."""

    def __init__(
        self,
        name: str,
        items: Sequence[Item] | None,
        preprocessing: str,
        *,
        root: str = "",
        mini: bool = False,
        label_space: str = "imagenet1k",
        loader: Callable[[], Sequence[Item]] | None = None,
        n: int | None = None,
    ):
        """A source of ``items`` in order, or of a ``loader`` that lists them and their number.

        ``items`` in order; or ``loader`` (re-lists them on demand) and their number ``n``,
        so a family of large sources (ImageNet-C: 95 x 50,000 files) need not hold every
        item list at once (see ``release``)."""
        if items is None and (loader is None or n is None):
            raise ValueError("FileSource needs items, or a loader and n")
        self.name = name
        self._items = list(items) if items is not None else None
        self._loader = loader
        self._n = len(self._items) if self._items is not None else int(n or 0)
        self.preprocessing = preprocessing
        self.root = root
        self.mini = mini
        self.label_space = label_space
        self._fingerprint: str | None = None

    @property
    def items(self) -> list[Item]:
        if self._items is None:
            assert self._loader is not None
            items = list(self._loader())
            if len(items) != self._n:
                raise DataError(
                    f"{self.name} at {self.root}: {len(items)} images now, {self._n} when it was "
                    "opened"
                )
            self._items = items
        return self._items

    def release(self) -> None:
        """Drop the item list when it can be listed again (lazy sources only)."""
        if self._loader is not None:
            self._items = None

    def __len__(self) -> int:
        return self._n

    @property
    def labels(self) -> np.ndarray:
        return np.fromiter((it.label for it in self.items), dtype=np.int64, count=len(self.items))

    @property
    def names(self) -> list[str]:
        return [it.name for it in self.items]

    def batches(self, batch_size: int) -> Iterator[ImageBatch]:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        items = self.items
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            side = crop_size(self.preprocessing)
            images = np.empty((len(chunk), 3, side, side), dtype=np.uint8)
            decode_into(images, chunk, self.preprocessing)
            yield ImageBatch(
                images,
                np.array([it.label for it in chunk], dtype=np.int64),
                [it.name for it in chunk],
            )

    def fingerprint(self) -> str:
        """sha256 over the preprocessing id and every file's name, label, size and content."""
        if self._fingerprint is None:
            self._fingerprint = files_fingerprint(self.items, self.preprocessing)
        return self._fingerprint


def files_fingerprint(items: Sequence[Item], preprocessing: str) -> str:
    """sha256 over the preprocessing id and every file's name, label, size and content.

    The content, not the mtime: a copy of the same files (a new mount, ``cp`` without ``-p``,
    another machine) keeps the fingerprint, so the measurements in a store stay valid; any changed
    byte changes it. Each file's sha256 is remembered across runs by (size, mtime, ctime, inode)
    (``repro.datasets.digests``), so an unchanged dataset is only stat-ed.
    """
    stats = []
    for it in items:
        try:
            stats.append((str(it.path), os.stat(it.path)))
        except OSError as exc:
            raise DataError(f"{it.path}: cannot read ({exc.strerror})") from None
    h = hashlib.sha256()
    h.update(f"content-v2\n{preprocessing}\n{len(items)}\n".encode())
    for it, (_, st), digest in zip(items, stats, digests(stats), strict=True):
        h.update(f"{it.name}\t{it.label}\t{st.st_size}\t{digest}\n".encode())
    return h.hexdigest()[:32]

"""Class lists the dataset readers need: ImageNet-1k wnids and the wnids of ImageNet-A and -R.

ImageNet-1k wnids come in class-index order; ImageNet-A and ImageNet-R have 200 wnids each.

Pipeline stage: datasets. The facts live in ``repro.datasets.class_subsets``
(``IMAGENET_WNIDS``, ``IMAGENET_A_CLASSES``, ``IMAGENET_R_CLASSES``, package data).
ImageNet-1k class order is the sorted wnid order; a list that is not sorted is rejected.
"""

from __future__ import annotations

from functools import lru_cache

from repro.base.errors import DataError
from repro.datasets import class_subsets as cs
from repro.datasets.specs import CATEGORIES16


@lru_cache(maxsize=1)
def _subsets() -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
    wnids = tuple(cs.IMAGENET_WNIDS)
    a = tuple(int(i) for i in cs.IMAGENET_A_CLASSES)
    r = tuple(int(i) for i in cs.IMAGENET_R_CLASSES)
    if len(wnids) != 1000 or list(wnids) != sorted(wnids) or len(set(wnids)) != 1000:
        raise DataError("ImageNet wnid list: expected 1000 distinct wnids in sorted order")
    for label, idx in (("ImageNet-A", a), ("ImageNet-R", r)):
        if len(set(idx)) != 200 or not all(0 <= i < 1000 for i in idx):
            raise DataError(f"{label} class list: expected 200 distinct indices in 0..999")
    return wnids, tuple(sorted(a)), tuple(sorted(r))


def imagenet_wnids() -> list[str]:
    """The 1000 ImageNet-1k wnids; position = class index."""
    return list(_subsets()[0])


def wnid_to_index() -> dict[str, int]:
    return {w: i for i, w in enumerate(_subsets()[0])}


def class_folders(classes: str) -> list[str]:
    """The real class-folder names of a spec's ``classes`` kind, in label order."""
    if classes == "index1k":
        return [str(i) for i in range(1000)]
    if classes == "categories16":
        return list(CATEGORIES16)
    wnids, a, r = _subsets()
    if classes == "imagenet1k":
        return list(wnids)
    if classes == "imagenet_a":
        return [wnids[i] for i in a]
    if classes == "imagenet_r":
        return [wnids[i] for i in r]
    raise ValueError(f"unknown class kind {classes!r}")

"""The decision mapping from 1000 ImageNet class probabilities to model-vs-human's 16 categories.

Datasets stage, decision mapping (ImageNet class facts): the named, swappable mapping from 1000
ImageNet class probabilities to a decision among model-vs-human's 16 entry-level categories.

The facts (which ImageNet classes make up each category) are package data,
``repro/datasets/data/categories16.json``, transcribed with provenance from
bethgelab/model-vs-human @ 79ed7cd (``modelvshuman/helper/human_categories.py``, MIT).
A category's probability is the MEAN of its classes' softmax probabilities (not the sum,
not the max); the decision is the argmax, ties going to the alphabetically first category.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from repro.base.errors import DataError, UnknownNameError
from repro.base.registry import Registry

N_IMAGENET_CLASSES = 1000
_AGGREGATIONS = ("mean", "sum", "max")


@dataclass(frozen=True)
class CategoryMapping:
    """A mapping from ImageNet-1k probabilities to a fixed set of category decisions."""

    name: str
    categories: tuple[str, ...]  # decision order (argmax ties go to the first)
    indices: tuple[tuple[int, ...], ...]  # ImageNet class indices per category
    aggregation: str = "mean"
    provenance: str = ""

    def __post_init__(self) -> None:
        if len(self.categories) != len(self.indices) or not self.categories:
            raise ValueError(f"mapping {self.name!r}: categories and index lists differ in length")
        if self.aggregation not in _AGGREGATIONS:
            raise ValueError(f"mapping {self.name!r}: aggregation must be one of {_AGGREGATIONS}")
        flat = [i for idx in self.indices for i in idx]
        if any(not 0 <= i < N_IMAGENET_CLASSES for i in flat) or len(set(flat)) != len(flat):
            raise ValueError(f"mapping {self.name!r}: class indices must be unique and in 0..999")
        if any(not idx for idx in self.indices):
            raise ValueError(f"mapping {self.name!r}: every category needs at least one class")

    @property
    def n_classes(self) -> int:
        return sum(len(idx) for idx in self.indices)

    def as_json(self) -> dict[str, list[int]]:
        return {c: list(idx) for c, idx in zip(self.categories, self.indices, strict=True)}

    def category_scores(self, probs: np.ndarray) -> np.ndarray:
        """(N, 1000) probabilities -> (N, n_categories) aggregated scores."""
        p = np.asarray(probs, dtype=np.float64)
        if p.ndim != 2 or p.shape[1] != N_IMAGENET_CLASSES:
            raise ValueError(f"probabilities must be (N, {N_IMAGENET_CLASSES}), got {p.shape}")
        cols = [p[:, list(idx)] for idx in self.indices]
        if self.aggregation == "mean":
            return np.stack([c.mean(axis=1) for c in cols], axis=1)
        if self.aggregation == "sum":
            return np.stack([c.sum(axis=1) for c in cols], axis=1)
        return np.stack([c.max(axis=1) for c in cols], axis=1)

    def decisions(self, probs: np.ndarray) -> list[str]:
        """One category name per row of (N, 1000) probabilities."""
        scores = self.category_scores(probs)
        return [self.categories[i] for i in np.argmax(scores, axis=1)]


@cache
def _load_packaged(filename: str) -> CategoryMapping:
    text = resources.files("repro.datasets").joinpath("data", filename).read_text()
    try:
        raw = json.loads(text)
        cats = raw["categories"]
        return CategoryMapping(
            name=raw["name"],
            categories=tuple(c["name"] for c in cats),
            indices=tuple(tuple(int(i) for i in c["imagenet_indices"]) for c in cats),
            aggregation=raw.get("aggregation", "mean"),
            provenance=raw.get("_provenance", {}).get("source", ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(
            f"repro/datasets/data/{filename}: malformed category mapping ({exc})"
        ) from None


#: named mappings (each a function that loads it); swap by name (e.g. a variant with sum
#: aggregation, added with ``MAPPINGS.register(name, loader)``) without touching callers
MAPPINGS: Registry[Callable[[], CategoryMapping]] = Registry("category mapping")
MAPPINGS.register("model-vs-human-16", lambda: _load_packaged("categories16.json"))
DEFAULT_MAPPING = "model-vs-human-16"


def mapping_names() -> list[str]:
    return sorted(MAPPINGS)


def get_mapping(name: str = DEFAULT_MAPPING) -> CategoryMapping:
    """The registered mapping called ``name``."""
    if name not in MAPPINGS:
        close = difflib.get_close_matches(name, list(MAPPINGS))
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownNameError(
            f"unknown category mapping {name!r} (known: {', '.join(mapping_names())}){hint}"
        )
    return MAPPINGS[name]()


def categories16() -> tuple[str, ...]:
    """The 16 category names, in decision order."""
    return get_mapping().categories

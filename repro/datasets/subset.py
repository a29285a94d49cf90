"""Datasets: a declared subset of a dataset's images, seeded and class-stratified.

A record measured on a declared subset is evidence with its own n
(``repro.store.validate.evidence_problem``), as the subset plan asks for
(``python -m repro plan --confidence``, ``repro.planner.subset_plan``). An ad-hoc part of a
dataset (a partial copy, the first images) stays not evidence.

``stratified_names``: ``size`` of the items, each class getting its share of ``size`` in
proportion to its images (the floors, then one more for the classes with the largest
remainders, ties by class order), chosen within each class by a permutation of
``numpy.random.default_rng([seed, class label])``; returned in the dataset's order. The same
names are taken from every condition of a corruption set (the same images, corrupted). The
record's provenance holds the size, seed, stratification and the sha256 of the sorted names
(``provenance``), so anyone can check which images were used.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repro.base.errors import DataError

STRATIFICATION = "class"


@dataclass(frozen=True)
class Subset:
    """A declared, class-stratified subset: ``size`` images (per condition), drawn with ``seed``."""

    size: int
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise ValueError(f"a subset needs a positive number of images, got {self.size!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"a subset's seed must be a non-negative integer, got {self.seed!r}")


def stratified_names(items: Sequence[Any], subset: Subset, where: str = "") -> list[str]:
    """The names of the subset's items, in order.

    ``items``: objects with ``name`` and ``label``."""
    n = len(items)
    if subset.size > n:
        raise DataError(
            f"{where or 'dataset'}: a subset of {subset.size:,} images, but it holds {n:,}"
        )
    labels = np.array([int(it.label) for it in items])
    classes, counts = np.unique(labels, return_counts=True)
    share = subset.size * counts / n
    take = np.floor(share).astype(int)
    extra = subset.size - int(take.sum())
    if extra:
        order = np.lexsort((classes, -(share - take)))  # largest remainder first, then class order
        take[order[:extra]] += 1
    chosen: set[int] = set()
    for c, k in zip(classes, take, strict=True):
        idx = np.flatnonzero(labels == c)
        pick = np.random.default_rng([subset.seed, int(c)]).permutation(idx.size)[:k]
        chosen.update(int(i) for i in idx[pick])
    return [items[i].name for i in sorted(chosen)]


def provenance(subset: Subset, names: Sequence[str]) -> dict[str, Any]:
    """What a record says about the subset it was measured on."""
    digest = hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()
    return {
        "size": subset.size,
        "seed": subset.seed,
        "stratification": STRATIFICATION,
        "digest": digest,
    }


def is_declared(value: Any) -> bool:
    """Whether a record's ``dataset_subset`` is a declared subset.

    A declared subset has a size, seed, stratification and digest."""
    if not isinstance(value, dict):
        return False
    size, seed, strat, digest = (value.get(k) for k in ("size", "seed", "stratification", "digest"))
    return (
        isinstance(size, int)
        and not isinstance(size, bool)
        and size > 0
        and isinstance(seed, int)
        and not isinstance(seed, bool)
        and seed >= 0
        and strat == STRATIFICATION
        and isinstance(digest, str)
        and len(digest) == 64
    )

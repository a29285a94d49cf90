"""Placement: a reference row a study shows beside the placed models.

A reference is, e.g., human observers or a published reference model, from the study's
``[placement] references`` hook."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reference:
    """A reference row's ``values`` and their 95% ``intervals`` by placement column.

    ``note`` says where they come from (e.g. "scored here from model-vs-human's per-trial
    CSVs")."""

    label: str
    values: Mapping[str, float]
    intervals: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    counts: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # (k, n) behind a rate
    note: str = ""

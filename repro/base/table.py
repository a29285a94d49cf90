"""The per-model table (model -> column -> value) every statistic reads: a study's table.

Columns are the study's column names (e.g. benchmark.csv's ``top1_acc/imagenet``), so the same
table can come from the published file or from our measurement store
(``repro.store.export.wide_table``). Every column records where its values came from
(``published``, ``store``, ...), so a claim can say whether it rests on measured numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from repro.base.errors import DataError


@dataclass(frozen=True)
class ModelTable:
    """Per-model values. ``origin`` names the file (or store) for error messages."""

    values: Mapping[str, Mapping[str, float]]
    origin: str = "<table>"
    sources: Mapping[str, str] = field(default_factory=dict)  # column -> source label
    default_source: str = "published"

    @property
    def models(self) -> list[str]:
        return list(self.values)

    def has(self, model: str, column: str) -> bool:
        return column in self.values.get(model, {})

    def source_of(self, column: str) -> str:
        return self.sources.get(column, self.default_source)

    def value(self, model: str, column: str) -> float:
        row = self.values.get(model)
        if row is None:
            raise DataError(f"{self.origin}: no row for model {model!r}")
        if column not in row:
            raise DataError(
                f"{self.origin}: column {column!r} missing (needed for model {model!r})"
            )
        v = row[column]
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise DataError(
                f"{self.origin}: column {column!r} is empty for model {model!r} (expected a number)"
            )
        return float(v)

    def column(self, column: str, models: Iterable[str]) -> np.ndarray:
        """Values of ``column`` for ``models``, in order.

        A DataError names the model and column if absent (or empty)."""
        models = list(models)
        try:  # the common case in one go; anything amiss is named by ``value`` below
            out = np.array([self.values[m][column] for m in models], dtype=float)
        except (KeyError, TypeError, ValueError):
            out = None
        if out is None or out.shape != (len(models),) or np.isnan(out).any():
            return np.array([self.value(m, column) for m in models], dtype=float)
        return out

    def overlay(self, other: Mapping[str, Mapping[str, float]], label: str) -> ModelTable:
        """A copy with ``other``'s values replacing ours.

        Replaced columns are labelled ``label``."""
        merged = {m: dict(row) for m, row in self.values.items()}
        sources = dict(self.sources)
        for model, row in other.items():
            target = merged.setdefault(model, {})
            for col, v in row.items():
                if v is None or (isinstance(v, float) and math.isnan(v)):
                    continue
                target[col] = float(v)
                sources[col] = label
        return ModelTable(
            merged,
            origin=f"{self.origin} + {label}",
            sources=sources,
            default_source=self.default_source,
        )

    def without_models(self, models: Iterable[str]) -> ModelTable:
        """A copy without the rows of ``models``."""
        drop = set(models)
        return ModelTable(
            {m: row for m, row in self.values.items() if m not in drop},
            origin=f"{self.origin} (without {len(drop)} model(s))" if drop else self.origin,
            sources=dict(self.sources),
            default_source=self.default_source,
        )

    def perturbed(self, model: str, column: str, delta: float) -> ModelTable:
        """A copy with one value shifted by ``delta`` (to prove that regression checks gate)."""
        merged = {m: dict(row) for m, row in self.values.items()}
        merged[model][column] = self.value(model, column) + delta
        return ModelTable(
            merged,
            origin=f"{self.origin} (perturbed {model}/{column})",
            sources=dict(self.sources),
            default_source=self.default_source,
        )

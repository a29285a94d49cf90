"""Analysis: a statistic on many redrawn tables at once.

The redrawn tables are the replication of a claim (``repro.diagnostics.replication``).

``Redraws`` holds ``B`` redrawn versions of a per-model table: for each redrawn column a
``(B, models)`` array, and the table itself for the columns that are not redrawn (they read the
same in every redraw). A statistic that can compute itself on all redraws in one vectorised go
offers it as ``StatisticResult.replicate``, a function of ``(Redraws, correct=True)`` returning
``Replicates``: per redraw the headline value, its p where it has one, and the details its
tolerance reads (as the statistic's own result would hold them). With ``correct``, each number
the verdict reads is moved by its bootstrap bias (``debiased``) and what derives from it (a p,
a ranking) is recomputed from the moved numbers; without, the replicates are what recomputing
the statistic on each redrawn table gives (a test compares). A statistic without ``replicate``
is recomputed on each redrawn table instead (much slower, and only its headline value is
corrected).

Also here the vectorised building blocks: Spearman's rho and scipy's p of many pairs of rows
(``spearman_rows``) and of many correlation matrices (``spearman_matrices``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from scipy import stats

from repro.analysis.correlation import spearman_p
from repro.base.table import ModelTable


@dataclass(frozen=True, eq=False)
class Redraws:
    """``resamples`` redrawn versions of ``table``.

    ``columns[c][b, i]`` is model ``models[i]``'s value of column ``c`` in redraw ``b``; a column
    not in ``columns`` is the table's in every redraw.
    """

    table: ModelTable
    models: tuple[str, ...]
    columns: Mapping[str, np.ndarray]
    resamples: int
    _fixed: dict[tuple[str, tuple[str, ...]], np.ndarray] = field(default_factory=dict, repr=False)

    @cached_property
    def index(self) -> dict[str, int]:
        return {m: i for i, m in enumerate(self.models)}

    def redrawn(self, column: str) -> np.ndarray:
        """The ``(resamples, models)`` values of a redrawn column."""
        a = self.columns[column]
        if a.shape != (self.resamples, len(self.models)):
            raise ValueError(
                f"redrawn column {column!r} has shape {a.shape}, expected "
                f"({self.resamples}, {len(self.models)})"
            )
        return a

    def column(self, column: str, models: Sequence[str]) -> np.ndarray:
        """``(resamples, len(models))`` values of ``column``.

        Where not redrawn, the table's values repeated: a read-only view with stride 0 along the
        redraws.
        """
        if column in self.columns:
            index = self.index
            return self.redrawn(column)[:, [index[m] for m in models]]
        key = (column, tuple(models))
        if key not in self._fixed:
            self._fixed[key] = self.table.column(column, models)
        return np.broadcast_to(self._fixed[key], (self.resamples, len(models)))

    def mean_of(self, columns: Iterable[str], models: Sequence[str]) -> np.ndarray:
        """The unweighted mean of ``columns`` per model and redraw (a category, a bias).

        A stride-0 view when none of them is redrawn.
        """
        cols = list(columns)
        if not any(c in self.columns for c in cols):
            fixed = np.mean([self.column(c, models)[0] for c in cols], axis=0)
            return np.broadcast_to(fixed, (self.resamples, len(models)))
        return np.mean([self.column(c, models) for c in cols], axis=0)

    def table_of(self, b: int) -> ModelTable:
        """Redraw ``b`` as a plain table (for recomputing a statistic that has no ``replicate``)."""
        index = self.index
        values = {m: dict(row) for m, row in self.table.values.items()}
        for c in self.columns:
            a = self.redrawn(c)
            for m, i in index.items():
                if m in values and np.isfinite(a[b, i]):
                    values[m][c] = float(a[b, i])
        return ModelTable(
            values,
            origin=f"{self.table.origin} (redraw {b})",
            sources=dict(self.table.sources),
            default_source=self.table.default_source,
        )


@dataclass(frozen=True)
class Replicates:
    """A statistic on every redraw: its value, p and details per redraw.

    ``value[b]``, ``p[b]`` (None: the statistic has no p) and ``details[name][b]``, each as the
    statistic's own result on redraw ``b`` would give it. ``details`` holds the details the
    statistic can give; a tolerance reading another one is judged by recomputing instead.
    """

    value: np.ndarray
    p: np.ndarray | None = None
    details: dict[str, Sequence[Any]] = field(default_factory=dict)


def debiased(samples: np.ndarray, observed: float | np.ndarray) -> np.ndarray:
    """``samples`` (redraws along the first axis) moved so that their mean is ``observed``.

    This removes the bootstrap's bias. Redrawing around values that are themselves noisy adds the
    noise twice (a correlation of the redrawn tables is attenuated once more than the published one,
    the maximum of the redrawn values lies higher): the mean of the redraws minus the published
    statistic estimates that bias, and a new sample of images would carry only the one dose the
    published statistic has. NaN redraws stay NaN and do not enter the mean.
    """
    samples = np.asarray(samples, dtype=float)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(samples)
        mean = np.where(ok, samples, 0.0).sum(axis=0) / np.maximum(ok.sum(axis=0), 1)
    return samples - (mean - np.asarray(observed, dtype=float))


def _centred_ranks(a: np.ndarray) -> np.ndarray:
    """Midranks of each row minus their mean.

    A stride-0 array (the same row repeated) is ranked once.
    """
    if a.strides[0] == 0:
        r = stats.rankdata(a[0])
        return np.broadcast_to(r - r.mean(), a.shape)
    r = stats.rankdata(a, axis=1)
    return r - r.mean(axis=1, keepdims=True)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and scipy's two-sided p of every pair of rows of two ``(B, n)`` arrays.

    Midranks for ties, as ``scipy.stats.spearmanr``; NaN where a row is constant.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 2 or x.shape[1] < 3:
        raise ValueError(
            f"spearman_rows needs two (B, n >= 3) arrays of one shape, got {x.shape} and {y.shape}"
        )
    rx, ry = _centred_ranks(x), _centred_ranks(y)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(den > 0, (rx * ry).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)
    rho = np.clip(rho, -1.0, 1.0)
    return rho, np.where(np.isfinite(rho), spearman_p(rho, x.shape[1]), np.nan)


def spearman_matrices(data: np.ndarray) -> np.ndarray:
    """``(B, k, k)`` Spearman matrices of ``(B, n, k)`` data (models x variables per redraw)."""
    ranks = stats.rankdata(data, axis=1)
    z = ranks - ranks.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = z / np.sqrt((z * z).sum(axis=1, keepdims=True))
    return np.einsum("bni,bnj->bij", z, z)

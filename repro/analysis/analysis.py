"""Analysis: the correlation statistics of an analysis definition on a per-model table.

Population, groups, bias x category cells with Holm and Benjamini-Hochberg adjusted p-values over
the whole table, bias x bias, the benchmark correlation matrix, the per-model table.

``Analysis`` binds an ``AnalysisSpec`` (what to compute, as data) to a ``ModelTable`` (the
per-model numbers) and the model categories (the study's categories). Results are cached on the
instance, so the claims, the CLI and the report share one computation.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from repro.analysis.correlation import (
    Correlation,
    bootstrap_spearman_matrices,
    describe_interval,
    percentile_interval,
    spearman,
    spearman_matrix,
)
from repro.analysis.multiple import METHODS, adjust
from repro.analysis.spec import AnalysisSpec
from repro.base.errors import ConfigError
from repro.base.table import ModelTable


@dataclass(frozen=True)
class Cell:
    """One correlation of a bias with a category within a group."""

    bias: str
    category: str
    group: str
    corr: Correlation

    def as_json(self) -> dict[str, object]:
        return {
            "bias": self.bias,
            "category": self.category,
            "group": self.group,
            "n": self.corr.n,
            "rho": self.corr.rho,
            "p": self.corr.p,
        }


@dataclass(frozen=True)
class BenchmarkCorrelation:
    benchmarks: list[str]
    matrix: np.ndarray
    row_mean_including_diagonal: np.ndarray
    row_mean_excluding_diagonal: np.ndarray
    interval_including_diagonal: list[tuple[float, float]]
    interval_excluding_diagonal: list[tuple[float, float]]
    n: int
    method: str

    def as_json(self) -> dict[str, object]:
        return {
            "benchmarks": list(self.benchmarks),
            "matrix": [[float(v) for v in row] for row in self.matrix],
            "row_mean_including_diagonal": [float(v) for v in self.row_mean_including_diagonal],
            "row_mean_excluding_diagonal": [float(v) for v in self.row_mean_excluding_diagonal],
        }


class Analysis:
    """The analysis of one table under one definition."""

    def __init__(
        self, spec: AnalysisSpec, table: ModelTable, model_categories: dict[str, list[str]]
    ):
        self.spec = spec
        self.table = table
        self.model_categories = model_categories
        self._cells: dict[tuple[str, str, str], Cell] = {}

    # -- who -------------------------------------------------------------------------------
    @cached_property
    def population(self) -> list[str]:
        candidates = [m for ms in self.model_categories.values() for m in ms]
        models = self.spec.population.select(
            candidates, self.model_categories, f"{self.spec.origin}: [population]"
        )
        missing = [m for m in models if m not in self.table.values]
        if missing:
            raise ConfigError(
                f"{self.spec.origin}: population names model(s) without a row in "
                f"{self.table.origin}: {', '.join(missing)}"
            )
        return models

    @cached_property
    def groups(self) -> dict[str, list[str]]:
        out = {}
        for gid, g in self.spec.groups.items():
            models = g.selector.select(
                self.population, self.model_categories, f"{self.spec.origin}: [groups.{gid}]"
            )
            outside = [m for m in models if m not in self.population]
            if outside:
                raise ConfigError(
                    f"{self.spec.origin}: [groups.{gid}] names model(s) outside the population: "
                    f"{', '.join(outside)}"
                )
            out[gid] = models
        return out

    # -- what ------------------------------------------------------------------------------
    def _derived(self, kind: str, qid: str):
        table = getattr(self.spec, kind)
        if qid not in table:
            what = {"categories": "category", "biases": "bias"}[kind]
            raise ConfigError(
                f"{self.spec.origin}: unknown {what} {qid!r} (known: {', '.join(table)})"
            )
        return table[qid]

    def quantity(self, kind: str, qid: str, models: list[str] | None = None) -> np.ndarray:
        """Per-model values of a bias (``kind="biases"``) or category (``"categories"``)."""
        d = self._derived(kind, qid)
        models = self.population if models is None else models
        return np.mean([self.table.column(c, models) for c in d.columns], axis=0)

    def bias(self, bid: str, models: list[str] | None = None) -> np.ndarray:
        return self.quantity("biases", bid, models)

    def category(self, cid: str, models: list[str] | None = None) -> np.ndarray:
        return self.quantity("categories", cid, models)

    def columns_of(self, kind: str, qid: str) -> tuple[str, ...]:
        return self._derived(kind, qid).columns

    def sources_of(self, *columns: str) -> dict[str, str]:
        return {c: self.table.source_of(c) for c in columns}

    def _boot(self) -> dict[str, object]:
        return {
            "resamples": self.spec.resamples,
            "seed": self.spec.seed,
            "confidence": self.spec.confidence,
        }

    @property
    def interval_method(self) -> str:
        return describe_interval(self.spec.resamples, self.spec.seed, self.spec.confidence)

    # -- statistics ------------------------------------------------------------------------
    def cell(self, bias: str, category: str, group: str) -> Cell:
        key = (bias, category, group)
        if key not in self._cells:
            if group not in self.groups:
                raise ConfigError(
                    f"{self.spec.origin}: unknown group {group!r} (known: {', '.join(self.groups)})"
                )
            models = self.groups[group]
            self.require_models(models, f"[groups.{group}]", 3, "a Spearman correlation")
            corr = spearman(
                self.bias(bias, models), self.category(category, models), **self._boot()
            )  # type: ignore[arg-type]
            self._cells[key] = Cell(bias, category, group, corr)
        return self._cells[key]

    def require_models(self, models: list[str], where: str, least: int, what: str) -> None:
        """Raise a ConfigError when the selector selects too few models.

        The error names the definition file and the selector.
        """
        if len(models) < least:
            raise ConfigError(
                f"{self.spec.origin}: {where} selects {len(models)} model(s)"
                f"{' (' + ', '.join(models) + ')' if models else ''}; {what} needs at least {least}"
            )

    def masked(self, cell: Cell) -> float:
        """The paper's display of a cell: rho where p < alpha, 0 where not.

        NaN where the correlation is undefined (a constant column): never shown as a
        non-significant 0.
        """
        if np.isnan(cell.corr.rho) or np.isnan(cell.corr.p):
            return float("nan")
        return cell.corr.rho if cell.corr.p < self.spec.alpha else 0.0

    def bias_vs_category(self) -> list[Cell]:
        return [
            self.cell(b, c, g)
            for b in self.spec.biases
            for c in self.spec.categories
            for g in self.spec.groups
        ]

    @cached_property
    def adjusted_p(self) -> dict[tuple[str, str, str], dict[str, float]]:
        """Every cell's p adjusted over the family of all bias x category cells of every group.

        {(bias, category, group): {"holm": p, "bh": p}}; the family is the paper's heat map. An
        undefined cell (NaN p: a constant column) is no test: it stays NaN and the family is the
        defined cells.
        """
        cells = self.bias_vs_category()
        defined = [i for i, c in enumerate(cells) if not np.isnan(c.corr.p)]
        adjusted = {
            m: dict(zip(defined, adjust([cells[i].corr.p for i in defined], m), strict=True))
            for m in METHODS
        }
        return {
            (c.bias, c.category, c.group): {m: adjusted[m].get(i, float("nan")) for m in METHODS}
            for i, c in enumerate(cells)
        }

    def bias_vs_category_rows(self) -> list[dict[str, object]]:
        """The bias x category cells as rows, with ``p_holm`` and ``p_bh``.

        Both p-values are adjusted over the table.
        """
        adj = self.adjusted_p
        return [
            c.as_json() | {f"p_{m}": adj[(c.bias, c.category, c.group)][m] for m in METHODS}
            for c in self.bias_vs_category()
        ]

    def per_model_rows(self) -> list[dict[str, object]]:
        """One row per population model, as flat records to sort by any field.

        Each row: its model category, the groups it belongs to, every bias and every category.
        """
        models = self.population
        category_of = {m: c for c, ms in self.model_categories.items() for m in ms}
        biases = {b: self.bias(b) for b in self.spec.biases}  # over the population, in order
        cats = {c: self.category(c) for c in self.spec.categories}
        rows: list[dict[str, object]] = []
        for i, m in enumerate(models):
            row: dict[str, object] = {
                "model": m,
                "model_category": category_of.get(m),
                "groups": [g for g, ms in self.groups.items() if m in ms],
            }
            row |= {b: float(v[i]) for b, v in biases.items()}
            row |= {c: float(v[i]) for c, v in cats.items()}
            rows.append(row)
        return rows

    @cached_property
    def _bias_pairs(self) -> list[tuple[str, str, Correlation]]:
        ids = list(self.spec.biases)
        models = self.population
        self.require_models(models, "[population]", 3, "a Spearman correlation")
        vals = {b: self.bias(b, models) for b in ids}
        return [
            (a, b, spearman(vals[a], vals[b], **self._boot()))  # type: ignore[arg-type]
            for i, a in enumerate(ids)
            for b in ids[i + 1 :]
        ]

    def bias_vs_bias(self) -> list[tuple[str, str, Correlation]]:
        """Spearman of every pair of biases over the population."""
        return self._bias_pairs

    @cached_property
    def benchmark_correlation(self) -> BenchmarkCorrelation:
        ids = list(self.spec.benchmarks)
        models = self.population
        self.require_models(models, "[population]", 3, "a Spearman correlation")
        data = np.column_stack([self.table.column(self.spec.benchmarks[b], models) for b in ids])
        k = len(ids)
        m = spearman_matrix(data)
        incl = m.mean(axis=1)
        excl = (m.sum(axis=1) - 1.0) / (k - 1)
        conf = self.spec.confidence
        if self.spec.resamples == 0:  # no intervals asked for (see correlation.spearman)
            none = [(float("nan"), float("nan"))] * k
            return BenchmarkCorrelation(
                ids, m, incl, excl, none, none, len(models), self.interval_method
            )
        boots = bootstrap_spearman_matrices(data, self.spec.resamples, self.spec.seed)
        b_incl = boots.mean(axis=2)
        b_excl = (boots.sum(axis=2) - 1.0) / (k - 1)
        return BenchmarkCorrelation(
            ids,
            m,
            incl,
            excl,
            [percentile_interval(b_incl[:, i], conf) for i in range(k)],
            [percentile_interval(b_excl[:, i], conf) for i in range(k)],
            len(models),
            self.interval_method,
        )

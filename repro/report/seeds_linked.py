"""The two seeds linked: Gavrikov et al.'s biases set against ImageNet-X and Subramanian et al.

Gavrikov et al.'s per-model biases against ImageNet-X's per-factor error ratios of the same
checkpoints, and Subramanian et al.'s shape score against Gavrikov's shape bias.

Exploratory: neither paper states such a relation, so no verdict is drawn. Models are linked only
through the identity maps the Gavrikov study declares for its independent sources
(``independent/imagenetx.toml``: ImageNet-X's factor-table models ``<set>/<name>``;
``independent/subramanian.toml``: Subramanian et al.'s networks); ``not_same`` rows are never
linked. A study model in both factor-table sets takes the row of the better identity level, then
the set first in ``SETS``.

1. Per (bias, factor): Spearman's rho of the bias (the analysis definition's ``biases``, each the
   mean of its columns) against the factor's error ratio ``(1 - acc_f) / (1 - acc)`` (top-1 class
   correctness, ImageNet-X's definition), n the models with both values, p scipy's; the same with
   the model's clean ImageNet top-1 held fixed (partial rank correlation,
   ``repro.analysis.partial_rank``). Benjamini-Hochberg q over each table's family (all bias x
   factor cells of that table).
2. Shape score vs shape bias. Over the 1,200 cue-conflict trials that both count (1,280 images less
   the 80 whose shape and texture classes coincide), with S shape and T texture decisions,
   Subramanian's score is s = S / 1200 and Gavrikov's bias b = S / (S + T), so
   s = b (S + T) / 1200. Gavrikov's table prints b in full precision: its reduced fraction p/q
   (denominator <= 1200) gives S = k p for the k that fits Gavrikov's cue-conflict accuracy
   (shape-correct over all 1,280 images, so S lies within 80 below it); then S / 1200 is the score
   Gavrikov's decisions predict, compared with Subramanian's published one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from repro.analysis.multiple import benjamini_hochberg
from repro.analysis.partial_rank import partial_spearman
from repro.base.errors import ConfigError, DataError
from repro.scoring.imagenet_x import FACTORS

STUDY = "gavrikov2024"
FACTOR_STUDY = "imagenetx"
SCORE_STUDY = "subramanian2023"
FACTOR_SOURCE = "imagenetx"  # the declarations (of STUDY) whose identity rows link the models
SCORE_SOURCE = "subramanian"
SETS = ("modelvshuman", "imagenet_testbed")  # the factor tables used, in order of preference
LEVELS = {"certain": 0, "probable": 1}
CORRECTNESS = "class"
ACCURACY = "top1_acc/imagenet"
SHAPE_BIAS = "shape-bias"
CUE_CONFLICT = "top1_acc/cue-conflict"  # percent of the 1,280 images decided by shape
TRIALS, SAME_CLASS = 1200, 80
MIN_N = 5  # fewer complete models: the cell is left empty


def factor_table_path(model_set: str) -> str:
    return f"imagenetx/factor_accuracies/{model_set}/{CORRECTNESS}/accuracies_per_factor.csv"


@dataclass(frozen=True)
class Link:
    study_model: str
    source_model: str
    level: str


def links(
    decl: Any,
    study_models: Sequence[str],
    available: Mapping[str, Any],
    prefixes: Sequence[str] | None = None,
) -> dict[str, Link]:
    """Study model -> its linked source model, from the identity rows of ``decl``.

    ``decl``: a ``repro.published.independent.Declaration``. ``prefixes``: only source models
    ``<prefix>/<name>`` (a factor-table set), in order of preference. A row naming a study model
    the study's table lacks, or a source model ``available`` lacks: one-line error."""
    known = set(study_models)
    chosen: dict[str, tuple[tuple[int, int], Link]] = {}
    for n, row in enumerate(decl.identity, start=1):
        where = f"{decl.origin}: [[identity]] #{n}"
        if row.study_model not in known:
            raise ConfigError(
                f"{where}: study_model {row.study_model!r} is not a model of the study's table"
            )
        if row.level == "not_same":
            continue
        order = 0
        if prefixes is not None:
            prefix = row.source_model.split("/", 1)[0]
            if prefix not in prefixes:
                continue
            order = list(prefixes).index(prefix)
        if row.source_model not in available:
            what = (
                f"ImageNet-X's factor table {factor_table_path(prefix)}"
                if prefixes is not None
                else "the source's data"
            )
            raise DataError(
                f"{where}: source_model {row.source_model!r} has no row in {what} "
                "(expected a model of that table)"
            )
        key = (LEVELS[row.level], order)
        link = Link(row.study_model, row.source_model, row.level)
        if row.study_model not in chosen or key < chosen[row.study_model][0]:
            chosen[row.study_model] = (key, link)
    return {m: link for m, (_, link) in sorted(chosen.items())}


def error_ratios(row: Mapping[str, float], source_model: str = "") -> dict[str, float]:
    """ImageNet-X's error ratio per factor of one factor-table row.

    NaN where a factor has no images; the row's average accuracy must be there."""
    avg = row.get(f"{CORRECTNESS}/average")
    if avg is None or not math.isfinite(avg):
        raise DataError(
            f"ImageNet-X factor table: {source_model or 'a model'}: no {CORRECTNESS}/average "
            "accuracy (expected a number in [0, 1])"
        )
    return {f: (1.0 - row.get(f"{CORRECTNESS}/{f}", math.nan)) / (1.0 - avg) for f in FACTORS}


def bias_values(biases: Mapping[str, Any], row: Mapping[str, float]) -> dict[str, float]:
    """Each bias of the analysis definition: the mean of its columns (NaN if one is missing)."""
    return {b: float(np.mean([row.get(c, math.nan) for c in d.columns])) for b, d in biases.items()}


@dataclass(frozen=True)
class Cell:
    bias: str
    factor: str
    n: int
    rho: float
    p: float
    q: float
    partial_n: int
    partial_rho: float
    partial_p: float
    partial_q: float


def _adjust(p: Sequence[float]) -> list[float]:
    """BH q over the finite p-values (NaN stays NaN)."""
    idx = [i for i, v in enumerate(p) if math.isfinite(v)]
    q = [math.nan] * len(p)
    for i, v in zip(idx, benjamini_hochberg([p[i] for i in idx]), strict=True):
        q[i] = v
    return q


def correlate(
    bias: Mapping[str, Mapping[str, float]],
    ratios: Mapping[str, Mapping[str, float]],
    accuracy: Mapping[str, float],
    bias_names: Sequence[str],
    factors: Sequence[str] = FACTORS,
) -> list[Cell]:
    """One cell per (bias, factor) over the models of ``ratios``; BH over each table's cells."""
    from scipy import stats

    models = sorted(ratios)
    raw: list[tuple[str, str, int, float, float, int, float, float]] = []
    for b in bias_names:
        for f in factors:
            x = np.array([bias[m][b] for m in models])
            y = np.array([ratios[m][f] for m in models])
            z = np.array([accuracy[m] for m in models])
            ok = np.isfinite(x) & np.isfinite(y)
            n = int(ok.sum())
            rho = p = prho = pp = math.nan
            pn = int((ok & np.isfinite(z)).sum())
            if n >= MIN_N:
                res = stats.spearmanr(x[ok], y[ok])
                rho, p = float(res.statistic), float(res.pvalue)
            if pn >= MIN_N:
                prho, pp, pn = partial_spearman(x, y, z)
            raw.append((b, f, n, rho, p, pn, prho, pp))
    q = _adjust([r[4] for r in raw])
    pq = _adjust([r[7] for r in raw])
    return [
        Cell(b, f, n, rho, p, qi, pn, prho, pp, pqi)
        for (b, f, n, rho, p, pn, prho, pp), qi, pqi in zip(raw, q, pq, strict=True)
    ]


@dataclass(frozen=True)
class ShapeRow:
    study_model: str
    network: str
    level: str
    shape_bias: float  # Gavrikov: S / (S + T)
    score: float  # Subramanian: S / 1200
    shape_decisions: int | None  # Gavrikov's S, recovered (None: not uniquely)
    cue_decisions: int | None  # Gavrikov's S + T, recovered
    predicted_score: float | None  # Gavrikov's S / 1200
    published_decisions: int  # Subramanian's S


def recover_counts(shape_bias: float, cue_conflict_percent: float) -> tuple[int, int] | None:
    """Gavrikov's (S, S + T) from its printed shape bias and cue-conflict accuracy.

    None when not unique (see the module docstring)."""
    if not (math.isfinite(shape_bias) and math.isfinite(cue_conflict_percent)) or shape_bias <= 0:
        return None
    frac = Fraction(shape_bias).limit_denominator(TRIALS)
    if abs(float(frac) - shape_bias) > 1e-12:
        return None
    upper = round(cue_conflict_percent / 100 * (TRIALS + SAME_CLASS))
    fits = [
        k
        for k in range(1, TRIALS // frac.denominator + 1)
        if upper - SAME_CLASS <= k * frac.numerator <= upper
    ]
    if len(fits) != 1:
        return None
    return fits[0] * frac.numerator, fits[0] * frac.denominator


def shape_rows(
    study_values: Mapping[str, Mapping[str, float]],
    score_values: Mapping[str, Mapping[str, float]],
    matched: Mapping[str, Link],
) -> list[ShapeRow]:
    out = []
    for model, link in matched.items():
        g, s = study_values[model], score_values[link.source_model]
        b = g.get(SHAPE_BIAS, math.nan)
        trials = s.get("shape_trials", math.nan)
        if trials != TRIALS:
            raise DataError(
                f"Subramanian et al. network {link.source_model!r}: shape_trials = {trials} "
                f"(expected {TRIALS})"
            )
        if not math.isfinite(b):
            continue
        counts = recover_counts(b, g.get(CUE_CONFLICT, math.nan))
        out.append(
            ShapeRow(
                model,
                link.source_model,
                link.level,
                b,
                s["shape_bias"],
                counts[0] if counts else None,
                counts[1] if counts else None,
                counts[0] / TRIALS if counts else None,
                round(s["shape_decisions"]),
            )
        )
    return out


def shape_summary(rows: Sequence[ShapeRow]) -> dict[str, Any]:
    from scipy import stats

    n = len(rows)
    out: dict[str, Any] = {"n": n}
    if n >= 3:
        res = stats.spearmanr([r.shape_bias for r in rows], [r.score for r in rows])
        out.update(rho=float(res.statistic), p=float(res.pvalue))
    recovered = [r for r in rows if r.shape_decisions is not None]
    diffs = [r.shape_decisions - r.published_decisions for r in recovered]
    out.update(
        recovered=len(recovered),
        exact=sum(d == 0 for d in diffs),
        median_abs_difference=float(np.median(np.abs(diffs))) if diffs else None,
        max_abs_difference=int(max(map(abs, diffs))) if diffs else None,
        score_below_bias=sum(r.score <= r.shape_bias for r in rows),
    )
    return out


@dataclass
class SeedsLinked:
    models: dict[str, Link]
    bias_labels: dict[str, str]
    cells: list[Cell]
    shape: list[ShapeRow]
    shape_summary: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "label": "exploratory (no published counterpart)",
            "models": [asdict(m) for m in self.models.values()],
            "family": {"cells": len(self.cells), "adjustment": "Benjamini-Hochberg, per table"},
            "cells": [asdict(c) for c in self.cells],
            "shape_score_vs_shape_bias": {
                "formula": "score = S/1200 = shape_bias x (S+T)/1200",
                "rows": [asdict(r) for r in self.shape],
                "summary": self.shape_summary,
            },
        }


def _declaration(study: Any, name: str) -> Any:
    from repro.published.independent import study_declarations

    for d in study_declarations(study, user=False):
        if d.name == name:
            return d
    raise ConfigError(
        f"{study.origin}: [independent] sources: no declaration named {name!r} "
        "(the seeds-linked analysis reads its identity rows)"
    )


def seeds_linked(data_dir: str | os.PathLike[str] | None = None) -> SeedsLinked:
    """The analysis on the published data of the three studies (sha256-verified)."""
    from repro.base.study import get_study
    from repro.claims.context import published_context

    study = get_study(STUDY)
    ctx = published_context(study, data_dir)
    factors = published_context(get_study(FACTOR_STUDY), data_dir).table.values
    scores = published_context(get_study(SCORE_STUDY), data_dir).table.values
    gv = ctx.table.values
    matched = links(_declaration(study, FACTOR_SOURCE), list(gv), factors, SETS)
    biases = ctx.spec.biases
    cells = correlate(
        {m: bias_values(biases, gv[m]) for m in matched},
        {m: error_ratios(factors[k.source_model], k.source_model) for m, k in matched.items()},
        {m: gv[m].get(ACCURACY, math.nan) for m in matched},
        list(biases),
    )
    shape_links = links(_declaration(study, SCORE_SOURCE), list(gv), scores)
    rows = shape_rows(gv, scores, shape_links)
    return SeedsLinked(
        matched, {b: d.label for b, d in biases.items()}, cells, rows, shape_summary(rows)
    )

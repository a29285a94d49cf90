"""ImageNet-X: statistics for its claims, from the published per-factor accuracy tables.

The study: Idrissi et al., "ImageNet-X: Understanding Model Mistakes with Factor of Variation
Annotations", ICLR 2023. The tables
(``imagenetx/factor_accuracies/<set>/class/accuracies_per_factor.csv``, top-factor annotations,
class-level correctness) are read through the context's table
(``repro.studies.imagenetx.published``: rows ``<set>/<model>``, columns ``<correctness>/<factor>``).

Each claim statistic takes ``(context, **params)`` and returns a ``StatisticResult``:

- ``failure_mode_concordance``: Kendall's W of the factors' error-ratio ranks across models
  (tie-corrected; chi-square p-value; 95% percentile bootstrap interval over models) and the
  mean pairwise Spearman rho between models (= (m W - 1) / (m - 1) without ties; computed
  exactly here, with its own bootstrap interval).
- ``hardest_factor_share``: the factor most often among a model's ``top`` highest error
  ratios and the share of models for which it is (Wilson interval; one-sided binomial p of
  share > 1/2).
- ``augmentation_trend``: the monotone trend of one factor's error ratio over one training
  sweep's augmentation strength: Spearman rho between strength and error ratio over the
  sweep's models (scipy p-value, bootstrap interval).

``spillover_table`` gives the same trend for every factor and every sweep (Holm-adjusted
p-values, ``repro.analysis.multiple.holm``), for the report.

Each statistic also offers its exact leave-one-out (``StatisticResult.leave_one_out``: the
statistic without each model of its table, in closed form, for the robustness of the claim over
335 and 1,272 models; ``repro.diagnostics.robustness``), and skips its bootstrap when the context
asks for no intervals (``context.intervals``).

Augmentation strength is parsed from the model name (``STRENGTH``): ``crop<s>`` is the
RandomResizedCrop minimum area scale in percent, so crop strength = 100 - s (crop100 = no
cropping; the torchvision default crop8 = 92); ``color<c>`` the colour-jitter strength c;
``smoothing<b>`` the Gaussian-blur strength b. The ``colorjitter_crop`` and
``adaptive_colorjitter`` sets hold one strength each (seeds only): no trend is defined there.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from scipy import stats

from repro.analysis.clustered import spearman_resampler
from repro.analysis.correlation import spearman, spearman_leave_one_out
from repro.analysis.multiple import holm
from repro.analysis.result import LeaveOneOut, StatisticResult
from repro.base.errors import ConfigError, DataError
from repro.base.stats import Count
from repro.scoring.imagenet_x import FACTORS, error_ratio_table

SWEEPS = ("crop", "colorjitter", "gaussian_blur", "colorjitter_crop", "adaptive_colorjitter")

# sweep -> (regex on the model name, strength from the parsed number)
STRENGTH: dict[str, tuple[str, Any]] = {
    "crop": (r"_crop([0-9.]+)_", lambda v: 100.0 - v),
    "colorjitter": (r"_color([0-9.]+)(?:_|$)", lambda v: v),
    "gaussian_blur": (r"_smoothing([0-9.]+)(?:_|$)", lambda v: v),
    "colorjitter_crop": (r"_color([0-9.]+)(?:_|$)", lambda v: v),
    "adaptive_colorjitter": (r"_smoothing([0-9.]+)(?:_|$)", lambda v: v),
}
STRENGTH_MEANING = {
    "crop": "100 - RandomResizedCrop minimum scale (%) from 'crop<s>'",
    "colorjitter": "colour-jitter strength from 'color<c>'",
    "gaussian_blur": "Gaussian-blur strength from 'smoothing<b>'",
    "colorjitter_crop": "colour-jitter strength from 'color<c>'",
    "adaptive_colorjitter": "smoothing from 'smoothing<b>'",
}
RESAMPLES = 2000
SEED = 0


def _tables(context: Any, model_set: str, correctness: str = "class"):
    """(accuracy table, error-ratio table) of one model set from the context's table.

    Rows ``<set>/<model>``, columns ``<correctness>/<factor>``
    (``repro.studies.imagenetx.published``); memoised on the context."""
    import pandas as pd

    key = f"imagenetx.table.{model_set}.{correctness}"
    if key in context.cache:
        return context.cache[key]
    prefix, head = f"{model_set}/", f"{correctness}/"
    rows = {
        name[len(prefix) :]: {col[len(head) :]: v for col, v in row.items() if col.startswith(head)}
        for name, row in context.table.values.items()
        if name.startswith(prefix)
    }
    rows = {model: row for model, row in rows.items() if row}
    if not rows:
        raise DataError(
            f"{context.table.origin}: no models of set {model_set!r} with {correctness!r} "
            "correctness"
        )
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "model"
    out = (table, error_ratio_table(table))
    context.cache[key] = out
    return out


def _source(model_set: str, correctness: str = "class") -> dict[str, str]:
    return {f"imagenetx/factor_accuracies/{model_set}/{correctness}": "published"}


def parse_strengths(models: list[str], sweep: str) -> np.ndarray:
    """Augmentation strength of each model of a sweep (see the module docstring)."""
    try:
        pattern, to_strength = STRENGTH[sweep]
    except KeyError:
        raise ConfigError(
            f"unknown ImageNet-X sweep {sweep!r} (known: {', '.join(STRENGTH)})"
        ) from None
    out = np.empty(len(models))
    for i, name in enumerate(models):
        m = re.search(pattern, name)
        if not m:
            raise DataError(
                f"model {name!r} of sweep {sweep}: no strength in its name (expected {pattern!r})"
            )
        out[i] = to_strength(float(m.group(1)))
    return out


RUN_ID = re.compile(r"_id[0-9]+$")


def run_configurations(context: Any, models: list[str]) -> list[str]:
    """Cluster labels of sweep runs (``[claim.estimand] clusters``): a run's configuration.

    The configuration is the run's name without the run id
    (``eval_resnet50_crop20.0_wd0.0001_id1660254107`` -> ``eval_resnet50_crop20.0_wd0.0001``): runs
    of one configuration differ by their seed only."""
    return [RUN_ID.sub("", str(m).split("/")[-1]) for m in models]


def kendalls_w(values: np.ndarray) -> tuple[float, float]:
    """Kendall's coefficient of concordance of m raters (rows) ranking n items (columns).

    With the tie correction, and its chi-square p-value (chi2 = m (n - 1) W, n - 1 df)."""
    values = np.asarray(values, dtype=float)
    m, n = values.shape
    ranks = stats.rankdata(values, axis=1)
    s = float(((ranks.sum(axis=0) - m * (n + 1) / 2.0) ** 2).sum())
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    w = 12.0 * s / (m * m * (n**3 - n) - m * ties)
    p = float(stats.chi2.sf(m * (n - 1) * w, n - 1))
    return w, p


def _row_ties(ranks: np.ndarray) -> np.ndarray:
    """Per row, the tie term sum(t^3 - t) over its groups of tied ranks."""
    return np.array(
        [float((c**3 - c).sum()) for c in (np.unique(r, return_counts=True)[1] for r in ranks)]
    )


def kendalls_w_leave_one_out(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``kendalls_w`` without rater i, for every i, in closed form.

    A row's ranks do not depend on the other rows, so dropping row i takes its ranks from the column
    sums and its tie term from the total (m - 1 raters)."""
    values = np.asarray(values, dtype=float)
    m, n = values.shape
    ranks = stats.rankdata(values, axis=1)
    sums = ranks.sum(axis=0)[None, :] - ranks  # (m, n): column sums without row i
    k = m - 1
    s = ((sums - k * (n + 1) / 2.0) ** 2).sum(axis=1)
    ties = _row_ties(ranks)
    w = 12.0 * s / (k * k * (n**3 - n) - k * (ties.sum() - ties))
    return w, stats.chi2.sf(k * (n - 1) * w, n - 1)


def _bootstrap_w(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """W over resamples of the raters.

    Ranks are computed once; a tie-free approximation when the data has no ties within a row, exact
    then."""
    m, n = values.shape
    ranks = stats.rankdata(values, axis=1)
    idx = np.random.default_rng(seed).integers(0, m, size=(resamples, m))
    sums = ranks[idx].sum(axis=1)  # (B, n)
    s = ((sums - m * (n + 1) / 2.0) ** 2).sum(axis=1)
    t = _row_ties(ranks)[idx].sum(axis=1)
    return 12.0 * s / (m * m * (n**3 - n) - m * t)


def _standardized_ranks(values: np.ndarray) -> np.ndarray:
    """Each row's midranks, centred and scaled to unit norm (rows must not be constant)."""
    z = stats.rankdata(values, axis=1)
    z = z - z.mean(axis=1, keepdims=True)
    norm = np.sqrt((z * z).sum(axis=1, keepdims=True))
    if (norm == 0).any():
        raise DataError(
            "a model has the same error ratio on every factor; its ranking is undefined"
        )
    return z / norm


def mean_pairwise_spearman(
    values: np.ndarray, resamples: int = 0, seed: int = SEED
) -> tuple[float, np.ndarray]:
    """Mean Spearman rho over all pairs of rows, and its values over bootstrap resamples of rows.

    Exact, with midranks for ties. With unit-norm centred ranks z_i, the sum over pairs i != j of
    z_i . z_j is ||sum_i z_i||^2 - m."""
    z = _standardized_ranks(values)
    m = z.shape[0]
    value = float(((z.sum(axis=0) ** 2).sum() - m) / (m * (m - 1)))
    if not resamples:
        return value, np.empty(0)
    idx = np.random.default_rng(seed).integers(0, m, size=(resamples, m))
    sums = z[idx].sum(axis=1)
    return value, ((sums * sums).sum(axis=1) - m) / (m * (m - 1))


def _percentile(samples: np.ndarray) -> tuple[float, float]:
    ok = samples[np.isfinite(samples)]
    if ok.size == 0:  # no resamples (the context asked for no intervals)
        return float("nan"), float("nan")
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return float(lo), float(hi)


def _resamples(context: Any, resamples: int) -> int:
    """``resamples``, or 0 when the context asks for no intervals.

    No intervals are asked for in a leave-one-out recomputation."""
    return resamples if getattr(context, "intervals", True) else 0


def _rows(model_set: str, er) -> list[str]:
    """The context's table rows of a model set's models (``<set>/<model>``)."""
    return [f"{model_set}/{name}" for name in er.index]


def _interval_method(resamples: int, seed: int) -> str:
    return f"percentile bootstrap over models (95%, {resamples} resamples, seed {seed})"


def failure_mode_concordance(
    context: Any,
    *,
    model_set: str = "imagenet_testbed",
    correctness: str = "class",
    min_accuracy: float = 0.5,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> StatisticResult:
    """Kendall's W of the per-factor error-ratio ranks across the models of ``model_set``.

    details: mean pairwise Spearman (all models), W over the models with overall accuracy >=
    ``min_accuracy`` (near-chance models rank factors by noise), the factors ordered by mean rank.
    """
    table, er = _tables(context, model_set, correctness)
    values = er[list(FACTORS)].to_numpy(dtype=float)
    if not np.isfinite(values).all():
        bad = er.index[~np.isfinite(values).all(axis=1)][0]
        raise DataError(f"{model_set}: model {bad} has an undefined error ratio")
    m, n = values.shape
    w, p = kendalls_w(values)
    resamples = _resamples(context, resamples)
    boot = _bootstrap_w(values, resamples, seed)
    mean_rho, boot_rho = mean_pairwise_spearman(values, resamples, seed)
    ranks = stats.rankdata(-values, axis=1)  # 1 = highest error ratio
    order = [FACTORS[j] for j in np.argsort(ranks.mean(axis=0), kind="stable")]
    good = table["average"].to_numpy() >= min_accuracy
    w_good, p_good = kendalls_w(values[good])
    per_model = {
        str(name): {
            "average": float(table["average"].iloc[i]),
            "hardest": FACTORS[int(np.argmax(values[i]))],
        }
        for i, name in enumerate(er.index)
    }

    def leave_one_out() -> LeaveOneOut:
        w_loo, p_loo = kendalls_w_leave_one_out(values)
        return LeaveOneOut(_rows(model_set, er), w_loo, p_loo)

    return StatisticResult(
        value=w,
        p=p,
        n=m,
        interval=_percentile(boot),
        interval_method=_interval_method(resamples, seed),
        per_model=per_model,
        leave_one_out=leave_one_out,
        details={
            "mean_pairwise_spearman": {"value": mean_rho, "interval": list(_percentile(boot_rho))},
            "w_min_accuracy": {
                "value": w_good,
                "p": p_good,
                "n": int(good.sum()),
                "min_accuracy": min_accuracy,
            },
            "factors_by_mean_rank": order,
            "mean_rank": {f: float(r) for f, r in zip(FACTORS, ranks.mean(axis=0), strict=True)},
            "n_factors": n,
        },
        sources=_source(model_set, correctness),
    )


def tie_range(values: np.ndarray, factor: int, top: int) -> tuple[int, int]:
    """How many rows (models) have column ``factor`` among their ``top`` highest values.

    Counted with ties broken against it (low) and for it (high)."""
    v = values[:, [factor]]
    above = (values > v).sum(axis=1)
    level = (values == v).sum(axis=1) - 1  # the others tied with it
    return int((above + level < top).sum()), int((above < top).sum())


def hardest_factor_share(
    context: Any, *, model_set: str = "imagenet_testbed", correctness: str = "class", top: int = 3
) -> StatisticResult:
    """The factor most often among a model's ``top`` highest error ratios.

    The value is its share of models."""
    _, er = _tables(context, model_set, correctness)
    values = er[list(FACTORS)].to_numpy(dtype=float)
    m = values.shape[0]
    top_sets = np.argsort(-values, axis=1, kind="stable")[:, :top]
    counts = np.bincount(top_sets.ravel(), minlength=len(FACTORS))
    best = int(np.argmax(counts))
    c = Count(int(counts[best]), m)
    p = float(stats.binomtest(c.k, m, 0.5, alternative="greater").pvalue)
    hardest = np.bincount(np.argmax(values, axis=1), minlength=len(FACTORS))
    k_low, k_high = tie_range(values, best, top)

    def leave_one_out() -> LeaveOneOut:
        """Leave-one-out: without model i, its top factors leave the counts.

        The most frequent factor (first on ties, as ``np.argmax``) and its one-sided binomial p over
        m - 1 models."""
        onehot = np.zeros((m, len(FACTORS)))
        np.put_along_axis(onehot, top_sets, 1.0, axis=1)
        loo_counts = counts[None, :] - onehot
        best_i = np.argmax(loo_counts, axis=1)
        k_i = loo_counts[np.arange(m), best_i].astype(int)
        p_of = {
            k: float(stats.binomtest(k, m - 1, 0.5, alternative="greater").pvalue)
            for k in set(k_i.tolist())
        }
        return LeaveOneOut(
            _rows(model_set, er),
            k_i / (m - 1),
            np.array([p_of[k] for k in k_i]),
            {"factor": [FACTORS[j] for j in best_i], "k": k_i.tolist(), "top": [top] * m},
        )

    return StatisticResult(
        value=c.rate,
        p=p,
        n=m,
        interval=c.interval(),
        interval_method="Wilson score 95% (models as trials)",
        per_model={str(name): [FACTORS[j] for j in top_sets[i]] for i, name in enumerate(er.index)},
        details={
            "factor": FACTORS[best],
            "k": c.k,
            # the count as ties are broken against the factor or for it: a model whose error
            # ratio for it ties the top-th highest is in its top or not by the tie-break alone
            "k_range": [k_low, k_high],
            "top": top,
            "share_in_top": {
                FACTORS[j]: float(counts[j] / m)
                for j in np.argsort(-counts, kind="stable")
                if counts[j]
            },
            "share_hardest": {
                FACTORS[j]: float(hardest[j] / m)
                for j in np.argsort(-hardest, kind="stable")
                if hardest[j]
            },
        },
        sources=_source(model_set, correctness),
        leave_one_out=leave_one_out,
    )


def augmentation_trend(
    context: Any,
    *,
    sweep: str,
    factor: str,
    correctness: str = "class",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> StatisticResult:
    """Spearman rho between augmentation strength and the factor's error ratio over a sweep."""
    if factor not in FACTORS:
        raise ConfigError(f"unknown ImageNet-X factor {factor!r} (known: {', '.join(FACTORS)})")
    _, er = _tables(context, sweep, correctness)
    strength = parse_strengths([str(i) for i in er.index], sweep)
    if np.unique(strength).size < 2:
        raise DataError(
            f"sweep {sweep}: all {len(strength)} models have the same strength; no trend is defined"
        )
    y = er[factor].to_numpy(dtype=float)
    corr = spearman(strength, y, resamples=_resamples(context, resamples), seed=seed)
    levels = np.unique(strength)
    by_level = {f"{v:g}": float(y[strength == v].mean()) for v in levels}
    lo_half = y[strength <= np.median(strength)].mean()
    hi_half = y[strength > np.median(strength)].mean()

    levels_y = np.array([y[strength == v].mean() for v in levels])
    counts = [int((strength == v).sum()) for v in levels]
    per_strength = spearman(levels, levels_y, resamples=_resamples(context, resamples), seed=seed)
    details_extra: dict[str, Any] = {
        "unit_run": {
            "rho": corr.rho,
            "p": corr.p,
            "n": corr.n,
            "interval": list(corr.interval),
            "method": corr.method,
        },
        "unit_strength": {
            "rho": per_strength.rho,
            "p": per_strength.p,
            "n": per_strength.n,
            "interval": list(per_strength.interval),
            "method": per_strength.method.replace("over models", "over strengths"),
            "runs_per_strength": {"min": int(min(counts)), "max": int(max(counts))},
        },
    }
    if sweep == "crop":
        details_extra["crop_scale_below_1"] = crop_scale_readings(er, strength, factor)

    def leave_one_out() -> LeaveOneOut:
        """Spearman without each model (``spearman_leave_one_out``).

        Strength and error ratio are per-model quantities, so dropping a model drops its pair only;
        undefined where its removal leaves a single strength."""
        rho, p = spearman_leave_one_out(strength, y)
        level_counts = {v: int((strength == v).sum()) for v in levels}
        single = np.array([levels.size - (level_counts[v] == 1) < 2 for v in strength])
        return LeaveOneOut(
            _rows(sweep, er), np.where(single, np.nan, rho), np.where(single, np.nan, p)
        )

    return StatisticResult.of_correlation(
        corr,
        per_model={str(name): [float(strength[i]), float(y[i])] for i, name in enumerate(er.index)},
        details={
            "strength": STRENGTH_MEANING[sweep],
            "per_model_fields": ["strength", "error_ratio"],
            "levels": int(levels.size),
            "kendall_tau": float(stats.kendalltau(strength, y).statistic),
            "mean_error_ratio_weaker_half": float(lo_half),
            "mean_error_ratio_stronger_half": float(hi_half),
            "mean_error_ratio_by_strength": by_level,
        }
        | details_extra,
        sources=_source(sweep, correctness),
        paired=(strength, y),
        leave_one_out=leave_one_out,
        resamplers={
            "value": spearman_resampler(
                [str(i) for i in er.index], strength, y, ("strength", factor)
            )
        },
    )


def crop_scale_readings(er, strength: np.ndarray, factor: str) -> dict[str, Any]:
    """The two readings of crop runs named with a minimum scale below 1 (``crop0.2``).

    Such a scale reads as a percent (0.2%: strength 99.8) or as a fraction (0.2 = 20%: strength 80),
    decided from the data without the claim's own outcome: the run's error ratios on the 15 other
    factors against the runs of the strength level each reading puts it at (or the nearest level of
    the sweep, for a reading outside it), in units of the pooled within-level SD (chi-square with 15
    df when the reading is right); the reading with the smaller sum of squares is decided. For each,
    the claim's rho with the run read that way and without it."""
    names = [str(i) for i in er.index]
    raw = parse_strengths(names, "crop")  # 100 - s, s read as a percent
    scale = 100.0 - raw
    others = [f for f in FACTORS if f != factor]
    values = er[others].to_numpy(dtype=float)
    y = er[factor].to_numpy(dtype=float)
    out: dict[str, Any] = {}
    for i in np.flatnonzero(scale < 1.0):
        keep = np.arange(len(names)) != i
        levels = np.unique(raw[keep])
        means = {v: values[keep & (raw == v)].mean(axis=0) for v in levels}
        resid = np.vstack([values[keep & (raw == v)] - means[v] for v in levels])
        sd = np.sqrt((resid**2).sum(axis=0) / (resid.shape[0] - levels.size))
        readings = {}
        for name, value in (("percent", raw[i]), ("fraction", round(100.0 - 100.0 * scale[i], 9))):
            level = float(levels[np.argmin(np.abs(levels - value))])
            z2 = float((((values[i] - means[level]) / sd) ** 2).sum())
            x = raw.copy()
            x[i] = value
            readings[name] = {
                "strength": float(value),
                "nearest_level": level,
                "z2": z2,
                "p": float(stats.chi2.sf(z2, len(others))),
                "rho": float(stats.spearmanr(x, y).statistic),
            }
        decided = min(readings, key=lambda k: readings[k]["z2"])
        out[names[i]] = {
            "readings": readings,
            "decided": decided,
            "strength_used": float(strength[i]),
            "rho_without": float(stats.spearmanr(raw[keep], y[keep]).statistic),
            "factors": len(others),
        }
    return out


def strength_profile(context: Any, sweep: str, correctness: str = "class") -> list[list[Any]]:
    """(sweep, strength, factor, runs, mean error ratio) per strength level of a sweep and factor.

    The data of the error-ratio-against-strength figure."""
    _, er = _tables(context, sweep, correctness)
    strength = parse_strengths([str(i) for i in er.index], sweep)
    rows: list[list[Any]] = []
    for v in np.unique(strength):
        sel = strength == v
        for f in FACTORS:
            rows.append(
                [sweep, float(v), f, int(sel.sum()), float(er[f].to_numpy(dtype=float)[sel].mean())]
            )
    return rows


def spillover_table(
    context: Any, *, sweeps: tuple[str, ...] = SWEEPS, correctness: str = "class"
) -> list[dict[str, Any]]:
    """The spill-over table: the trend of error ratio over strength, per sweep and factor.

    For every sweep and factor: n models, strength levels, Spearman rho (strength vs error ratio),
    its p-value and the Holm-adjusted p over all tested cells. Sweeps with a single strength get
    rho = None and a note."""
    rows: list[dict[str, Any]] = []
    for sweep in sweeps:
        _, er = _tables(context, sweep, correctness)
        strength = parse_strengths([str(i) for i in er.index], sweep)
        levels = int(np.unique(strength).size)
        for factor in FACTORS:
            row: dict[str, Any] = {
                "sweep": sweep,
                "factor": factor,
                "n": int(len(er)),
                "levels": levels,
                "rho": None,
                "p": None,
                "p_holm": None,
            }
            if levels >= 2:
                res = stats.spearmanr(strength, er[factor].to_numpy(dtype=float))
                row["rho"], row["p"] = float(res.statistic), float(res.pvalue)
            rows.append(row)
    tested = [r for r in rows if r["p"] is not None]
    for r, adj in zip(tested, holm([r["p"] for r in tested]), strict=True):
        r["p_holm"] = adj
    return rows

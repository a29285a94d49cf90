"""Gavrikov & Keuper 2024: the statistic functions its claims name.

They are named ``module:function`` in ``claims.toml`` of this study. Each takes
``(context, **params)`` and returns a ``StatisticResult`` carrying the per-model inputs, so a
regression snapshot shows which model moved; a correlation statistic also names its cells of the
bias x category table and the paired samples of its headline correlation (for the claim's
robustness). Each offers its vectorised ``replicate`` (``repro.analysis.redraws``): the same
statistic on every redrawn table of the claim's replication at once (tested equal to recomputing
it on each).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from repro.analysis.clustered import (
    Resampler,
    spearman_resampler,
    weighted_midranks,
    weighted_pearson,
)
from repro.analysis.correlation import spearman, spearman_p
from repro.analysis.redraws import Redraws, Replicates, debiased, spearman_matrices, spearman_rows
from repro.analysis.result import StatisticResult
from repro.analysis.turning_point import two_lines, u_test
from repro.base.errors import ConfigError, DataError

PNS_AT_BOUND_ATOL = 1e-9  # pns_norm = 2^(A-4) with A at its bound 4 prints as 0.9999999999999997


def _cell_dict(corr) -> dict[str, Any]:
    return {"rho": corr.rho, "p": corr.p, "n": corr.n, "interval": list(corr.interval)}


def _per_model(study, models: list[str], **columns: np.ndarray) -> dict[str, dict[str, float]]:
    return {
        m: {name: float(vals[i]) for name, vals in columns.items()} for i, m in enumerate(models)
    }


def _replicate_cells(study, bias: str, keys: list[tuple[str, str]]):
    """The (rho, p) per redraw of each (category, group) cell of ``bias``.

    A function of ``(Redraws, correct)``; ``correct``: each rho moved by its bootstrap bias (its
    redraws' mean minus the cell's rho, ``repro.analysis.redraws.debiased``) and its p recomputed
    from it."""

    def run(r: Redraws, correct: bool) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
        cols = study.columns_of("biases", bias)
        out = {}
        for cat, g in keys:
            models = study.groups[g]
            rho, p = spearman_rows(
                r.mean_of(cols, models), r.mean_of(study.columns_of("categories", cat), models)
            )
            if correct:
                rho = np.clip(debiased(rho, study.cell(bias, cat, g).corr.rho), -1.0, 1.0)
                p = spearman_p(rho, len(models))
            out[(cat, g)] = (rho, p)
        return out

    return run


def _cell_dicts(rho: np.ndarray, p: np.ndarray, n: int) -> list[dict[str, Any]]:
    return [{"rho": float(a), "p": float(b), "n": n} for a, b in zip(rho, p, strict=True)]


def _cell_resampler(study, bias: str, category: str, group: str) -> Resampler:
    """Spearman's rho of one bias x category cell as a function of weights on its group's models."""
    models = study.groups[group]
    labels = (study.spec.biases[bias].label, study.spec.categories[category].label)
    return spearman_resampler(
        models, study.bias(bias, models), study.category(category, models), labels
    )


def bias_category_spearman(
    ctx, *, bias: str, category: str, group: str = "total", other_groups: list[str] | None = None
) -> StatisticResult:
    """Spearman rho of a bias with a category within a group; other groups as details."""
    study = ctx.analysis
    cell = study.cell(bias, category, group)
    models = study.groups[group]
    details = {g: _cell_dict(study.cell(bias, category, g).corr) for g in (other_groups or [])}
    x, y = study.bias(bias, models), study.category(category, models)
    others = list(other_groups or [])
    cells = _replicate_cells(study, bias, [(category, g) for g in [group, *others]])

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        got = cells(r, correct)
        return Replicates(
            *got[(category, group)],
            details={g: _cell_dicts(*got[(category, g)], len(study.groups[g])) for g in others},
        )

    resamplers = {
        name: _cell_resampler(study, bias, category, g)
        for name, g in [("value", group), *((g, g) for g in (other_groups or []))]
    }
    return StatisticResult.of_correlation(
        cell.corr,
        per_model=_per_model(study, models, **{bias: x, category: y}),
        details=details,
        sources=study.sources_of(
            *study.columns_of("biases", bias), *study.columns_of("categories", category)
        ),
        paired=(x, y),
        cells=tuple((bias, category, g) for g in [group, *others]),
        resamplers=resamplers,
        replicate=replicate,
    )


def bias_benchmark_spearman(
    ctx, *, bias: str, benchmark: str, group: str = "total"
) -> StatisticResult:
    """Spearman rho of a bias with ONE benchmark's accuracy within a group.

    The benchmark is a key of the analysis's ``[benchmarks]``, e.g. ``imagenet_a``: a statement
    about a single benchmark that the bias x category table holds only averaged into its category.
    Interval: the analysis's bootstrap over the group's models, as every cell of the table."""
    study = ctx.analysis
    if benchmark not in study.spec.benchmarks:
        raise ConfigError(
            f"bias_benchmark_spearman: unknown benchmark {benchmark!r} "
            f"(known: {', '.join(study.spec.benchmarks)})"
        )
    if group not in study.groups:
        raise ConfigError(
            f"bias_benchmark_spearman: unknown group {group!r} (known: {', '.join(study.groups)})"
        )
    column = study.spec.benchmarks[benchmark]
    models = study.groups[group]
    study.require_models(models, f"[groups.{group}]", 3, "a Spearman correlation")
    x, y = study.bias(bias, models), study.table.column(column, models)
    corr = spearman(
        x, y, resamples=study.spec.resamples, seed=study.spec.seed, confidence=study.spec.confidence
    )
    cols = study.columns_of("biases", bias)

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        rho, p = spearman_rows(r.mean_of(cols, models), r.column(column, models))
        if correct:
            rho = np.clip(debiased(rho, corr.rho), -1.0, 1.0)
            p = spearman_p(rho, len(models))
        return Replicates(rho, p, {})

    labels = (study.spec.biases[bias].label, benchmark)
    return StatisticResult.of_correlation(
        corr,
        per_model=_per_model(study, models, **{bias: x, benchmark: y}),
        sources=study.sources_of(*cols, column),
        paired=(x, y),
        resamplers={"value": spearman_resampler(models, x, y, labels)},
        replicate=replicate,
    )


def bias_category_cells(
    ctx,
    *,
    bias: str,
    categories: list[str] | None = None,
    groups: list[str] | None = None,
    headline: str = "min_p",
) -> StatisticResult:
    """All correlations of one bias with categories x groups.

    Headline: the smallest p (``min_p``) or the weakest rho (``min_rho``); its cell's interval is
    the headline interval."""
    study = ctx.analysis
    cats = categories or list(study.spec.categories)
    grps = groups or list(study.spec.groups)
    cells = {f"{c}/{g}": study.cell(bias, c, g) for c in cats for g in grps}
    details = {k: _cell_dict(v.corr) for k, v in cells.items()}
    if headline == "min_p":
        key = min(cells, key=lambda k: cells[k].corr.p)
        value = cells[key].corr.p
    elif headline == "min_rho":
        key = min(cells, key=lambda k: cells[k].corr.rho)
        value = cells[key].corr.rho
    else:
        raise ConfigError(
            f"bias_category_cells: headline must be min_p or min_rho, got {headline!r}"
        )
    head = cells[key].corr
    head_cat, head_group = key.split("/")
    head_models = study.groups[head_group]
    models = study.population
    per = {"bias": study.bias(bias, models)} | {c: study.category(c, models) for c in cats}
    cols = [*study.columns_of("biases", bias)] + [
        c for cat in cats for c in study.columns_of("categories", cat)
    ]
    keys = [(c, g) for c in cats for g in grps]
    run = _replicate_cells(study, bias, keys)

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        got = run(r, correct)
        rho = np.stack([got[k][0] for k in keys], axis=1)
        p = np.stack([got[k][1] for k in keys], axis=1)
        head = np.argmin(p if headline == "min_p" else rho, axis=1)
        rows = np.arange(r.resamples)
        names = [f"{c}/{g}" for c, g in keys]
        out: dict[str, Any] = {"headline_cell": [names[i] for i in head]}
        for j, (_cat, g) in enumerate(keys):
            out[names[j]] = _cell_dicts(rho[:, j], p[:, j], len(study.groups[g]))
        value = p[rows, head] if headline == "min_p" else rho[rows, head]
        return Replicates(value, p[rows, head], out)

    resamplers = {k: _cell_resampler(study, bias, *k.split("/")) for k in cells}
    if headline == "min_rho":
        resamplers["value"] = resamplers[key]
    return StatisticResult(
        value=float(value),
        p=head.p,
        n=head.n,
        interval=head.interval if headline == "min_rho" else None,
        interval_method=head.method if headline == "min_rho" else None,
        per_model=_per_model(study, models, **per),
        details={"headline_cell": key} | details,
        sources=study.sources_of(*cols),
        paired=(study.bias(bias, head_models), study.category(head_cat, head_models)),
        cells=tuple((bias, c, g) for c in cats for g in grps),
        resamplers=resamplers,
        replicate=replicate,
    )


def benchmark_mean_correlation(
    ctx, *, benchmark: str, compare: str, variant: str = "including_diagonal"
) -> StatisticResult:
    """Row mean of the Spearman matrix of the benchmarks.

    ``variant``: including_diagonal as the paper, or excluding_diagonal; details: both variants for
    every benchmark and the ranking."""
    study = ctx.analysis
    bc = study.benchmark_correlation
    if benchmark not in bc.benchmarks or compare not in bc.benchmarks:
        raise ConfigError(
            f"benchmark_mean_correlation: unknown benchmark (known: {', '.join(bc.benchmarks)})"
        )
    if variant not in ("including_diagonal", "excluding_diagonal"):
        raise ConfigError(
            "benchmark_mean_correlation: variant must be including_diagonal or excluding_diagonal"
        )
    rows = {
        "including_diagonal": (bc.row_mean_including_diagonal, bc.interval_including_diagonal),
        "excluding_diagonal": (bc.row_mean_excluding_diagonal, bc.interval_excluding_diagonal),
    }
    i, j = bc.benchmarks.index(benchmark), bc.benchmarks.index(compare)
    means, intervals = rows[variant]
    details: dict[str, Any] = {}
    for v, (m, iv) in rows.items():
        order = [bc.benchmarks[k] for k in np.argsort(-m, kind="stable")]
        details[f"first_{v}"] = order[0]
        details[f"{compare}_{v}"] = {"value": float(m[j]), "interval": list(iv[j])}
        details[f"{benchmark}_{v}"] = {"value": float(m[i]), "interval": list(iv[i])}
        details[f"ranking_{v}"] = order
    models = study.population
    per = {b: study.table.column(study.spec.benchmarks[b], models) for b in bc.benchmarks}
    k = len(bc.benchmarks)

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        data = np.stack([r.column(study.spec.benchmarks[b], models) for b in bc.benchmarks], axis=2)
        m = spearman_matrices(data)
        both = {
            "including_diagonal": m.mean(axis=2),
            "excluding_diagonal": (m.sum(axis=2) - 1.0) / (k - 1),
        }
        if correct:
            both = {v: debiased(means_b, rows[v][0]) for v, means_b in both.items()}
        out: dict[str, list[Any]] = {}
        for v, means_b in both.items():
            order = np.argsort(-means_b, axis=1, kind="stable")
            out[f"first_{v}"] = [bc.benchmarks[o[0]] for o in order]
            out[f"{compare}_{v}"] = [{"value": float(x)} for x in means_b[:, j]]
            out[f"{benchmark}_{v}"] = [{"value": float(x)} for x in means_b[:, i]]
            out[f"ranking_{v}"] = [[bc.benchmarks[x] for x in o] for o in order]
        return Replicates(both[variant][:, i], None, out)

    return StatisticResult(
        value=float(means[i]),
        p=None,
        n=bc.n,
        interval=intervals[i],
        interval_method=bc.method,
        per_model=_per_model(study, models, **per),
        details=details,
        sources=study.sources_of(*study.spec.benchmarks.values()),
        resamplers={
            "value": _row_mean_resampler(models, per, benchmark, variant == "including_diagonal")
        },
        replicate=replicate,
    )


def _row_mean_resampler(
    models: list[str], columns: dict[str, np.ndarray], benchmark: str, diagonal: bool
) -> Resampler:
    """One benchmark's row mean of the Spearman matrix of ``columns``, as a resampler.

    A function of weights on the models (the diagonal 1.0 included or not)."""
    names = list(columns)
    k = len(names)

    def fn(w: np.ndarray) -> np.ndarray:
        ranks = {b: weighted_midranks(columns[b], w) for b in names}
        total = sum(
            weighted_pearson(ranks[benchmark], ranks[b], w) for b in names if b != benchmark
        )
        return (total + 1.0) / k if diagonal else total / (k - 1)

    return Resampler(tuple(models), fn, (-1.0, 1.0), dict(columns))


def model_bias_values(ctx, *, bias: str, model: str, baseline: str) -> StatisticResult:
    """The bias of one model, with a baseline model's for comparison.

    Both may lie outside the population."""
    study = ctx.analysis
    v = float(study.bias(bias, [model])[0])
    b = float(study.bias(bias, [baseline])[0])
    cols = study.columns_of("biases", bias)

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        vs, bs = r.mean_of(cols, [model])[:, 0], r.mean_of(cols, [baseline])[:, 0]
        if correct:
            vs, bs = debiased(vs, v), debiased(bs, b)
        return Replicates(
            vs,
            None,
            {
                "baseline": [{"value": float(x), "model": baseline} for x in bs],
                "difference": list(vs - bs),
            },
        )

    return StatisticResult(
        value=v,
        n=1,
        per_model={model: {bias: v}, baseline: {bias: b}},
        details={"baseline": {"value": b, "model": baseline}, "difference": v - b},
        sources=study.sources_of(*cols),
        replicate=replicate,
    )


def count_at_value(
    ctx, *, bias: str, value: float = 1.0, atol: float = PNS_AT_BOUND_ATOL
) -> StatisticResult:
    """How many population models have ``bias`` equal to ``value`` (within ``atol``).

    No interval: the count is of the models themselves (a census), and a value at a bound of the fit
    that made it (peak noise sensitivity 1.0 is A = 4, the bound) is not a sampling rate; a Wilson
    interval of k/n would treat it as one."""
    study = ctx.analysis
    models = study.population
    vals = study.bias(bias, models)
    hits = np.abs(vals - value) <= atol
    k, n = int(hits.sum()), len(models)
    cols = study.columns_of("biases", bias)

    def replicate(r: Redraws, correct: bool = True) -> Replicates:  # a count: nothing to correct
        ks = (np.abs(r.mean_of(cols, models) - value) <= atol).sum(axis=1)
        return Replicates(
            ks.astype(float),
            None,
            {
                "k": [int(x) for x in ks],
                "n": [n] * r.resamples,
                "rate": list(ks / n),
                "atol": [atol] * r.resamples,
            },
        )

    return StatisticResult(
        value=float(k),
        n=n,
        per_model=_per_model(study, models, **{bias: vals}),
        details={"k": k, "n": n, "rate": k / n, "atol": atol},
        sources=study.sources_of(*cols),
        replicate=replicate,
    )


def _poly_fit(x: np.ndarray, y: np.ndarray, deg: int) -> tuple[np.ndarray, float]:
    coef = np.polyfit(x, y, deg)
    rss = float(((y - np.polyval(coef, x)) ** 2).sum())
    return coef, rss


def _poly_fits(x: np.ndarray, y: np.ndarray, deg: int) -> tuple[np.ndarray, np.ndarray]:
    """``_poly_fit`` of every row pair of ``(B, n)`` arrays, by least squares through QR.

    Returns the coefficients (highest power first, as ``np.polyfit``) and the residual sums of
    squares."""
    v = x[..., None] ** np.arange(deg, -1, -1)
    q, r = np.linalg.qr(v)
    coef = np.linalg.solve(r, np.einsum("bnd,bn->bd", q, y)[..., None])[..., 0]
    resid = y - np.einsum("bnd,bd->bn", v, coef)
    return coef, (resid * resid).sum(axis=1)


def _distinct(values: np.ndarray) -> np.ndarray:
    """The number of distinct finite values in each row."""
    s = np.sort(values, axis=1)
    return 1 + (np.diff(s, axis=1) > 0).sum(axis=1)


def _require_spread(
    values: np.ndarray, least: int, what: str, group: str, columns: tuple[str, ...]
) -> None:
    """DataError when ``values`` take fewer than ``least`` distinct values (a degenerate fit)."""
    distinct = np.unique(values[np.isfinite(values)])
    if distinct.size < least:
        shown = ", ".join(f"{v:g}" for v in distinct[:3])
        raise DataError(
            f"curvilinear fit over group {group!r}: {what} ({', '.join(columns)}) takes "
            f"{distinct.size} distinct value(s) ({shown}) over the {values.size} models; the fit "
            f"needs at least {least}"
        )


def curvilinear(
    ctx, *, bias: str, categories: list[str], group: str, peak_category: str
) -> StatisticResult:
    """Linear vs quadratic least-squares fit of each category on the bias within a group.

    Per category: AIC of both fits, the quadratic coefficient and the F-test p of adding the
    quadratic term (``value``/``p`` of the detail cell), and the vertex; the tests of an inverted
    U (``repro.analysis.turning_point``): Lind & Mehlum's U test (``u_test``: the slope's sign at
    both ends of the data, the vertex and its Fieller interval) and Simonsohn's two lines
    (``two_lines``) broken at the bias of the category's peak model (the highest accuracy, as the
    claim names it; not Simonsohn's Robin Hood search). Headline: the
    quadratic coefficient for the first category. Also: the model with the highest
    ``peak_category`` value.
    """
    study = ctx.analysis
    models = study.groups[group]
    study.require_models(models, f"[groups.{group}]", 4, "a linear-vs-quadratic fit with an F-test")
    x = study.bias(bias, models)
    n = len(models)
    _require_spread(x, 3, f"bias {bias!r}", group, study.columns_of("biases", bias))
    details: dict[str, Any] = {}
    per: dict[str, np.ndarray] = {bias: x}
    f_of: dict[str, float] = {}
    for cat in categories:
        y = study.category(cat, models)
        _require_spread(y, 2, f"category {cat!r}", group, study.columns_of("categories", cat))
        per[cat] = y
        lin, rss1 = _poly_fit(x, y, 1)
        quad, rss2 = _poly_fit(x, y, 2)
        f = f_of[cat] = (rss1 - rss2) / (rss2 / (n - 3))
        p = float(stats.f.sf(f, 1, n - 3))
        aic1 = n * np.log(rss1 / n) + 2 * 2
        aic2 = n * np.log(rss2 / n) + 2 * 3
        details[cat] = {
            "value": float(quad[0]),
            "p": p,
            "aic_linear": float(aic1),
            "aic_quadratic": float(aic2),
            "quadratic_beats_linear": bool(aic2 < aic1 and p < study.spec.alpha),
            "vertex": float(-quad[1] / (2 * quad[0])),
            "bias_range": [float(x.min()), float(x.max())],
            "u_test": u_test(x, y, alpha=study.spec.alpha).as_json(),
            "two_lines": two_lines(
                x, y, float(x[int(np.argmax(y))]), alpha=study.spec.alpha
            ).as_json(),
        }
    peak_vals = per[peak_category]
    details["peak_model"] = models[int(np.argmax(peak_vals))]
    resamplers = {cat: _quadratic_resampler(models, x, per[cat], bias, cat) for cat in categories}
    resamplers["value"] = resamplers[categories[0]]
    head = details[categories[0]]
    cols = [*study.columns_of("biases", bias)] + [
        c for cat in categories for c in study.columns_of("categories", cat)
    ]

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        """Per category the quadratic coefficient and the F-test p.

        ``correct``: the coefficient and the F statistic moved by their bootstrap bias, p from the
        corrected F."""
        xs = r.mean_of(study.columns_of("biases", bias), models)
        spread = _distinct(xs) >= 3
        out: dict[str, list[Any]] = {}
        ys = {}
        for cat in categories:
            ys[cat] = y = r.mean_of(study.columns_of("categories", cat), models)
            ok = spread & (_distinct(y) >= 2)  # else the fit is degenerate: undefined
            _, rss1 = _poly_fits(xs, y, 1)
            quad, rss2 = _poly_fits(xs, y, 2)
            with np.errstate(invalid="ignore", divide="ignore"):
                f = np.where(ok, (rss1 - rss2) / (rss2 / (n - 3)), np.nan)
            value = np.where(ok, quad[:, 0], np.nan)
            if correct:
                value, f = (
                    debiased(value, details[cat]["value"]),
                    np.maximum(debiased(f, f_of[cat]), 0.0),
                )
            p = stats.f.sf(f, 1, n - 3)
            out[cat] = [{"value": float(value[b]), "p": float(p[b])} for b in range(r.resamples)]
        out["peak_model"] = [models[i] for i in np.argmax(ys[peak_category], axis=1)]
        first = out[categories[0]]
        return Replicates(
            np.array([c["value"] for c in first]), np.array([c["p"] for c in first]), out
        )

    return StatisticResult(
        value=head["value"],
        p=head["p"],
        n=n,
        per_model=_per_model(study, models, **per),
        details=details,
        sources=study.sources_of(*cols),
        resamplers=resamplers,
        replicate=replicate,
    )


def _quadratic_resampler(
    models: list[str], x: np.ndarray, y: np.ndarray, xname: str, yname: str
) -> Resampler:
    """The quadratic coefficient of the least-squares fit of y on x, as a resampler.

    A function of weights on the models (weighted normal equations; NaN where the weighted design is
    singular)."""
    design = np.column_stack([np.ones_like(x), x, x * x])

    def fn(w: np.ndarray) -> np.ndarray:
        xtwx = np.einsum("bn,ni,nj->bij", w, design, design)
        xtwy = np.einsum("bn,ni,n->bi", w, design, y)
        out = np.full(w.shape[0], np.nan)
        ok = np.linalg.cond(xtwx) < 1e12
        out[ok] = np.linalg.solve(xtwx[ok], xtwy[ok][..., None])[:, 2, 0]
        return out

    return Resampler(tuple(models), fn, None, {xname: x, yname: y})


def ratio_bias_sd(study, model: str, bias: str, clean_column: str, images: int) -> float:
    """An upper bound of the binomial standard error of one model's ratio bias.

    The ratio bias is the mean over its columns of (filtered top-1) / (clean top-1), each accuracy a
    rate over ``images`` images. Per column, var(r) ~ var_f / a_c^2 + r^2 var_c / a_c^2 (delta
    method; the covariance of filtered and clean correctness, positive on the same images, is
    dropped, which widens it); the SD of the mean is at most the mean of the SDs, whatever the
    columns' correlation."""
    a_c = study.table.value(model, clean_column) / 100.0
    if not 0 < a_c <= 1:
        raise ConfigError(
            f"strongest_model: clean accuracy {clean_column} of {model} is {a_c:.4g}, not in (0, 1]"
        )
    sds = []
    for col in study.columns_of("biases", bias):
        r = study.table.value(model, col)
        a_f = min(max(r * a_c, 0.0), 1.0)
        var = a_f * (1 - a_f) / images / a_c**2 + r * r * a_c * (1 - a_c) / images / a_c**2
        sds.append(np.sqrt(var))
    return float(np.mean(sds))


def strongest_model(
    ctx,
    *,
    bias: str,
    clean_column: str = "top1_acc/imagenet",
    images: int = 50_000,
    z: float = 1.96,
) -> StatisticResult:
    """The population's largest value of ``bias``, the model holding it and the runner-up.

    ``bias`` is a ratio bias: filtered over clean top-1.

    Interval: the measurement uncertainty of that model's value (``ratio_bias_sd``, ``images`` per
    condition, +- z SD), the uncertainty of the number the claim compares. Not a bootstrap of the
    maximum over models: resamples without the strongest model return the runner-up's value, so such
    an interval spans other models' values and can contain a published number that no model's value
    matches (it would read as contradicting the verdict). What removing the strongest model does is
    the claim's leave-one-out robustness."""
    study = ctx.analysis
    models = study.population
    vals = study.bias(bias, models)
    order = order_observed = np.argsort(-vals, kind="stable")
    top = models[order[0]]
    value = float(vals[order[0]])
    sd = ratio_bias_sd(study, top, bias, clean_column, images)
    cols = study.columns_of("biases", bias)

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        """The largest value and the runner-up's per redraw.

        ``correct``: each moved by its bootstrap bias; the maximum of noisy values is biased
        upwards."""
        vs = r.mean_of(cols, models)
        order = np.argsort(-vs, axis=1, kind="stable")
        rows = np.arange(r.resamples)
        first, second = vs[rows, order[:, 0]], vs[rows, order[:, 1]]
        if correct:
            first, second = debiased(first, value), debiased(second, float(vals[order_observed[1]]))
        return Replicates(
            first,
            None,
            {
                "model": [models[i] for i in order[:, 0]],
                "runner_up": [
                    {"model": models[i], "value": float(v)}
                    for i, v in zip(order[:, 1], second, strict=True)
                ],
            },
        )

    return StatisticResult(
        value=value,
        n=len(models),
        interval=(value - z * sd, value + z * sd),
        interval_kind="replication",
        interval_method=(
            f"measurement uncertainty of the strongest model's value: binomial, {images} images "
            f"per condition, delta method for the ratio to {clean_column}, +-{z:g} SD "
            "(conservative)"
        ),
        per_model=_per_model(study, models, **{bias: vals}),
        details={
            "model": top,
            "runner_up": {"model": models[order[1]], "value": float(vals[order[1]])},
        },
        sources=study.sources_of(*cols, clean_column),
        replicate=replicate,
    )

"""Subramanian et al. 2023: the statistics its claims name.

Computed from the study's table (``published``: one row per network, scored from the published
files) over the populations of ``population.toml``. Each takes ``(context, **params)`` and returns a
``StatisticResult``.

- ``human_channel``: the critical-band fit of the human group thresholds as published (no
  uncertainty: the human per-trial data is not in the repository snapshot).
- ``bandwidth_ratio``: network bandwidth / human bandwidth over the networks of a population
  whose fit is defined (all thresholds equal: no fit, listed), summarised by its median or its
  minimum.
- ``channel_beyond_human``: the share (k of n) of the population's networks with a defined fit
  whose channel reaches past the human channel's on both sides: lower band edge (centre x
  2^(-bandwidth/2), cycles/image) below the human one and upper edge (centre x 2^(+bandwidth/2))
  above it; Wilson interval of k/n.
- ``variance_explained``: R^2 of ordinary least squares of an outcome (shape bias; accuracy
  under attack) on the three channel properties (bandwidth, centre frequency, peak noise
  sensitivity) with an intercept, in-sample over the population's networks with a defined fit;
  p of the overall F-test; sensitivity variants in ``details``.
- ``sweep_trend``: Kendall's tau between adversarial-training eps and a channel property over
  the sweep, the networks whose fit is undefined kept as censored (``repro.analysis.trend``:
  wider than every defined fit), not dropped; one-sided permutation p.

The human bandwidth every ratio divides by is the suite's fit of the published human thresholds
(0.9999 octave, printed 1.00 by the authors), a constant without uncertainty.

Sources: the table columns each statistic reads (``bw``, ``cf``, ``pns``, the outcome; whether a
fit is defined comes with them), and ``population.toml [human]`` where it reads the human channel:
the replication (``replication.toml``) redraws the first and holds the last.

Replication: each statistic has its vectorised ``replicate`` (``repro.analysis.redraws``): on
every redrawn table the networks with a defined fit (which the redraw decides), the statistic
recomputed (median or minimum; R^2 and its F-test p by ``repro.analysis.regression.ols_rows``;
tau and its permutation p by ``repro.analysis.trend``'s row versions, on the same orders), and,
corrected, the value moved by its bootstrap bias and the p recomputed from the moved value.

Intervals: a claim whose networks are a sample (``[claim.estimand] kind = "sample"``, clustered
by ``clusters``: the network families) gets its interval over models from the core's cluster
bootstrap (``repro.diagnostics.estimand``), through the ``resamplers`` these statistics return (the
median and the R^2 as functions of per-network weights); the statistics compute none themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from repro.analysis.clustered import Resampler, weighted_median
from repro.analysis.regression import f_test_p, ols, ols_rows, weighted_r_squared
from repro.analysis.result import LeaveOneOut, StatisticResult
from repro.analysis.trend import kendall_censored, kendall_censored_rows, permutation_p_rows
from repro.base.errors import ConfigError, DataError
from repro.base.stats import Count
from repro.scoring.critical_band import fit
from repro.studies.subramanian2023.population import population

# the published human group thresholds the study ships: no table column
HUMAN = "population.toml [human]"
PREDICTORS = ("bw", "cf", "pns")
AUTHORS_PREDICTORS = ("bw_authors", "cf_authors", "pns_authors")
NO_HUMAN_UNCERTAINTY = (
    "none: the human side is the published group thresholds (14 observers' mean accuracy "
    "matrix); the per-trial human data is not in the repository snapshot"
)


def _population(context: Any, name: str) -> list[str]:
    """The networks of population ``name`` still in the context's table, in population order.

    ``name``: ``networks`` (the 76) or ``sweep``; a leave-one-out context has dropped rows."""
    pop = population()
    if name == "networks":
        members = pop.networks
    elif name == "sweep":
        members = pop.sweep
    else:
        raise ConfigError(
            f"unknown population {name!r} of study subramanian2023 (known: networks, sweep)"
        )
    return [m for m in members if m in context.table.values]


def _value(context: Any, network: str, column: str) -> float:
    row = context.table.values.get(network, {})
    if column not in row:
        raise DataError(
            f"{context.table.origin}: column {column!r} missing for network {network!r}"
        )
    return float(row[column])


def _defined(context: Any, networks: list[str], suffix: str = "") -> tuple[list[str], list[str]]:
    """(networks with a defined fit, networks without: all thresholds equal)."""
    ok = [n for n in networks if _value(context, n, f"fit_defined{suffix}") == 1.0]
    return ok, [n for n in networks if n not in ok]


def _families(networks: list[str]) -> list[str]:
    pop = population()
    return [pop.family_of(n) for n in networks]


def clusters(context: Any, networks: list[str]) -> list[str]:
    """The family of each network (``population.toml [families]``).

    The families are the clusters of the claims' estimands (``[claim.estimand] clusters``)."""
    del context
    return _families(networks)


def human_fit():
    """The suite's fit of the published human group thresholds.

    Computed by ``repro.scoring.critical_band.fit``."""
    return fit(population().human.thresholds)


def human_channel(context: Any) -> StatisticResult:
    """Bandwidth of the fit of the published human thresholds.

    Centre frequency and PNS in details."""
    human = population().human
    res = human_fit()
    return StatisticResult(
        value=float(res.bandwidth) if res.defined else float("nan"),
        details={
            "center_frequency": res.center_frequency,
            "peak_noise_sensitivity": res.peak_noise_sensitivity,
            "thresholds": list(human.thresholds),
            "observers": human.observers,
            "params": None if res.params is None else list(res.params),
            "published": {
                "bandwidth": human.bandwidth,
                "center_frequency": human.center_frequency,
                "peak_noise_sensitivity": human.peak_noise_sensitivity,
            },
            "per_observer_published": {k: dict(v) for k, v in human.per_observer.items()},
            "uncertainty": NO_HUMAN_UNCERTAINTY,
        },
        sources={HUMAN: "published"},
    )


def _col(r: Any, column: str, networks: list[str]) -> np.ndarray:
    """(B, n) values of ``column`` in redraws ``r``: the redrawn ones, else the table's repeated.

    NaN where a network has none (a flat fit's summaries: which networks are defined is decided by
    ``fit_defined``, redrawn or not)."""
    if column in r.columns:
        return r.column(column, networks)
    fixed = np.array([r.table.values.get(n, {}).get(column, np.nan) for n in networks], dtype=float)
    return np.broadcast_to(fixed, (r.resamples, len(networks)))


def _defined_rows(r: Any, networks: list[str], suffix: str = "") -> np.ndarray:
    """(B, n): whether each network's fit is defined in each redraw."""
    return _col(r, f"fit_defined{suffix}", networks) == 1.0


def _nan_summary(fn, values: np.ndarray) -> np.ndarray:
    out = np.full(values.shape[0], np.nan)
    some = np.isfinite(values).any(axis=1)
    out[some] = fn(values[some], axis=1)
    return out


def bandwidth_ratio(
    context: Any, *, population: str = "networks", summary: str = "median"
) -> StatisticResult:
    """Network bandwidth over human bandwidth, per network of ``population`` with a defined fit.

    Summarised by its ``median`` (with its resampler: weighted median) or its ``min``."""
    if summary not in ("median", "min"):
        raise ConfigError(f"bandwidth_ratio: summary must be 'median' or 'min', got {summary!r}")
    networks = _population(context, population)
    ok, flat = _defined(context, networks)
    if not ok:
        raise DataError(
            f"bandwidth_ratio: no network of population {population!r} has a defined fit"
        )
    human = human_fit().bandwidth
    ratio = np.array([_value(context, n, "bw") for n in ok]) / human
    fn = np.median if summary == "median" else np.min
    resamplers = (
        {"value": Resampler(tuple(ok), lambda w: weighted_median(ratio, w), None, {"ratio": ratio})}
        if summary == "median"
        else {}
    )
    q1, q3 = np.percentile(ratio, [25, 75])
    value = float(fn(ratio))

    def replicate(r: Any, correct: bool = True) -> Any:
        from repro.analysis.redraws import Replicates, debiased

        ratios = np.where(_defined_rows(r, networks), _col(r, "bw", networks), np.nan) / human
        v = _nan_summary(np.nanmedian if summary == "median" else np.nanmin, ratios)
        return Replicates(debiased(v, value) if correct else v)

    return StatisticResult(
        value=value,
        n=len(ok),
        per_model={
            n: {"bandwidth": float(_value(context, n, "bw")), "ratio": float(r)}
            for n, r in zip(ok, ratio, strict=True)
        },
        details={
            "summary": summary,
            "human_bandwidth": human,
            "human_uncertainty": NO_HUMAN_UNCERTAINTY,
            "quartiles": [float(q1), float(q3)],
            "min": float(ratio.min()),
            "max": float(ratio.max()),
            "share_2_to_4": float(np.mean((ratio >= 2) & (ratio <= 4))),
            "share_within_printed_range": float(np.mean((ratio >= 1.5) & (ratio <= 4.5))),
            "share_above_2": float(np.mean(ratio > 2)),
            "share_above_4": float(np.mean(ratio > 4)),
            "undefined_fits": flat,
            "population": population,
            "networks_in_population": len(networks),
        },
        sources={"bw": "published", HUMAN: "published"},
        resamplers=resamplers,
        replicate=replicate,
    )


def _edges_octaves(center: np.ndarray, bandwidth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log2 of a channel's lower and upper band edges (cycles/image).

    Its centre frequency's log2 -+ half its bandwidth (octaves), the half-maximum points of the
    fitted Gaussian."""
    mid = np.log2(center)
    return mid - bandwidth / 2, mid + bandwidth / 2


def channel_beyond_human(context: Any, *, population: str = "networks") -> StatisticResult:
    """Share of the networks of ``population`` whose channel spans the human one on both sides.

    Of the networks with a defined fit, those whose channel extends below the human channel's lower
    band edge AND above its upper one (edges at centre x 2^(-+bandwidth/2)); Wilson interval of the
    count; the networks reaching past it on one side only, or on neither, counted in details. Flat
    fits (all thresholds equal: no channel) are left out and listed."""
    networks = _population(context, population)
    ok, flat = _defined(context, networks)
    if not ok:
        raise DataError(
            f"channel_beyond_human: no network of population {population!r} has a defined fit"
        )
    human = human_fit()
    h_lo, h_hi = _edges_octaves(np.array(human.center_frequency), np.array(human.bandwidth))
    cf = np.array([_value(context, n, "cf") for n in ok])
    bw = np.array([_value(context, n, "bw") for n in ok])
    lo, hi = _edges_octaves(cf, bw)
    below, above = lo < h_lo, hi > h_hi
    both = below & above
    count = Count(int(both.sum()), len(ok))
    value = count.rate

    def replicate(r: Any, correct: bool = True) -> Any:
        from repro.analysis.redraws import Replicates, debiased

        defined = _defined_rows(r, networks)
        with np.errstate(invalid="ignore", divide="ignore"):
            r_lo, r_hi = _edges_octaves(_col(r, "cf", networks), _col(r, "bw", networks))
            wider = defined & (r_lo < h_lo) & (r_hi > h_hi)
        n = defined.sum(axis=1)
        v = np.where(n > 0, wider.sum(axis=1) / np.maximum(n, 1), np.nan)
        return Replicates(np.clip(debiased(v, value), 0.0, 1.0) if correct else v)

    return StatisticResult(
        value=value,
        n=count.n,
        interval=count.interval(),
        interval_method="Wilson score 95% (networks as trials)",
        per_model={
            n: {
                "lower_edge": float(2.0 ** lo[i]),
                "upper_edge": float(2.0 ** hi[i]),
                "below_human": bool(below[i]),
                "above_human": bool(above[i]),
            }
            for i, n in enumerate(ok)
        },
        details={
            "k": count.k,
            "human_lower_edge": float(2.0**h_lo),
            "human_upper_edge": float(2.0**h_hi),
            "human_uncertainty": NO_HUMAN_UNCERTAINTY,
            "below_only": int((below & ~above).sum()),
            "above_only": int((above & ~below).sum()),
            "neither": int((~below & ~above).sum()),
            "all_beyond_both": bool(both.all()),
            "smallest_margin_octaves": {
                "below": float((h_lo - lo).min()),
                "above": float((hi - h_hi).min()),
            },
            "undefined_fits": flat,
            "population": population,
            "networks_in_population": len(networks),
        },
        sources={"cf": "published", "bw": "published", HUMAN: "published"},
        replicate=replicate,
    )


def _design(context: Any, networks: list[str], predictors: tuple[str, ...]) -> np.ndarray:
    return np.array([[_value(context, n, p) for p in predictors] for n in networks])


def _r2_details(
    context: Any, networks: list[str], y_of, predictors: tuple[str, ...]
) -> dict[str, Any]:
    fit = ols(
        _design(context, networks, predictors), np.array([y_of(n) for n in networks]), predictors
    )
    out = {"r2": fit.r2, "adjusted_r2": fit.adjusted_r2, "p": fit.p, "n": fit.n}
    stable = _r2_stable(context, networks, y_of, predictors, fit)
    if stable is not None:
        out["stable"] = stable
    return out


def _r2_stable(
    context: Any, networks: list[str], y_of, predictors: tuple[str, ...], fit: Any
) -> dict[str, str] | None:
    """R^2, adjusted R^2 and p of an OLS on the fits' summaries, to their stable digits.

    The summaries are bw, cf, pns, or their ``_norm`` twins; each number is printed to the digits
    that stay the same when every fit starts from ``fit_conditioning.STARTS`` (an ill-conditioned
    fit's end point moves with the start and the CPU's kernels, and with it these numbers). None for
    other predictors."""
    from repro.scoring.critical_band import N_BANDS
    from repro.scoring.critical_band import fit as fit_vector
    from repro.scoring.fit_conditioning import MARGIN, STARTS, moved_start

    suffix = predictors[0][2:] if predictors and predictors[0].startswith("bw") else None
    if suffix != "" or predictors != PREDICTORS:  # the _norm fits: see report.py, _r2_rows
        return None
    kind = f"threshold{suffix}"
    y = np.array([y_of(n) for n in networks])
    vectors = [
        tuple(context.table.values[n][f"{kind}/f={b}"] for b in range(N_BANDS)) for n in networks
    ]
    moved = []
    for start in STARTS:
        with moved_start(start):
            fits = [fit_vector(v) for v in vectors]
        rows = [(f.bandwidth, f.center_frequency, f.peak_noise_sensitivity) for f in fits]
        if any(v is None for row in rows for v in row):
            continue
        moved.append(ols(np.array(rows, dtype=float), y, predictors))
    return {
        "r2": _stable_digits(fit.r2, [m.r2 for m in moved], MARGIN),
        "adjusted_r2": _stable_digits(fit.adjusted_r2, [m.adjusted_r2 for m in moved], MARGIN),
        "p": _stable_p(fit.p, [m.p for m in moved]),
    }


def _stable_p(p: float, moved: list[float]) -> str:
    """``p`` to two significant digits where every moved p prints the same, else one."""
    for digits in (2, 1):
        text = f"{p:.{digits}g}"
        if all(f"{m:.{digits}g}" == text for m in moved):
            return text
    return f"{p:.0e}"


def _authors_r2_over_starts(context: Any, networks: list[str], y_of) -> list[float]:
    """The authors' R^2 with every fit started from each of ``fit_conditioning.STARTS``.

    Their code keeps the flat fits, whose centre is arbitrary (the end point of a flat valley), so
    this R^2 moves with the start and with the CPU's kernels; the range says by how much."""
    from repro.scoring.critical_band import N_BANDS
    from repro.scoring.fit_conditioning import STARTS, moved_start
    from repro.studies.subramanian2023.published import authors_columns

    y = np.array([y_of(n) for n in networks])
    out = []
    for start in STARTS:
        with moved_start(start):
            rows = [
                authors_columns(
                    tuple(context.table.values[n][f"threshold/f={b}"] for b in range(N_BANDS))
                )
                for n in networks
            ]
        x = np.array([[r[p] for p in AUTHORS_PREDICTORS] for r in rows])
        out.append(float(ols(x, y, AUTHORS_PREDICTORS).r2))
    return out


def _stable_digits(value: float, moved: list[float], margin: float = 1.0) -> str:
    """``value`` printed to the decimals (at most 3) that stay the same over ``moved``.

    ``moved`` holds the value under moved fit starts. A text, so that it compares exactly on every
    machine."""
    from repro.scoring.fit_conditioning import stable_text

    spread = (max([*moved, value]) - min([*moved, value])) / abs(value) if value else 0.0
    return stable_text(value, spread, 3, margin=margin)


#: how far (octaves) a fit's half-maximum edges may lie outside the tested bands before it counts
#: as extrapolating, for the fit-exclusion sensitivity of the R^2 claims
EXTRAPOLATION_SLACKS = (1.0, 2.0, 3.0)


def band_edges() -> tuple[float, float]:
    """The tested frequency range (cycles/image).

    From half an octave below the lowest band's centre to half an octave above the highest's (bands
    one octave apart)."""
    from repro.scoring.critical_band import CENTRE_BASE, N_BANDS

    return CENTRE_BASE * 2.0**-0.5, CENTRE_BASE * 2.0 ** (N_BANDS - 0.5)


def extrapolates(bw: float, cf: float, slack: float) -> bool:
    """Whether a fitted channel reaches beyond the tested bands by more than ``slack`` octaves.

    The channel has bandwidth ``bw`` octaves at FWHM and centre ``cf`` cycles/image; the test is at
    either half-maximum edge, where its shape is the Gaussian's extrapolation, not the data's."""
    lo, hi = band_edges()
    return cf * 2.0 ** (-bw / 2) < lo * 2.0**-slack or cf * 2.0 ** (bw / 2) > hi * 2.0**slack


def _fit_exclusion(
    context: Any, networks: list[str], y_of, predictors: tuple[str, ...]
) -> dict[str, Any]:
    """R^2 without the networks whose fit extrapolates, for each slack of ``EXTRAPOLATION_SLACKS``.

    The rule, and per slack the networks left out, n, R^2 and p."""
    lo, hi = band_edges()
    out: dict[str, Any] = {
        "rule": f"a fit extrapolates when a half-maximum edge (centre x 2^(+-bandwidth/2)) lies "
        f"more than the slack outside the tested bands ({lo:.2f}-{hi:.1f} cycles/image)",
        "by_slack": {},
    }
    for slack in EXTRAPOLATION_SLACKS:
        left = [
            n
            for n in networks
            if extrapolates(_value(context, n, "bw"), _value(context, n, "cf"), slack)
        ]
        kept = [n for n in networks if n not in left]
        if len(kept) <= len(predictors) + 1:
            continue
        r2 = _r2_details(context, kept, y_of, predictors)
        if math.isfinite(r2["r2"]):  # (an undefined fit, e.g. a constant column: left out)
            out["by_slack"][f"{slack:g}"] = {"left_out": left} | r2
    return out


def variance_explained(
    context: Any,
    *,
    outcome: str,
    population: str = "networks",
    predictors: tuple[str, ...] | list[str] = PREDICTORS,
    sensitivity_columns: tuple[str, ...] | list[str] = (),
) -> StatisticResult:
    """R^2 of OLS of ``outcome`` on ``predictors`` plus an intercept, over a population's networks.

    ``outcome`` is a column of the table; the networks are those of ``population`` with a defined
    fit. Also the F-test's p and the resampler (weighted R^2).

    details: the fit (coefficients, adjusted R^2, F, df); the same model as the authors' code
    would feed it (signed bandwidth, Q7; flat fits with their raw values, Q4) over the whole
    population; with the thresholds' ``_norm`` variant; and, per ``sensitivity_columns``, R^2
    with another outcome column (e.g. the accuracy under another attack strength)."""
    predictors = tuple(predictors)
    networks = _population(context, population)
    have = [n for n in networks if outcome in context.table.values[n]]
    ok, flat = _defined(context, have)
    if len(ok) <= len(predictors) + 1:
        raise DataError(
            f"variance_explained: {len(ok)} networks of {population!r} with a defined fit and "
            f"{outcome!r}: too few for {len(predictors)} predictors"
        )
    x = _design(context, ok, predictors)
    y = np.array([_value(context, n, outcome) for n in ok])
    fit = ols(x, y, predictors)
    resampler = Resampler(
        tuple(ok),
        lambda w: weighted_r_squared(x, y, w),
        (0.0, 1.0),
        {**{p: x[:, i] for i, p in enumerate(predictors)}, outcome: y},
    )
    stable = _r2_stable(context, ok, lambda n: _value(context, n, outcome), predictors, fit)
    authors = _r2_details(context, have, lambda n: _value(context, n, outcome), AUTHORS_PREDICTORS)
    moved = _authors_r2_over_starts(context, have, lambda n: _value(context, n, outcome))
    authors["r2_stable_digits"] = _stable_digits(authors["r2"], moved)
    ok_norm, _ = _defined(context, have, "_norm")
    norm = (
        _r2_details(
            context,
            ok_norm,
            lambda n: _value(context, n, outcome),
            tuple(f"{p}_norm" for p in predictors),
        )
        if len(ok_norm) > len(predictors) + 1
        else None
    )
    replicate = _r2_replicate(networks=have, outcome=outcome, predictors=predictors, value=fit.r2)
    exclusion = _fit_exclusion(context, ok, lambda n: _value(context, n, outcome), predictors)
    sensitivity = {}
    for col in sensitivity_columns:
        nets = [n for n in ok if col in context.table.values[n]]
        if len(nets) > len(predictors) + 1:
            sensitivity[col] = _r2_details(
                context, nets, lambda n, c=col: _value(context, n, c), predictors
            )
    return StatisticResult(
        value=fit.r2,
        p=fit.p,
        n=fit.n,
        leave_one_out=lambda: _r2_leave_one_out(context, ok, x, y, predictors),
        leave_out=lambda drop: _r2_leave_out(ok, x, y, predictors, drop),
        per_model={
            n: dict(zip((*predictors, outcome), (*map(float, x[i]), float(y[i])), strict=True))
            for i, n in enumerate(ok)
        },
        details={
            "model": f"OLS: {outcome} ~ 1 + {' + '.join(predictors)} (in-sample R^2)",
            "fit": fit.as_json(),
            "adjusted_r2": fit.adjusted_r2,
            **({"stable": stable} if stable is not None else {}),
            "f_test": {"r2": fit.r2, "p": fit.p, "f": fit.f, "df": list(fit.df)},
            "undefined_fits": flat,
            "fit_exclusion": exclusion,
            "without_outcome": [n for n in networks if n not in have],
            "population": population,
            "networks_in_population": len(networks),
            "as_the_authors_code_computes_it": authors
            | {
                "note": "signed bandwidth (Q7) and the flat fit's raw "
                "values for undefined fits (Q4), every network"
            },
            "norm_criterion": norm,
            "other_outcomes": sensitivity,
        },
        sources={**{p: "published" for p in predictors}, outcome: "published"},
        resamplers={"value": resampler},
        replicate=replicate,
    )


def _r2_without(
    networks: list[str], x: np.ndarray, y: np.ndarray, predictors: tuple[str, ...], drop: set[str]
) -> tuple[float, float]:
    """R^2 and F-test p of the same OLS over the networks not in ``drop``.

    The rows left are the design a context without those networks builds (a network's fit and
    values are its own), so this is the statistic recomputed; undefined (NaN) where too few
    networks are left for the predictors."""
    keep = np.array([i for i, n in enumerate(networks) if n not in drop], dtype=np.intp)
    if keep.size <= len(predictors) + 1:
        return math.nan, math.nan
    fit = ols(x[keep], y[keep], predictors)
    return fit.r2, fit.p


def _r2_leave_one_out(
    context: Any, networks: list[str], x: np.ndarray, y: np.ndarray, predictors: tuple[str, ...]
) -> LeaveOneOut:
    """``_r2_without`` each network in turn, in the table's order."""
    read = set(networks)
    models = [m for m in context.table.models if m in read]
    rows = [_r2_without(networks, x, y, predictors, {m}) for m in models]
    return LeaveOneOut(models, np.array([r for r, _ in rows]), np.array([p for _, p in rows]))


def _r2_leave_out(
    networks: list[str],
    x: np.ndarray,
    y: np.ndarray,
    predictors: tuple[str, ...],
    drop: Sequence[str],
) -> LeaveOneOut:
    """``_r2_without`` the networks of ``drop`` at once (one row, named by those it read)."""
    gone = set(drop)
    r2, p = _r2_without(networks, x, y, predictors, gone)
    return LeaveOneOut([", ".join(n for n in networks if n in gone)], np.array([r2]), np.array([p]))


def _r2_replicate(*, networks: list[str], outcome: str, predictors: tuple[str, ...], value: float):
    """The R^2 and F-test p of every redraw, over the networks whose fit is defined in it.

    Corrected: R^2 moved by its bootstrap bias (kept in [0, 1]) and p recomputed from it."""

    def replicate(r: Any, correct: bool = True) -> Any:
        from repro.analysis.redraws import Replicates, debiased

        x = np.stack([_col(r, p, networks) for p in predictors], axis=2)
        r2, n, p = ols_rows(x, _col(r, outcome, networks), _defined_rows(r, networks))
        if correct:
            r2 = np.clip(debiased(r2, value), 0.0, 1.0)
            p = f_test_p(r2, n, len(predictors))
        return Replicates(r2, p)

    return replicate


def sweep_trend(
    context: Any,
    *,
    quantity: str = "bw",
    alternative: str = "greater",
    censor_at: float = float("inf"),
) -> StatisticResult:
    """Kendall's tau of the sweep's eps against ``quantity`` (a fit summary).

    Networks with an undefined fit are censored at ``censor_at`` (default: above every defined
    value), not dropped.

    details: the per-eps values; whether they are monotone; tau and p with the censored networks
    dropped instead, and censored at the width of the measured range (7 octave bands) instead."""
    from scipy import stats

    pop = population()
    networks = _population(context, "sweep")
    eps = np.array([pop.sweep_eps[n] for n in networks])
    ok, flat = _defined(context, networks)
    censored = np.array([n in flat for n in networks])
    y = np.array(
        [
            censor_at if c else _value(context, n, quantity)
            for n, c in zip(networks, censored, strict=True)
        ]
    )
    trend = kendall_censored(eps, y, censored, alternative=alternative)
    defined = ~censored
    dropped = (
        stats.kendalltau(eps[defined], y[defined], alternative=alternative)
        if defined.sum() >= 3
        else None
    )
    at_range = kendall_censored(eps, np.where(censored, 7.0, y), censored, alternative=alternative)
    values = [float(v) for v in y[defined]]
    human = human_fit().bandwidth
    return StatisticResult(
        value=trend.tau,
        p=trend.p,
        n=trend.n,
        per_model={
            n: {"eps": float(e), quantity: (None if c else float(v)), "censored": bool(c)}
            for n, e, v, c in zip(networks, eps, y, censored, strict=True)
        },
        details={
            "test": trend.as_json(),
            "censored": flat,
            "censored_at": "above every defined value" if np.isinf(censor_at) else censor_at,
            "monotone_non_decreasing": bool(
                all(b >= a for a, b in zip(values, values[1:], strict=False))
            ),
            "kendall_dropping_censored": None
            if dropped is None
            else {
                "tau": float(dropped.statistic),
                "p": float(dropped.pvalue),
                "n": int(defined.sum()),
            },
            "kendall_censored_at_7_octaves": {"tau": at_range.tau, "p": at_range.p},
            "all_wider_than_human": bool(all(v > human for v in values)),
            "human_bandwidth": human,
        },
        sources={quantity: "published"},
        replicate=_trend_replicate(networks, eps, quantity, censor_at, alternative, trend.tau),
    )


def _trend_replicate(
    networks: list[str],
    eps: np.ndarray,
    quantity: str,
    censor_at: float,
    alternative: str,
    value: float,
):
    """tau and its permutation p of every redraw.

    The networks whose fit is undefined in it are censored; corrected: tau moved by its bootstrap
    bias and p taken at the moved S."""

    def replicate(r: Any, correct: bool = True) -> Any:
        from repro.analysis.redraws import Replicates, debiased

        censored = ~_defined_rows(r, networks)
        y = np.where(censored, censor_at, _col(r, quantity, networks))
        tau, s, den = kendall_censored_rows(eps, y, censored)
        if correct:
            tau = np.clip(debiased(tau, value), -1.0, 1.0)
            s = tau * den
        return Replicates(tau, permutation_p_rows(eps, y, censored, s, alternative=alternative))

    return replicate

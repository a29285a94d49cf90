"""The study-agnostic statistics the third study added to the analysis stage, against
independent answers: the weighted median and R^2 of cluster-bootstrap resamples (the statistic
on the expanded sample), ``regression`` (R^2 = r^2 for one predictor, scipy's F distribution,
numpy's lstsq), and ``trend.kendall_censored`` (scipy's Kendall tau-b and exact p without censoring;
a censored value above every exact one ranks as the largest; Gehan's undetermined pairs)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from repro.analysis.clustered import weighted_median
from repro.analysis.regression import ols, r_squared, weighted_r_squared
from repro.analysis.trend import comparisons, kendall_censored

pytestmark = pytest.mark.unit


# -------------------------------------------------------------- weighted (cluster-bootstrap) forms


def test_weighted_median_and_r_squared_are_those_of_the_expanded_sample():
    """A cluster-bootstrap resample is integer weights per model: the weighted statistics equal
    numpy's median and ``r_squared`` on the sample with each model repeated that many times."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(20, 3))
    y = x @ np.array([1.0, 0.0, -1.0]) + rng.normal(size=20)
    v = np.round(rng.normal(size=20), 1)  # ties, as in integer-threshold bandwidths
    w = rng.integers(0, 3, size=(60, 20)).astype(float)
    w[0] = 0.0
    w[1] = 0.0
    w[1, :4] = 1.0  # 4 models for 4 parameters: undefined
    got = weighted_r_squared(x, y, w)
    want = [
        r_squared(np.repeat(x, row.astype(int), axis=0), np.repeat(y, row.astype(int)))
        if row.sum()
        else np.nan
        for row in w
    ]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isfinite(got[2:]).all()
    med = weighted_median(v, w)
    assert np.isnan(med[0])
    np.testing.assert_array_equal(
        med[1:], [np.median(np.repeat(v, row.astype(int))) for row in w[1:]]
    )


# ----------------------------------------------------------------------------- regression


def test_r_squared_of_one_predictor_is_r_squared_of_pearson_and_f_matches_scipy():
    rng = np.random.default_rng(2)
    x = rng.normal(size=30)
    y = 0.5 * x + rng.normal(size=30)
    fit = ols(x, y, ["x"])
    assert fit.r2 == pytest.approx(stats.pearsonr(x, y).statistic ** 2, rel=1e-12)
    lin = stats.linregress(x, y)
    assert fit.coef == pytest.approx((lin.intercept, lin.slope), rel=1e-10)
    assert fit.p == pytest.approx(lin.pvalue, rel=1e-8)  # the F-test of one slope is its t-test
    assert fit.adjusted_r2 == pytest.approx(1 - (1 - fit.r2) * 29 / 28)


def test_three_predictors_against_numpy_and_the_f_distribution():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(25, 3))
    y = x @ np.array([1.0, 0.0, -0.5]) + rng.normal(size=25)
    fit = ols(x, y, ["a", "b", "c"])
    design = np.column_stack([np.ones(25), x])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    resid = y - design @ coef
    r2 = 1 - resid @ resid / ((y - y.mean()) @ (y - y.mean()))
    assert fit.r2 == pytest.approx(r2, rel=1e-12) and fit.coef == pytest.approx(tuple(coef))
    f = (r2 / 3) / ((1 - r2) / 21)
    assert (
        fit.f == pytest.approx(f)
        and fit.p == pytest.approx(stats.f.sf(f, 3, 21))
        and fit.df == (3, 21)
    )
    assert fit.as_json()["coef"]["b"] == pytest.approx(coef[2])


def test_undetermined_fits_are_nan():
    x = np.arange(4.0)[:, None].repeat(3, axis=1)  # rank 1
    assert np.isnan(r_squared(x, np.arange(4.0)))
    assert np.isnan(r_squared(np.arange(3.0)[:, None], np.ones(3)))  # constant outcome
    assert np.isnan(ols(np.ones((4, 3)), np.arange(4.0)).p)  # 4 models, 4 parameters: no residual
    assert np.isnan(r_squared(np.random.default_rng(0).normal(size=(4, 3)), np.arange(4.0)))


# ----------------------------------------------------------------------------- censored trend


def test_without_censoring_it_is_kendalls_tau_b_with_scipys_exact_p():
    rng = np.random.default_rng(4)
    x = rng.normal(size=7)
    y = x + rng.normal(size=7)
    res = kendall_censored(x, y)
    ref = stats.kendalltau(x, y, method="exact", alternative="greater")
    assert res.tau == pytest.approx(ref.statistic) and res.p == pytest.approx(ref.pvalue)
    two = kendall_censored(x, y, alternative="two-sided")
    assert two.p == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue)
    ties = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 4.0])
    assert kendall_censored(np.arange(6.0), ties).tau == pytest.approx(
        stats.kendalltau(np.arange(6.0), ties).statistic
    )


def test_a_value_censored_above_everything_ranks_as_the_largest():
    x = np.arange(10.0)
    y = np.array([4.8, 4.7, 4.2, 4.2, 5.2, 6.4, 13.0, 16.0, np.inf, np.inf])
    cens = np.isinf(y)
    res = kendall_censored(x, y, cens, resamples=20_000)
    assert res.tau == pytest.approx(stats.kendalltau(x, np.where(cens, 1e9, y)).statistic)
    # the one pair of censored values is undetermined, as is the tie 4.2 / 4.2
    assert res.undetermined == 2 and res.censored == 2
    # Monte Carlo p (n = 9 > EXACT_N) within a few standard errors of the exact p over all 9! orders
    mc = kendall_censored(x[1:], y[1:], cens[1:], resamples=20_000)
    exact = _exact_p(x[1:], y[1:], cens[1:])
    assert (
        "random orders" in mc.method
        and abs(mc.p - exact) < 4 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4
    )


def _exact_p(x, y, cens):
    """P(S* >= S) over all n! orders, by brute force in numpy chunks (reference for the test)."""
    import itertools

    sy = comparisons(y, cens)
    i, j = np.triu_indices(len(x), 1)
    sx = np.sign(x[i] - x[j])
    s = (sx * sy[i, j]).sum()
    hits = total = 0
    perms = itertools.permutations(range(len(x)))
    while True:
        chunk = np.array(list(itertools.islice(perms, 200_000)))
        if chunk.size == 0:
            return hits / total
        null = (sy[chunk[:, i], chunk[:, j]] * sx).sum(axis=1)
        hits += int((null >= s).sum())
        total += len(chunk)


def test_gehan_comparisons_of_a_censored_value():
    # y2 censored at 5: known to exceed 3 (exact, below 5), unknown against 7 (exact, above 5)
    c = comparisons(np.array([3.0, 7.0, 5.0]), np.array([False, False, True]))
    assert c[2, 0] == 1 and c[0, 2] == -1 and c[2, 1] == 0 and c[1, 0] == 1
    both = comparisons(np.array([5.0, 6.0]), np.array([True, True]))
    assert both[0, 1] == 0 == both[1, 0]


def test_trend_input_errors():
    with pytest.raises(ValueError, match="three or more"):
        kendall_censored([1, 2], [1, 2])
    with pytest.raises(ValueError, match="must not hold NaN"):
        kendall_censored([1, 2, 3], [1, np.nan, 3])
    with pytest.raises(ValueError, match="alternative"):
        kendall_censored([1, 2, 3], [1, 2, 3], alternative="less")

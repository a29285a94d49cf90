"""Lind & Mehlum's U test and Simonsohn's two-lines test (``repro.analysis.turning_point``)
against independent sources: the slope at an end is the linear coefficient of the quadratic
re-centred there (scipy-free least squares on another design), the Fieller interval covers the
true vertex 95% of the time in simulation, and the two lines are scipy's ``linregress`` on each
side of the breakpoint."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.turning_point import fieller_interval, two_lines, u_test

pytestmark = pytest.mark.unit


def _centred_slope_t(x, y, at):
    """t of c1 in y = c0 + c1 (x - at) + c2 (x - at)^2 (c1 is the slope at ``at``)."""
    d = x - at
    design = np.column_stack([np.ones_like(x), d, d * d])
    coef, res, *_ = np.linalg.lstsq(design, y, rcond=None)
    s2 = float(res[0]) / (x.size - 3)
    se = math.sqrt(s2 * np.linalg.inv(design.T @ design)[1, 1])
    return coef[1], coef[1] / se


def test_u_test_slopes_are_the_recentred_linear_coefficients():
    rng = np.random.default_rng(4)
    x = np.sort(rng.uniform(0.2, 0.7, 15))
    y = 40 - 300 * (x - 0.5) ** 2 + rng.normal(scale=2.0, size=15)
    u = u_test(x, y)
    for at, slope, t in ((x.min(), u.slope_low, u.t_low), (x.max(), u.slope_high, u.t_high)):
        want_slope, want_t = _centred_slope_t(x, y, at)
        assert slope == pytest.approx(want_slope, rel=1e-9) and t == pytest.approx(want_t, rel=1e-9)
    assert u.t == min(u.t_low, -u.t_high) and u.p == pytest.approx(stats.t.sf(u.t, 12))
    assert u.vertex == pytest.approx(-u.b1 / (2 * u.b2)) and u.inside and u.inverted_u
    lo, hi = u.vertex_interval
    assert lo < u.vertex < hi
    # the Fieller ends are where the slope's t is exactly the critical value
    tcrit = stats.t.ppf(0.975, 12)
    for end in (lo, hi):
        assert abs(_centred_slope_t(x, y, end)[1]) == pytest.approx(tcrit, rel=1e-7)


def test_monotone_data_is_no_inverted_u():
    x = np.linspace(0, 1, 20)
    y = np.sqrt(x + 0.1) + np.random.default_rng(0).normal(
        scale=0.01, size=20
    )  # concave, increasing
    u = u_test(x, y)
    assert u.b2 < 0 and u.t_high > 0 and not u.inverted_u and not u.inside and u.p > 0.5


def test_fieller_interval_covers_the_vertex_in_simulation():
    rng = np.random.default_rng(1)
    x = np.linspace(0.2, 0.8, 30)
    hits = 0
    sims = 2000
    for _ in range(sims):
        y = -10 * (x - 0.45) ** 2 + rng.normal(scale=0.05, size=x.size)
        lo, hi = u_test(x, y).vertex_interval
        hits += lo <= 0.45 <= hi
    assert hits / sims == pytest.approx(0.95, abs=0.015)


def test_fieller_is_unbounded_without_a_significant_quadratic():
    assert fieller_interval(1.0, -0.01, 0.1, 0.0, 1.0, 1.96) == (-math.inf, math.inf)


def test_two_lines_are_separate_regressions_on_each_side():
    rng = np.random.default_rng(2)
    x = np.sort(rng.uniform(0, 10, 24))
    c = 5.0
    y = np.where(x < c, 2 * (x - c), -3 * (x - c)) + rng.normal(scale=0.5, size=24)
    r = two_lines(x, y, c)
    low, high = stats.linregress(x[x < c], y[x < c]), stats.linregress(x[x >= c], y[x >= c])
    assert r.slope_low == pytest.approx(low.slope) and r.slope_high == pytest.approx(high.slope)
    # pooled residual variance over both lines, 24 - 4 df
    resid = np.r_[
        y[x < c] - (low.intercept + low.slope * x[x < c]),
        y[x >= c] - (high.intercept + high.slope * x[x >= c]),
    ]
    s2 = (resid @ resid) / 20
    for side, slope, p in ((x[x < c], r.slope_low, r.p_low), (x[x >= c], r.slope_high, r.p_high)):
        se = math.sqrt(s2 / ((side - side.mean()) ** 2).sum())
        assert p == pytest.approx(2 * stats.t.sf(abs(slope / se), 20), rel=1e-9)
    assert (
        r.inverted_u
        and (r.n_low, r.n_high) == (int((x < c).sum()), int((x >= c).sum()))
        and r.df == 20
    )


def test_two_lines_needs_two_points_a_side():
    with pytest.raises(ValueError, match="leaves 1 point"):
        two_lines(np.arange(6.0), np.arange(6.0), 1.0)

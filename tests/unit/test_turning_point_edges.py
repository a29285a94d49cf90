"""Edges of the inverted-U tests (``repro.analysis.turning_point``) that the comparisons with
re-centred fits and ``linregress`` leave open: the Fieller interval by hand, the JSON of a test
(an unbounded interval as nulls), the data-range defaults, and the refusals, whole."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.turning_point import fieller_interval, two_lines, u_test, vertex_of

pytestmark = pytest.mark.unit


def test_the_fieller_interval_by_hand():
    # b1 = 1, b2 = -1, var b1 = var b2 = 0.01, t = 2: a = 3.84, b = -4, c = 0.96,
    # disc = 16 - 4 * 3.84 * 0.96 = 1.2544 = 1.12^2: ends (4 -+ 1.12) / 7.68
    lo, hi = fieller_interval(1.0, -1.0, 0.01, 0.0, 0.01, 2.0)
    assert (lo, hi) == (
        pytest.approx(2.88 / 7.68, rel=1e-12),
        pytest.approx(5.12 / 7.68, rel=1e-12),
    )
    # with a covariance of the two: b = 4 (b1 b2 - t^2 v12) = 4 (-1 - 4 * 0.002) = -4.032
    a, b, c = 3.84, -4.032, 0.96
    root = math.sqrt(b * b - 4 * a * c)
    assert fieller_interval(1.0, -1.0, 0.01, 0.002, 0.01, 2.0) == (
        pytest.approx((-b - root) / (2 * a), rel=1e-12),
        pytest.approx((-b + root) / (2 * a), rel=1e-12),
    )


@pytest.mark.parametrize("b2,v22", [(0.0, 0.01), (-0.25, 0.0625), (-0.5, 0.0625)])
def test_a_curvature_not_significant_gives_an_unbounded_interval(b2, v22):
    # a = 4 (b2^2 - t^2 v22) <= 0: b2 within t standard errors of 0 (the last exactly at it:
    # 0.25 = 4 * 0.0625, both exact in binary)
    assert fieller_interval(1.0, b2, 0.01, 0.0, v22, 2.0) == (-math.inf, math.inf)


def test_the_json_of_a_u_test_writes_an_unbounded_interval_as_nulls():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    y = np.array([0.1, 3.1, 3.9, 3.2, 0.2, -4.9])
    doc = u_test(x, y, alpha=1e-9).as_json()  # so small an alpha leaves this interval unbounded
    assert doc["vertex_interval"] == [None, None] and doc["alpha"] == 1e-9
    assert doc["inverted_u"] is False  # p is not below 1e-9
    assert set(doc) == {
        "b1",
        "b2",
        "x_low",
        "x_high",
        "slope_low",
        "slope_high",
        "t_low",
        "t_high",
        "t",
        "p",
        "df",
        "vertex",
        "vertex_interval",
        "alpha",
        "inside",
        "inverted_u",
    }
    bounded = u_test(x, y).as_json()
    lo, hi = bounded["vertex_interval"]
    assert lo < bounded["vertex"] < hi and bounded["inverted_u"] is True


def test_the_range_defaults_to_the_data_and_can_be_set():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    y = np.array([0.1, 3.1, 3.9, 3.2, 0.2, -4.9])
    u = u_test(x, y)
    assert (u.x_low, u.x_high) == (-2.0, 3.0) and u.df == 3
    narrow = u_test(x, y, x_low=-0.5, x_high=0.5)
    assert (narrow.x_low, narrow.x_high) == (-0.5, 0.5)
    assert narrow.slope_low == pytest.approx(u.b1 + 2 * u.b2 * -0.5, rel=1e-12)
    assert narrow.slope_high == pytest.approx(u.b1 + 2 * u.b2 * 0.5, rel=1e-12)
    # a range that stops short of the vertex: it is not inside
    assert not u_test(x, y, x_low=-2.0, x_high=u.vertex - 0.01).inside
    assert u_test(x, y, x_low=u.vertex, x_high=3.0).inside  # the end itself counts


def test_the_refusals_whole():
    cases = [
        (
            lambda: u_test([1, 2, 3], [1, 2]),
            "u_test needs two 1-d arrays of equal length, got (3,) and (2,)",
        ),
        (
            lambda: u_test(np.ones((2, 2)), np.ones((2, 2))),
            "u_test needs two 1-d arrays of equal length, got (2, 2) and (2, 2)",
        ),
        (lambda: u_test([1, 1, 2, 2], [1, 2, 3, 4]), "u_test needs at least 3 distinct x values"),
        (
            lambda: u_test([1, 2, 3], [1, 2, 3]),
            "least squares with 3 coefficients needs more than 3 points, got 3",
        ),
        (
            lambda: two_lines([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], 4.5),
            "two_lines: breakpoint 4.5 "
            "leaves 4 point(s) below and 1 at or above it; each line needs at least 2",
        ),
        (
            lambda: two_lines([1, 2, 3, 4, 5], [1, 2, 3, 4, 5], 2),
            "two_lines: breakpoint 2 "
            "leaves 1 point(s) below and 4 at or above it; each line needs at least 2",
        ),
        (
            lambda: two_lines([1, 2, 3, 4], [1, 2, 3, 4], 2.5),
            "least squares with 4 coefficients needs more than 4 points, got 4",
        ),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == message


def test_two_lines_counts_the_breakpoint_itself_above():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = np.array([0.0, 1.1, 1.9, 3.0, 2.1, 0.9, 0.1])
    t = two_lines(x, y, 3.0)
    assert (t.n_low, t.n_high, t.breakpoint, t.df) == (3, 4, 3.0, 3)
    assert t.as_json()["inverted_u"] == t.inverted_u


def test_two_lines_tests_at_five_percent_by_default():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = np.array([0.0, 1.1, 1.9, 3.0, 2.1, 0.9, 0.1])
    t = two_lines(x, y, 3.0)
    assert t.alpha == 0.05
    assert t.inverted_u is (t.p_low < 0.05 and t.p_high < 0.05)


def test_a_fit_without_curvature_has_no_vertex():
    # least squares gives b2 = 0 exactly here (on other kernels it may be a rounding error away
    # from 0): the vertex is undefined, or so far out that it is not inside
    u = u_test([-2.0, -1.0, 0.0, 1.0, 2.0], [1.0, -1.0, -3.0, 5.0, -2.0])
    assert abs(u.b2) < 1e-12
    assert (math.isnan(u.vertex) or abs(u.vertex) > 1e9) and not u.inside
    assert u.vertex_interval == (-math.inf, math.inf)


def test_the_vertex_of_a_curvature_of_exactly_one():
    # b2 = 1 exactly here (a U, not an inverted one): the vertex is -b1 / 2
    u = u_test([0.0, 1.0, 2.0, 3.0], [5.0, 5.0, -1.0, 3.0])
    assert u.b2 == pytest.approx(1.0, rel=1e-12)
    assert u.vertex == pytest.approx(-u.b1 / 2, rel=1e-12) and not u.inverted_u


def test_two_lines_p_values_are_two_sided_t_tests_of_each_slope():
    # the same model written with a separate intercept and slope per side: the column space, the
    # residuals and so each slope's standard error are the same
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    y = np.array([0.2, 1.1, 1.7, 3.2, 2.1, 1.4, 0.1, -0.6])
    t = two_lines(x, y, 3.0)
    high = x >= 3.0
    design = np.column_stack([~high, np.where(high, 0.0, x), high, np.where(high, x, 0.0)]).astype(
        float
    )
    coef, res, *_ = np.linalg.lstsq(design, y, rcond=None)
    cov = float(res[0]) / 4 * np.linalg.inv(design.T @ design)
    for slope, p, k in ((t.slope_low, t.p_low, 1), (t.slope_high, t.p_high, 3)):
        se = math.sqrt(cov[k, k])
        assert slope == pytest.approx(coef[k], rel=1e-9)
        assert p == pytest.approx(2 * stats.t.sf(abs(coef[k] / se), 4), rel=1e-9)


def test_the_fieller_interval_at_small_scales_and_without_uncertainty():
    # the hand case scaled by 1/10 (a = 0.0384 < 1): the same ends
    assert fieller_interval(0.1, -0.1, 0.0001, 0.0, 0.0001, 2.0) == (
        pytest.approx(2.88 / 7.68, rel=1e-9),
        pytest.approx(5.12 / 7.68, rel=1e-9),
    )
    # no uncertainty: disc = 0 and the interval is the vertex -b1 / (2 b2) itself
    assert fieller_interval(1.0, -1.0, 0.0, 0.0, 0.0, 2.0) == (0.5, 0.5)


def test_a_vertex_at_the_high_end_of_the_range_is_inside():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    y = np.array([0.1, 3.1, 3.9, 3.2, 0.2, -4.9])
    u = u_test(x, y)
    assert u_test(x, y, x_low=-2.0, x_high=u.vertex).inside
    assert not u_test(x, y, x_low=-2.0, x_high=math.nextafter(u.vertex, -math.inf)).inside


@pytest.mark.parametrize(
    ("b1", "b2", "want"),
    [(3.0, 1.0, -1.5), (3.0, -0.5, 3.0), (3.0, 2.0, -0.75), (-1.0, 0.25, 2.0)],
)
def test_the_vertex_is_minus_b1_over_twice_b2(b1, b2, want):
    """Exact binary fractions: the vertex is exact, whatever kernels computed the fit (the fits
    above reach b2 = 0 or 1 exactly only on some kernels)."""
    assert vertex_of(b1, b2) == want


def test_without_curvature_the_vertex_is_undefined():
    assert math.isnan(vertex_of(3.0, 0.0)) and math.isnan(vertex_of(0.0, -0.0))

"""The partial rank correlation at its edges (``repro.analysis.partial_rank``): the refusals whole,
the smallest n it answers for, which triples it keeps, the undefined case (a variable that the
control explains completely), a perfect partial correlation, and the p-value's degrees of
freedom (n - 3) against the t distribution directly."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from repro.analysis.partial_rank import partial_spearman
from tests.partial_by_hand import direct_partial

pytestmark = pytest.mark.unit


def _refusal(*args) -> str:
    with pytest.raises(ValueError) as e:
        partial_spearman(*args)
    return str(e.value)


def test_refusals_are_whole():
    assert _refusal([1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3]) == (
        "partial_spearman needs three 1-d arrays of equal length, got (4,), (4,), (3,)"
    )
    assert _refusal([1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 4]) == (
        "partial_spearman needs three 1-d arrays of equal length, got (3,), (4,), (4,)"
    )
    grid = np.ones((2, 4))
    assert _refusal(grid, grid, grid) == (
        "partial_spearman needs three 1-d arrays of equal length, got (2, 4), (2, 4), (2, 4)"
    )
    assert _refusal([1, 2, 3], [3, 1, 2], [1, 3, 2]) == (
        "partial_spearman needs at least 4 complete triples, got 3"
    )
    # four values, one of them incomplete: three triples
    assert _refusal([1, 2, 3, 4], [3, 1, 2, math.nan], [1, 3, 2, 4]) == (
        "partial_spearman needs at least 4 complete triples, got 3"
    )


@pytest.mark.parametrize("where", [0, 1, 2])
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_triple_with_any_non_finite_value_is_dropped(where, bad):
    rng = np.random.default_rng(11)
    cols = [rng.normal(size=9) for _ in range(3)]
    full = partial_spearman(*(c[1:] for c in cols))
    cols[where][0] = bad
    assert partial_spearman(*cols) == pytest.approx(full, abs=1e-15)
    assert partial_spearman(*cols)[2] == 8


def test_four_triples_is_enough_and_the_p_value_has_n_minus_3_dof():
    x, y, z = [1.0, 2, 3, 4], [1.0, 3, 4, 2], [1.0, 4, 2, 3]
    rho, p, n = partial_spearman(x, y, z)
    want_rho, want_p = direct_partial(x, y, z)
    assert n == 4 and rho == pytest.approx(want_rho, abs=1e-12)
    t = rho * math.sqrt(1 / (1 - rho**2))
    assert p == pytest.approx(2 * stats.t.sf(abs(t), 1), rel=1e-12)
    assert p == pytest.approx(want_p, rel=1e-9)


def test_a_negative_partial_correlation_keeps_its_sign_and_a_two_sided_p():
    rng = np.random.default_rng(5)
    z = rng.normal(size=30)
    x = z + rng.normal(size=30)
    y = z - x + 0.3 * rng.normal(size=30)
    rho, p, n = partial_spearman(x, y, z)
    want_rho, want_p = direct_partial(x, y, z)
    assert rho < -0.5 and rho == pytest.approx(want_rho, abs=1e-12)
    assert p == pytest.approx(want_p, rel=1e-9) and 0 < p < 1e-3
    # swapping x and y changes nothing
    assert partial_spearman(y, x, z) == pytest.approx((rho, p, n), rel=1e-12)


def test_a_variable_explained_by_the_control_is_undefined():
    z = [1.0, 2, 3, 4, 5, 6]
    y = [3.0, 1, 2, 6, 4, 5]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for x in ([10.0, 20, 30, 40, 50, 60], [6.0, 5, 4, 3, 2, 1]):  # rank(x) = +-rank(z)
            rho, p, n = partial_spearman(x, y, z)
            assert math.isnan(rho) and math.isnan(p) and n == 6
        # a constant control leaves nothing to hold fixed: undefined too
        rho, p, n = partial_spearman([1.0, 2, 3, 4, 5, 6], y, [2.0] * 6)
        assert math.isnan(rho) and math.isnan(p) and n == 6


def test_a_perfect_partial_correlation_has_p_zero():
    z = [1.0, 4, 2, 6, 3, 5]
    x = [1.0, 2, 3, 4, 5, 6]
    for y, sign in ((x, 1.0), ([-v for v in x], -1.0)):
        rho, p, n = partial_spearman(x, y, z)
        assert rho == sign and p == 0.0 and n == 6


def test_a_control_uncorrelated_with_both_leaves_spearmans_rho():
    # rank correlations with z exactly 0: the partial correlation is the plain one, p with n - 3 dof
    x, y, z = [1.0, 2, 3, 4, 5], [2.0, 1, 5, 4, 3], [1.0, 5, 4, 3, 2]
    assert stats.spearmanr(x, z).statistic == 0.0 and stats.spearmanr(y, z).statistic == 0.0
    rho, p, n = partial_spearman(x, y, z)
    assert n == 5 and rho == pytest.approx(0.5, abs=1e-12)
    assert p == pytest.approx(2 * stats.t.sf(0.5 * math.sqrt(2 / 0.75), 2), rel=1e-9)


def test_missing_values_given_as_none_are_dropped_like_nan():
    x, y, z = [1, 2, 3, 4, 5, 6], [1, 3, 4, 2, 6, 5], [2, 1, 4, 3, 5, 6]
    full = partial_spearman(x[1:], y[1:], z[1:])
    for col in range(3):
        cols = [list(x), list(y), list(z)]
        cols[col][0] = None
        assert partial_spearman(*cols) == pytest.approx(full, abs=1e-15)


def test_a_perfect_partial_correlation_is_clipped_to_one():
    # found by search: (rxy - rxz ryz) / denom rounds to 1.0000000000000002 here (x = y)
    x = [14, 16, 7, 19, 0, 19, 19, 23, 21, 8, 13, 14, 6, 10, 11, 7, 0, 6, 14, 13, 11, 18, 5, 14]
    z = [22, 8, 21, 14, 23, 11, 6, 3, 2, 12, 11, 14, 19, 12, 16, 9, 12, 14, 7, 18, 7, 12, 21, 13]
    rho, p, n = partial_spearman(x, x, z)
    assert (rho, p, n) == (1.0, 0.0, 24)
    rho, p, n = partial_spearman(x, [-v for v in x], z)
    assert (rho, p, n) == (-1.0, 0.0, 24)

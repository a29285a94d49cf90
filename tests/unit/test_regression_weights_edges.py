"""Edges of the weighted R^2 (``repro.analysis.regression.weighted_r_squared``) and of the
censored comparisons (``repro.analysis.trend.comparisons``) that the expanded-sample tests leave
open: predictors that are collinear only through the intercept, predictor values of zero, and
censoring flags given as 0/1 integers."""

from __future__ import annotations

import numpy as np
import pytest

from repro.analysis.regression import r_squared, weighted_r_squared
from repro.analysis.trend import comparisons

pytestmark = pytest.mark.unit


def _expanded(x, y, w):
    return [
        r_squared(np.repeat(x, row.astype(int), axis=0), np.repeat(y, row.astype(int))) for row in w
    ]


def test_predictors_collinear_through_the_intercept_give_no_weighted_fit():
    # x2 = x1 + 1: with the intercept the design has rank 2 of 3, in every resample
    rng = np.random.default_rng(7)
    x1 = rng.normal(size=12)
    x = np.column_stack([x1, x1 + 1.0])
    y = x1 + rng.normal(size=12)
    w = rng.integers(1, 3, size=(5, 12)).astype(float)
    assert np.isnan(_expanded(x, y, w)).all()
    assert np.isnan(weighted_r_squared(x, y, w)).all()


def test_a_predictor_value_of_zero_is_weighted_like_any_other():
    x = np.array([0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 5.0, 2.5])
    y = np.array([0.3, 1.1, 1.9, -0.2, 3.4, 3.8, 5.3, 2.2])
    w = np.array([[1, 2, 1, 0, 1, 1, 2, 1], [2, 1, 1, 1, 0, 1, 1, 1]], dtype=float)
    got = weighted_r_squared(x, y, w)
    np.testing.assert_allclose(got, _expanded(x, y, w), rtol=1e-10)
    assert np.isfinite(got).all() and (got > 0.9).all()


def test_censoring_flags_as_integers_read_as_booleans():
    y = np.array([3.0, 7.0, 5.0, 4.0])
    as_bool = comparisons(y, np.array([False, False, True, True]))
    assert (comparisons(y, [0, 0, 1, 1]) == as_bool).all()
    assert (comparisons([3, 7, 5, 4], np.array([0, 0, 1, 1])) == as_bool).all()
    # y2 (censored at 5) exceeds y0 = 3 and y3 (censored at 4) exceeds y0; the rest is unknown
    assert as_bool[2, 0] == 1 and as_bool[3, 0] == 1 and as_bool[2, 3] == 0 and as_bool[1, 3] == 0


def test_the_weighted_r_squared_of_small_values_is_scale_free():
    # outcomes in hundredths: every total sum of squares is below 1, and R^2 does not change
    rng = np.random.default_rng(11)
    x = rng.normal(size=15)
    y = 0.5 * x + rng.normal(size=15)
    w = rng.integers(0, 3, size=(8, 15)).astype(float)
    w[:, :5] += 1.0  # at least 5 units in every resample
    small = weighted_r_squared(x, y / 100, w)
    np.testing.assert_allclose(small, weighted_r_squared(x, y, w), rtol=1e-10)
    np.testing.assert_allclose(small, _expanded(x, y / 100, w), rtol=1e-10)
    assert np.isfinite(small).all()


def test_a_resample_whose_outcomes_are_all_equal_has_no_weighted_r_squared():
    # units 0-3 share one outcome; a resample of only them is a constant outcome: undefined
    x = np.array([0.5, 1.0, 2.0, 3.0, 4.0, 5.0])
    y = np.array([2.0, 2.0, 2.0, 2.0, 1.0, 3.5])
    w = np.array([[1, 2, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=float)
    got = weighted_r_squared(x, y, w)
    assert np.isnan(got[0]) and np.isnan(_expanded(x, y, w[:1])[0])
    assert got[1] == pytest.approx(_expanded(x, y, w[1:])[0], rel=1e-12)

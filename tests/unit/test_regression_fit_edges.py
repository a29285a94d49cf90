"""Edges of the least-squares fit (``repro.analysis.regression``) that the comparisons with
``linregress`` and numpy leave open: a perfect fit (F infinite, p 0), an undetermined one (every
field NaN), the JSON of a fit, the F-test's p of many R^2 at once against scipy's F
distribution, and the masked fits of many redrawn tables against ``ols`` on each one's units."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.regression import f_test_p, ols, ols_rows

pytestmark = pytest.mark.unit


def test_predictor_names_must_match_the_predictors():
    with pytest.raises(ValueError) as e:
        ols(np.ones((5, 2)), np.arange(5.0), ["a"])
    assert str(e.value) == "1 predictor names for 2 predictors"


def test_a_perfect_fit_has_an_infinite_f_and_p_zero():
    fit = ols(np.arange(5.0), 2 * np.arange(5.0) + 1, ["x"])
    assert (fit.r2, fit.adjusted_r2, fit.f, fit.p, fit.n) == (1.0, 1.0, math.inf, 0.0, 5)
    assert fit.coef == (pytest.approx(1.0, abs=1e-12), pytest.approx(2.0, rel=1e-12))


def test_an_undetermined_fit_is_nan_in_every_field():
    fit = ols(np.arange(4.0)[:, None].repeat(2, axis=1), np.arange(4.0))
    assert fit.predictors == ("x1", "x2") and fit.n == 4 and len(fit.coef) == 3
    assert all(math.isnan(v) for v in (fit.r2, fit.adjusted_r2, fit.f, fit.p, *fit.coef))


def test_the_json_of_a_fit_names_its_coefficients():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(12, 2))
    y = x @ np.array([0.7, -0.2]) + rng.normal(size=12)
    fit = ols(x, y, ["shape", "texture"])
    design = np.column_stack([np.ones(12), x])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    resid = y - design @ coef
    r2 = 1 - resid @ resid / ((y - y.mean()) @ (y - y.mean()))
    f = (r2 / 2) / ((1 - r2) / 9)
    assert fit.as_json() == {
        "r2": pytest.approx(r2, rel=1e-12),
        "adjusted_r2": pytest.approx(1 - (1 - r2) * 11 / 9, rel=1e-12),
        "f": pytest.approx(f, rel=1e-10),
        "p": pytest.approx(stats.f.sf(f, 2, 9), rel=1e-9),
        "n": 12,
        "df": [2, 9],
        "predictors": ["shape", "texture"],
        "coef": {
            "intercept": pytest.approx(coef[0], rel=1e-10),
            "shape": pytest.approx(coef[1], rel=1e-10),
            "texture": pytest.approx(coef[2], rel=1e-10),
        },
    }


def test_the_f_test_p_of_many_r_squared_at_once():
    got = f_test_p(np.array([0.5, 1.0, np.nan, 0.5, 0.2]), np.array([10, 10, 10, 3, 30]), 2)
    # F = (0.5 / 2) / (0.5 / 7) = 3.5 on (2, 7); R^2 = 1: 0; NaN: NaN; n = 3: no residual df
    assert got[0] == pytest.approx(stats.f.sf(3.5, 2, 7), rel=1e-12)
    assert got[1] == 0.0 and math.isnan(got[2]) and math.isnan(got[3])
    assert got[4] == pytest.approx(stats.f.sf((0.2 / 2) / (0.8 / 27), 2, 27), rel=1e-12)


def test_masked_fits_are_ols_on_each_rows_units():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(4, 9, 2))
    y = x[..., 0] - 0.5 * x[..., 1] + rng.normal(size=(4, 9))
    mask = np.ones((4, 9), dtype=bool)
    mask[1, :3] = False  # six units left
    y[2, 4] = np.nan  # a unit without a value is left out like a masked one
    mask[3, 3:] = False  # three units for three parameters: undetermined
    r2, n, p = ols_rows(x, y, mask)
    assert n.tolist() == [9, 6, 8, 3]
    for b, units in ((0, slice(None)), (1, slice(3, None)), (2, [0, 1, 2, 3, 5, 6, 7, 8])):
        fit = ols(x[b][units], y[b][units])
        assert r2[b] == pytest.approx(fit.r2, rel=1e-9) and p[b] == pytest.approx(fit.p, rel=1e-8)
    assert math.isnan(r2[3]) and math.isnan(p[3])


def test_a_masked_fit_with_a_constant_outcome_is_undefined():
    x = np.arange(12.0).reshape(1, 6, 2) ** 1.5
    y = np.array([[1.0, 1.0, 1.0, 1.0, 5.0, 7.0]])
    mask = np.array([[True, True, True, True, False, False]])
    r2, n, p = ols_rows(x, y, mask)
    assert n.tolist() == [4] and math.isnan(r2[0]) and math.isnan(p[0])
    full = ols_rows(x, y, np.ones_like(mask))[0]
    assert full[0] == pytest.approx(ols(x[0], y[0]).r2, rel=1e-9)


def test_a_constant_outcome_is_undefined_in_its_own_row_only():
    # row 0: every unit's outcome is 0.1 (a constant whose mean is not exact in binary); row 1
    # varies with larger values: each row is judged constant by its own values
    rng = np.random.default_rng(12)
    x = rng.normal(size=(2, 7, 1))
    y = np.vstack([np.full(7, 0.1), 5.0 + rng.normal(size=7)])
    r2, n, p = ols_rows(x, y, np.ones((2, 7), dtype=bool))
    assert math.isnan(r2[0]) and math.isnan(p[0])
    assert r2[1] == pytest.approx(ols(x[1], y[1]).r2, rel=1e-9)
    # the other way round: the constant row holds the larger values
    r2, _, _ = ols_rows(x, y[::-1] * [[1.0], [100.0]], np.ones((2, 7), dtype=bool))
    assert math.isnan(r2[1]) and np.isfinite(r2[0])


def test_the_f_test_p_with_one_residual_degree_of_freedom():
    # two slopes over four units: F on (2, 1); three units leave no residual df
    got = f_test_p(np.array([0.9, 0.9]), np.array([4, 3]), 2)
    assert got[0] == pytest.approx(stats.f.sf((0.9 / 2) / (0.1 / 1), 2, 1), rel=1e-12)
    assert math.isnan(got[1])

"""Equivalence tests (repro.analysis.equivalence) against closed forms: the Fisher-z interval
with the Bonett-Wright variance, TOST p-values consistent with the interval rule, the bound as
the smallest passing margin, and the undefined cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.equivalence import (
    interval_equivalence,
    smallest_spearman_bound,
    spearman_equivalence,
    spearman_interval,
)

pytestmark = pytest.mark.unit


def test_bound_at_rho_zero_is_the_closed_form():
    # tanh(z_0.95 / sqrt(45)) for n = 48: 1.6448536 / 6.7082039 = 0.2452000 -> tanh = 0.2404000...
    expected = math.tanh(1.6448536269514722 / math.sqrt(45))
    assert smallest_spearman_bound(48) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.24041, abs=1e-5)
    r = spearman_equivalence(0.0, 48, 0.3)
    assert r.bound == pytest.approx(expected, rel=1e-12) and r.passed
    assert not spearman_equivalence(
        0.0, 48, 0.24
    ).passed  # below the smallest bound: can never pass


def test_interval_uses_bonett_wright_variance():
    rho, n = -0.6, 33
    se = math.sqrt((1 + 0.36 / 2) / 30)
    lo, hi = spearman_interval(rho, n, 0.95)
    assert lo == pytest.approx(math.tanh(math.atanh(-0.6) - 1.959963984540054 * se), rel=1e-12)
    assert hi == pytest.approx(math.tanh(math.atanh(-0.6) + 1.959963984540054 * se), rel=1e-12)


@pytest.mark.parametrize("rho, n", [(0.05, 48), (-0.12, 48), (0.2, 15), (0.31, 33), (-0.02, 10)])
def test_tost_p_agrees_with_interval_rule_and_bound(rho, n):
    r = spearman_equivalence(rho, n, 0.4)
    assert (r.p < 0.05) == r.passed
    for margin in np.linspace(0.01, 0.99, 99):
        assert spearman_equivalence(rho, n, float(margin)).passed == (margin > r.bound)


def test_tost_p_against_simulation_of_the_z_statistic():
    """Under rho = margin on the z scale the upper one-sided test rejects alpha of the time."""
    rng = np.random.default_rng(0)
    n, margin = 48, 0.3
    se = math.sqrt((1 + margin**2 / 2) / (n - 3))
    z = rng.normal(math.atanh(margin), se, size=20000)
    p_high = stats.norm.cdf((z - math.atanh(margin)) / se)
    assert np.mean(p_high < 0.05) == pytest.approx(0.05, abs=0.006)


def test_undefined_and_degenerate_cases():
    assert not spearman_equivalence(0.1, 3, 0.3).defined
    assert "n > 3" in spearman_equivalence(0.1, 3, 0.3).why
    assert not spearman_equivalence(float("nan"), 20, 0.3).defined
    perfect = spearman_equivalence(-1.0, 15, 0.5)
    assert perfect.defined and not perfect.passed and "|rho| = 1" in perfect.why
    with pytest.raises(ValueError, match=r"margin for Spearman's rho must lie in \(0, 1\)"):
        spearman_equivalence(0.1, 20, 1.5)


def test_interval_equivalence_for_a_difference():
    ok = interval_equivalence(0.02, (-0.03, 0.07), 0.1)
    assert ok.passed and ok.bound == pytest.approx(0.07)
    assert not interval_equivalence(0.02, (-0.03, 0.12), 0.1).passed
    assert interval_equivalence(
        0.0, (0.0, 0.0), 0.0
    ).passed  # an exact zero difference agrees at margin 0
    assert not interval_equivalence(float("nan"), (0.0, 0.1), 0.1).defined
    with pytest.raises(ValueError, match="low end above its high end"):
        interval_equivalence(0.0, (0.1, -0.1), 0.2)

"""The edges of the equivalence tests and the p-value adjustments (``repro.analysis.equivalence``,
``repro.analysis.multiple``): each refusal's message whole, each boundary on both sides (a bound
exactly at the margin, n = 3 and n = 4 pairs), the fields of undefined results, and the alpha
and null each function is given. The closed forms are in test_equivalence.py and
test_robustness_statistics.py."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from repro.analysis.equivalence import (
    EquivalenceResult,
    fisher_z_se,
    interval_equivalence,
    smallest_spearman_bound,
    spearman_equivalence,
    spearman_interval,
)
from repro.analysis.multiple import METHODS, adjust, benjamini_hochberg, holm

pytestmark = pytest.mark.unit

TOST = "TOST on Fisher z, Bonett-Wright variance"


# --------------------------------------------------------------------------- adjustments


def test_holm_follows_its_definition_with_ties_and_keeps_the_order_given():
    rng = np.random.default_rng(11)
    for m in (1, 2, 5, 9):
        p = np.round(rng.random(m) ** 2, 2)  # rounded: ties occur
        order = sorted(range(m), key=lambda i: (p[i], i))
        expected = [0.0] * m
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p[i]))
            expected[i] = running
        assert holm(p) == pytest.approx(expected, abs=0, rel=1e-15)
    assert holm([0.02, 0.02]) == [0.04, 0.04]
    assert holm([0.0, 1.0]) == [0.0, 1.0]
    assert isinstance(holm(np.array([0.5])), list)


def test_benjamini_hochberg_follows_its_definition():
    rng = np.random.default_rng(12)
    p = rng.random(8) ** 2
    m = p.size
    order = np.argsort(p)
    expected = np.empty(m)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, p[i] * m / (rank + 1))
        expected[i] = running
    assert benjamini_hochberg(p) == pytest.approx(expected.tolist(), rel=1e-12)
    assert benjamini_hochberg([]) == []
    assert adjust(p, "bh") == benjamini_hochberg(p)
    assert adjust(p, "holm") == holm(p) and adjust(p, "bh") != holm(p)
    assert METHODS == ("holm", "bh")


@pytest.mark.parametrize("func", [holm, benjamini_hochberg])
def test_adjustments_refuse_what_is_not_a_list_of_p_values(func):
    with pytest.raises(ValueError) as err:
        func([[0.1, 0.2]])
    assert str(err.value) == "adjusted p-values need a 1-d list of p-values, got shape (1, 2)"
    for bad in ([0.1, -0.01], [1.01], [math.inf], [0.2, math.nan]):
        with pytest.raises(ValueError) as err:
            func(bad)
        assert str(err.value) == "adjusted p-values need p-values in [0, 1] (no NaN)"
    assert func([0.0, 1.0])[1] == 1.0  # the ends of [0, 1] are p-values


def test_an_unknown_adjustment_names_the_known_ones():
    with pytest.raises(ValueError) as err:
        adjust([0.1], "bonferroni")
    assert str(err.value) == "unknown p-value adjustment 'bonferroni' (known: holm, bh)"


# --------------------------------------------------------------------------- interval inclusion


def test_interval_equivalence_records_what_it_was_given():
    r = interval_equivalence(0.02, (-0.03, 0.07), 0.1, alpha=0.01, method="paired")
    assert r == EquivalenceResult(0.02, (-0.03, 0.07), 0.1, 0.01, 0.07, True, math.nan, "paired")
    assert r.p != r.p and r.defined and r.why == ""
    assert interval_equivalence(0.0, (-0.1, 0.1), 0.1).passed  # bound == margin passes
    assert interval_equivalence(0.0, (-0.1, 0.1), 0.1).method == "interval inclusion"
    assert interval_equivalence(0.0, (-0.1, 0.1), 0.1).alpha == 0.05
    # around another null value: the bound is the distance from it
    shifted = interval_equivalence(1.02, (0.95, 1.08), 0.1, null=1.0)
    assert shifted.bound == pytest.approx(0.08) and shifted.passed
    assert not interval_equivalence(1.02, (0.95, 1.08), 0.05, null=1.0).passed
    assert interval_equivalence(0.0, (-0.2, 0.05), 0.3).bound == pytest.approx(0.2)


def test_interval_equivalence_refusals_and_undefined_inputs():
    for margin in (-0.1, math.inf, math.nan):
        with pytest.raises(ValueError) as err:
            interval_equivalence(0.0, (0.0, 0.0), margin)
        assert str(err.value) == (
            f"equivalence margin must be a finite number >= 0, got {margin!r}"
        )
    with pytest.raises(ValueError) as err:
        interval_equivalence(0.0, (0.1, -0.1), 0.2)
    assert str(err.value) == "interval [0.1, -0.1] has its low end above its high end"
    for estimate, interval in ((0.0, (math.nan, 0.1)), (0.0, (0.0, math.nan))):
        r = interval_equivalence(estimate, interval, 0.1, alpha=0.025, method="m")
        assert r.as_json() == {
            "estimate": 0.0,
            "interval": [None, None],
            "margin": 0.1,
            "alpha": 0.025,
            "bound": None,
            "passed": False,
            "p": None,
            "method": "m",
            "defined": False,
            "why": "the estimate or its interval is undefined (NaN)",
        }


# --------------------------------------------------------------------------- Spearman's rho


def test_the_fisher_z_interval_at_its_limits():
    assert fisher_z_se(0.5, 13) == pytest.approx(math.sqrt(1.125 / 10), rel=1e-15)
    q = NormalDist().inv_cdf(0.95)
    lo, hi = spearman_interval(0.3, 4, 0.9)  # n = 4: the smallest n with an interval
    se = math.sqrt((1 + 0.09 / 2) / 1)
    assert (lo, hi) == (
        pytest.approx(math.tanh(math.atanh(0.3) - q * se), rel=1e-12),
        pytest.approx(math.tanh(math.atanh(0.3) + q * se), rel=1e-12),
    )
    with pytest.raises(ValueError) as err:
        spearman_interval(0.3, 3, 0.9)
    assert str(err.value) == "a Fisher-z interval needs n > 3 pairs, got n = 3"
    assert spearman_interval(1.0, 10, 0.9) == (1.0, 1.0)
    assert spearman_interval(-1.0, 10, 0.9) == (-1.0, -1.0)


def test_spearman_equivalence_p_values_and_its_strict_bound():
    rho, n, margin = 0.1, 30, 0.4
    r = spearman_equivalence(rho, n, margin, alpha=0.1)
    se = math.sqrt((1 + rho * rho / 2) / (n - 3))
    z, zm = math.atanh(rho), math.atanh(margin)
    p_low = NormalDist().cdf(-(z + zm) / se)
    p_high = NormalDist().cdf((z - zm) / se)
    assert r.p == pytest.approx(max(p_low, p_high), rel=1e-9)
    assert r.p == pytest.approx(p_high, rel=1e-9) and p_high > p_low  # rho > 0: the upper test
    assert spearman_equivalence(-rho, n, margin).p == pytest.approx(p_high, rel=1e-9)
    lo, hi = spearman_interval(rho, n, 0.8)  # the (1 - 2 alpha) interval at alpha 0.1
    assert r.interval == (lo, hi) and r.bound == max(abs(lo), abs(hi)) and r.alpha == 0.1
    assert r.method == TOST and r.defined and r.why == ""
    assert (r.estimate, r.margin) == (rho, margin)
    # the bound is the smallest margin that does NOT pass: |rho| < margin is strict
    at_bound = spearman_equivalence(rho, n, r.bound, alpha=0.1)
    assert at_bound.bound == r.bound and not at_bound.passed
    assert spearman_equivalence(rho, n, min(0.99, r.bound * (1 + 1e-9)), alpha=0.1).passed


def test_spearman_equivalence_undefined_and_refused_cases_whole():
    for margin in (0.0, 1.0, -0.2, 1.2):
        with pytest.raises(ValueError) as err:
            spearman_equivalence(0.1, 20, margin)
        assert str(err.value) == f"a margin for Spearman's rho must lie in (0, 1), got {margin!r}"
    nan = spearman_equivalence(math.nan, 20, 0.3, alpha=0.02)
    assert nan.as_json() == {
        "estimate": None,
        "interval": [None, None],
        "margin": 0.3,
        "alpha": 0.02,
        "bound": None,
        "passed": False,
        "p": None,
        "method": TOST,
        "defined": False,
        "why": "rho is undefined (NaN)",
    }
    # NaN, not None: float fields that a reader may test with math.isnan
    assert math.isnan(nan.p) and math.isnan(nan.bound) and math.isnan(nan.estimate)
    three = spearman_equivalence(0.1, 3, 0.3, alpha=0.02)
    assert not three.defined and three.why == "n = 3 pairs: a Fisher-z interval needs n > 3"
    assert (three.estimate, three.margin, three.alpha, three.method) == (0.1, 0.3, 0.02, TOST)
    assert math.isnan(three.bound) and math.isnan(three.p) and not three.passed
    four = spearman_equivalence(0.1, 4, 0.3)
    assert four.defined and four.why == "" and not math.isnan(four.bound)
    perfect = spearman_equivalence(1.0, 15, 0.5, alpha=0.01)
    assert perfect == EquivalenceResult(
        1.0,
        (1.0, 1.0),
        0.5,
        0.01,
        1.0,
        False,
        1.0,
        TOST,
        True,
        "|rho| = 1: perfectly rank-correlated, never equivalent to 0",
    )
    assert spearman_equivalence(-1.0, 15, 0.5).bound == 1.0


def test_the_smallest_bound_at_its_limits_and_its_alpha():
    assert math.isnan(smallest_spearman_bound(3))
    assert smallest_spearman_bound(4) == pytest.approx(math.tanh(NormalDist().inv_cdf(0.95)))
    assert smallest_spearman_bound(28, alpha=0.025) == pytest.approx(
        math.tanh(NormalDist().inv_cdf(0.975) / 5), rel=1e-12
    )
    assert smallest_spearman_bound(28, alpha=0.025) == pytest.approx(
        spearman_equivalence(0.0, 28, 0.5, alpha=0.025).bound, rel=1e-12
    )


def test_a_defined_result_keeps_its_numbers_in_json():
    """Only NaN becomes null: the interval, bound and p of a defined result are written as they
    are."""
    r = spearman_equivalence(0.1, 30, 0.4, alpha=0.1)
    lo, hi = spearman_interval(0.1, 30, 0.8)
    assert r.as_json() == {
        "estimate": 0.1,
        "interval": [lo, hi],
        "margin": 0.4,
        "alpha": 0.1,
        "bound": max(abs(lo), abs(hi)),
        "passed": True,
        "p": r.p,
        "method": TOST,
        "defined": True,
        "why": "",
    }
    assert r.as_json()["bound"] > 0 and r.as_json()["p"] > 0 and lo < 0 < hi

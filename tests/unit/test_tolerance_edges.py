"""Edges of the tolerance policies that the policy tests in ``test_tolerance_policies`` leave
open (found by ``nox -s mutants``): the boundaries of the binomial policy (n = 1, published
rates 0 and 1, counts 0 and n, the rate/count switch at 1, a difference exactly on the
half-width), its exact explanation text, the full error messages, and an outcome recorded
without provenance.

Expected half-widths come from scipy (``scipy.stats.norm`` for z, ``scipy.stats.binom`` for the
standard deviation of a count), not from the formula in ``repro.claims.tolerance``.
"""

from __future__ import annotations

import math

import pytest
from scipy import stats

from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError
from repro.claims import tolerance as tol
from repro.claims.check import ClaimOutcome
from repro.claims.spec import Claim, Tolerance
from repro.claims.verdict import UNDEFINED

pytestmark = pytest.mark.unit


def R(value, n=None, **details):
    return StatisticResult(value=value, p=None, n=n, interval=None, details=details, sources={})


# ----------------------------------------------------------------- binomial against scipy


@pytest.mark.parametrize("p,n", [(0.21, 1200), (0.5, 48), (0.9, 10), (0.5, 1)])
def test_binomial_rate_halfwidth_is_scipys_normal_interval(p, n):
    """With z = the 97.5% normal quantile, the policy's band is scipy's 95% normal interval
    around the published rate with the binomial standard error binom.std(n, p) / n."""
    z = stats.norm.ppf(0.975)
    lo, hi = stats.norm.interval(0.95, loc=p, scale=stats.binom.std(n, p) / n)
    for bound in (lo, hi):
        inside = p + (bound - p) * (1 - 1e-9)
        outside = p + (bound - p) * (1 + 1e-9)
        assert tol.binomial(p, R(inside), {"n": n, "z": z}).passed
        assert not tol.binomial(p, R(outside), {"n": n, "z": z}).passed


@pytest.mark.parametrize("k,n", [(34, 48), (2, 48), (5, 7)])
def test_binomial_count_halfwidth_is_scipys_normal_interval(k, n):
    """A published count k of n: the band is z * binom.std(n, k / n) counts wide each side."""
    z = stats.norm.ppf(0.975)
    half = z * stats.binom.std(n, k / n)
    assert tol.binomial(k, R(k + half * (1 - 1e-9)), {"n": n, "z": z}).passed
    assert not tol.binomial(k, R(k + half * (1 + 1e-9)), {"n": n, "z": z}).passed
    assert tol.binomial(k, R(k - half * (1 - 1e-9)), {"n": n, "z": z}).passed
    assert not tol.binomial(k, R(k - half * (1 + 1e-9)), {"n": n, "z": z}).passed


# ----------------------------------------------------------------------- binomial boundaries


def test_binomial_accepts_a_single_trial():
    """n = 1 is a valid number of trials: rate 0.5 of 1 trial, +- 1.96 * sqrt(0.25) = 0.98."""
    check = tol.binomial(0.5, R(0.9), {"n": 1})
    assert check.passed and "n=1," in check.why
    assert not tol.binomial(0.5, R(1.49), {"n": 1}).passed


def test_binomial_published_rate_zero_and_one_have_zero_width_and_an_inclusive_band():
    """p = 0 or 1: sqrt(p (1 - p) / n) = 0, so only the published value itself passes; the band
    is closed (|difference| <= half-width), so a difference of exactly 0 passes."""
    for published in (0.0, 1.0):
        check = tol.binomial(published, R(published), {"n": 48})
        assert check.passed and "+- 0.0000" in check.why and check.why.endswith("rate)")
    assert not tol.binomial(0.0, R(0.01), {"n": 48}).passed
    assert not tol.binomial(1.0, R(0.99), {"n": 48}).passed


def test_binomial_published_one_is_a_rate_and_above_one_a_count():
    """published = 1 (no unit): the rate 1.0 (width 0), not the count 1 of 48 (width 1.94).
    published = 1.5 or 2: counts (1.96 * sqrt(2 * 46 / 48) = 2.7135 for 2 of 48)."""
    assert not tol.binomial(
        1, R(0.5), {"n": 48}
    ).passed  # as a count, 0.5 would be within 1 +- 1.94
    assert tol.binomial(1, R(1.0), {"n": 48}).why.endswith("rate)")
    two = tol.binomial(2, R(4.7), {"n": 48})
    assert two.passed and two.why == "4.7000 within 2 +- 2.7135 (z=1.96, n=48, count)"
    assert tol.binomial(1.5, R(1.5), {"n": 48}).why.endswith("count)")


def test_binomial_counts_zero_and_n_are_valid():
    """0 of 48 and 48 of 48 are counts inside [0, n], with zero width."""
    assert tol.binomial(0, R(0.0), {"n": 48, "unit": "count"}).passed
    assert not tol.binomial(0, R(1.0), {"n": 48, "unit": "count"}).passed
    check = tol.binomial(48, R(48.0), {"n": 48})
    assert check.passed and check.why == "48.0000 within 48 +- 0.0000 (z=1.96, n=48, count)"
    assert not tol.binomial(48, R(47.0), {"n": 48}).passed


def test_binomial_rate_above_one_is_rejected_by_name():
    with pytest.raises(
        ConfigError, match=r"^policy 'binomial': published rate 1\.5 is not in \[0, 1\]"
    ):
        tol.binomial(1.5, R(1.5), {"n": 48, "unit": "rate"})
    with pytest.raises(
        ConfigError, match=r"^policy 'binomial': published count -1 is not in \[0, n = 48\]$"
    ):
        tol.binomial(-1, R(0.0), {"n": 48, "unit": "count"})


def test_binomial_explanation_text():
    """0.21 of 1,200: +- 1.96 * sqrt(0.21 * 0.79 / 1200) = 0.0230."""
    assert (
        tol.binomial(0.21, R(0.22), {"n": 1200}).why
        == "0.2200 within 0.21 +- 0.0230 (z=1.96, n=1200, rate)"
    )
    assert (
        tol.binomial(0.21, R(0.25), {"n": 1200}).why
        == "0.2500 OUTSIDE 0.21 +- 0.0230 (z=1.96, n=1200, rate)"
    )


def test_binomial_error_messages_in_full():
    with pytest.raises(ConfigError, match=r"^policy 'binomial' needs a published value$"):
        tol.binomial(None, R(0.21, n=10), {"n": 10})
    for params, n in (({}, None), ({"n": 0}, None), ({}, 0), ({"n": -3}, None)):
        with pytest.raises(
            ConfigError, match=r"^policy 'binomial' needs n \(number of trials\) > 0$"
        ):
            tol.binomial(0.21, R(0.21, n=n), params)


# ----------------------------------------------------------------- other policies' messages


def test_exact_details_error_message_in_full():
    with pytest.raises(
        ConfigError,
        match=r"^policy 'exact_details' needs `equal = \{detail = value\}` \(at least one\)$",
    ):
        tol.exact_details(None, R(0.8, k=3), {})


def test_a_missing_detail_names_every_detail_the_statistic_has():
    with pytest.raises(
        ConfigError,
        match=r"^tolerance refers to detail 'rho_x', which the statistic does not "
        r"report \(has: rho_a, rho_b\)$",
    ):
        tol.rounding(0.5, R(0.5, rho_a=0.1, rho_b=0.2), {"decimals": 1, "also": {"rho_x": 0.1}})


def test_undefined_check_is_a_failed_check_not_a_missing_answer():
    """``passed`` is the bool False (a consumer testing ``passed is False`` or ``== False`` must
    see a failure), the status is ``undefined`` and the reason names what is NaN."""
    check = tol.undefined(["value", "rho_a p"])
    assert check.passed is False
    assert check.status == UNDEFINED and check.why == "undefined (NaN): value, rho_a p"
    nan = tol.binomial(0.21, R(math.nan), {"n": 1200})
    assert nan.passed is False and nan.status == UNDEFINED and nan.why == "undefined (NaN): value"


# --------------------------------------------------------------------------- ClaimOutcome


def _rounding_claim() -> Claim:
    """A claim published as 0.5, checked by rounding to one decimal."""
    return Claim(
        id="t",
        study="test",
        statement="s",
        source="here",
        statistic="x:y",
        params={},
        published=0.5,
        tolerance=Tolerance("rounding", {"decimals": 1}, "r"),
        version=1,
        expected="reproduced",
    )


def test_an_outcome_without_provenance_records_null_provenance():
    claim = _rounding_claim()
    out = ClaimOutcome(
        claim=claim, result=R(0.52, n=4), check=tol.Check(True, "ok"), tolerance=claim.tolerance
    )
    rec = out.snapshot()
    assert rec["provenance"] is None
    assert (
        rec["claim"] == "t"
        and rec["value"] == 0.52
        and rec["n"] == 4
        and rec["verdict"] == "reproduced"
    )


def test_an_outcomes_json_writes_nan_interval_ends_as_null_and_no_provenance_as_empty():
    claim = _rounding_claim()
    result = StatisticResult(
        value=0.52, p=None, n=4, interval=(math.nan, 0.7), details={}, sources={}
    )
    out = ClaimOutcome(
        claim=claim, result=result, check=tol.Check(True, "ok"), tolerance=claim.tolerance
    )
    data = out.as_json()
    assert data["interval"] == [None, 0.7] and data["measured"] == 0.52
    assert data["provenance"] == {}


def test_a_binomial_rate_outside_zero_one_says_to_set_the_unit():
    with pytest.raises(ConfigError) as bad:
        tol.binomial(1.5, R(0.4), {"n": 10, "unit": "rate"})
    assert str(bad.value) == (
        "policy 'binomial': published rate 1.5 is not in [0, 1] (set unit = \"count\")"
    )


def test_correlation_interval_without_an_interval_says_what_it_needs():
    with pytest.raises(ConfigError) as bad:
        tol.correlation_interval(0.5, R(0.4), {})
    assert str(bad.value) == (
        "policy 'correlation_interval' needs a published value and an interval"
    )

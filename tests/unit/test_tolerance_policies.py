"""Every tolerance policy of ``repro.claims.tolerance``, the ``require`` checks and each verdict
path of ``repro.claims.check``, on inputs chosen so that a plausible bug flips the outcome.

Expected half-widths are written out from the policies' definitions (METHODS/DESIGN: rounding
= half a unit of the last printed digit; binomial = z * sqrt(p (1 - p) / n)), never copied from a
run. The binomial cases use a claim ``n`` and a result ``n`` that disagree in BOTH directions,
so taking the result's n before the claim's (or ignoring either) fails a test.
"""

from __future__ import annotations

import math

import pytest

from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError
from repro.claims import tolerance as tol
from repro.claims.check import ClaimOutcome, applicable_tolerance, compute, evaluate
from repro.claims.spec import Claim, Tolerance
from tests.claim_fixtures import ROUND1, claim, ctx

pytestmark = pytest.mark.unit

TESTED_POLICIES = {
    "rounding",
    "sign_significance",
    "null_all",
    "null_equivalent",
    "binomial",
    "exact_details",
    "correlation_interval",
    "within_range",
}
# every Tolerance-typed table of a claim (``[claim.tolerance]``, ``[claim.measured_tolerance]``,
# ``[claim.qualitative]``): a new one fails ``test_every_tolerance_table_of_a_claim_is_tested_here``
TESTED_TOLERANCE_TABLES = {"tolerance", "measured_tolerance", "qualitative"}


def R(value, p=None, n=None, interval=None, sources=None, **details):
    return StatisticResult(
        value=value, p=p, n=n, interval=interval, details=details, sources=sources or {}
    )


def test_every_registered_policy_is_tested_here():
    """A new policy fails this test until it has unit tests in this file."""
    assert set(tol.POLICIES) == TESTED_POLICIES
    for name in TESTED_POLICIES:
        assert tol.get_policy(name) is tol.POLICIES[name]
    with pytest.raises(ConfigError, match=r"unknown tolerance policy 'binomal'.*binomial"):
        tol.get_policy("binomal")


# ----------------------------------------------------------------------------------- rounding


@pytest.mark.parametrize("decimals,half", [(0, 0.5), (1, 0.05), (2, 0.005), (3, 0.0005)])
def test_rounding_halfwidth_is_half_a_unit_of_the_last_digit(decimals, half):
    assert tol.rounding_halfwidth(decimals) == pytest.approx(half, rel=1e-8)
    assert (
        half < tol.rounding_halfwidth(decimals) < half * (1 + 1e-8)
    )  # room for binary rounding only


@pytest.mark.parametrize(
    "value,ok",
    [(34.0, True), (34.5, True), (33.5, True), (34.5001, False), (33.4999, False), (35.0, False)],
)
def test_rounding_of_a_count(value, ok):
    # peak_noise_sensitivity_near_one: 34 of 48, decimals 0 -> +-0.5
    check = tol.rounding(34, R(value), {"decimals": 0})
    assert check.passed is ok
    assert ("within" if ok else "OUTSIDE") in check.why


def test_rounding_also_checks_every_named_detail_in_each_shape():
    # details as {"rho": ..}, {"value": ..} and as a bare number; one of them outside
    r = R(-0.7614, at={"rho": -0.9786, "p": 1e-10}, other={"value": -0.6019}, bare=0.2104)
    ok = tol.rounding(
        -0.76, r, {"decimals": 2, "also": {"at": -0.98, "other": -0.60, "bare": 0.21}}
    )
    assert ok.passed, ok.why
    assert ok.why.count("within") == 4
    r_bad = R(-0.7614, at={"rho": -0.9786}, other={"value": -0.6061}, bare=0.2104)
    bad = tol.rounding(
        -0.76, r_bad, {"decimals": 2, "also": {"at": -0.98, "other": -0.60, "bare": 0.21}}
    )
    assert not bad.passed and "other -0.6061 OUTSIDE -0.6" in bad.why
    # the headline alone outside fails even when every detail is inside
    r_head = R(-0.7651, at={"rho": -0.98}, other={"value": -0.60}, bare=0.21)
    assert not tol.rounding(
        -0.76, r_head, {"decimals": 2, "also": {"at": -0.98, "other": -0.6, "bare": 0.21}}
    ).passed


# -------------------------------------------------------------------------- sign_significance


def test_sign_significance_headline_and_cells():
    assert tol.sign_significance(None, R(-0.5, p=0.01), {"sign": "-"}).passed
    assert not tol.sign_significance(None, R(-0.5, p=0.01), {"sign": "+"}).passed
    assert not tol.sign_significance(None, R(0.0, p=0.0), {"sign": "+"}).passed  # zero has no sign
    assert not tol.sign_significance(None, R(0.0, p=0.0), {"sign": "-"}).passed
    cells = {"a": {"rho": 0.6, "p": 1e-5}, "b": {"value": 0.3, "p": 0.0009}}
    # the cells are judged, not the headline (which here is negative and not significant)
    assert tol.sign_significance(
        None, R(-0.1, p=0.9, **cells), {"sign": "+", "alpha": 0.001, "cells": ["a", "b"]}
    ).passed
    # one cell over alpha fails the claim
    check = tol.sign_significance(
        None, R(0.3, **cells), {"sign": "+", "alpha": 0.0005, "cells": ["a", "b"]}
    )
    assert not check.passed and "b +0.300 (p=0.0009) FAILS" in check.why


@pytest.mark.parametrize("p,ok", [(0.049999, True), (0.05, False), (0.050001, False)])
def test_sign_significance_alpha_is_strict_and_defaults_to_005(p, ok):
    assert tol.sign_significance(None, R(0.4, p=p), {"sign": "+"}).passed is ok


def test_sign_significance_with_a_sign_per_cell():
    # ID +0.30 and Adversarial -0.43: opposite signs, each significant
    cells = {"id": {"rho": 0.30, "p": 0.04}, "adv": {"rho": -0.43, "p": 0.002}}
    signs = {"id": "+", "adv": "-"}
    check = tol.sign_significance(None, R(-0.43, **cells), {"signs": signs})
    assert check.passed and check.why.startswith("signs as stated, p < 0.05")
    # the same cells with one sign for both fail on the cell of the other sign
    check = tol.sign_significance(None, R(-0.43, **cells), {"sign": "-", "cells": ["id", "adv"]})
    assert not check.passed and "id +0.300 (p=0.04) FAILS" in check.why
    # a flipped cell, or one no longer significant, fails the stated signs
    flipped = cells | {"id": {"rho": -0.30, "p": 0.04}}
    assert not tol.sign_significance(None, R(-0.43, **flipped), {"signs": signs}).passed
    weak = cells | {"adv": {"rho": -0.43, "p": 0.06}}
    assert not tol.sign_significance(None, R(-0.43, **weak), {"signs": signs}).passed
    with pytest.raises(ConfigError, match="not both"):
        tol.sign_significance(None, R(-0.43, **cells), {"signs": signs, "sign": "-"})
    with pytest.raises(ConfigError, match="sign must be .* got '0'"):
        tol.sign_significance(None, R(-0.43, **cells), {"signs": {"id": "0"}})


# ----------------------------------------------------------------------------------- null_all


@pytest.mark.parametrize("p,ok", [(0.05, True), (0.0500001, True), (0.0499999, False)])
def test_null_all_passes_exactly_when_every_p_is_at_least_alpha(p, ok):
    r = R(0.3, x={"rho": 0.1, "p": 0.9}, y={"rho": -0.3, "p": p}, label="not a cell")
    check = tol.null_all(None, r, {"alpha": 0.05})
    assert check.passed is ok
    if ok:
        assert (
            check.why.startswith("all 2 cells") and f"smallest p = {min(p, 0.9):.3f}" in check.why
        )
    else:
        assert "1 of 2 cells significant" in check.why and "y (p=" in check.why


def test_null_all_reads_every_cell_not_only_the_first():
    cells = {f"c{i}": {"rho": 0.0, "p": 0.5} for i in range(11)}
    cells["c11"] = {"rho": 0.7, "p": 0.001}  # the last one
    assert not tol.null_all(None, R(0.001, **cells), {}).passed


def test_null_all_without_cells_is_an_error():
    with pytest.raises(ConfigError, match="no cells with p-values"):
        tol.null_all(None, R(0.2, p=0.3), {})


def test_null_all_at_the_claims_alpha_and_its_error_whole():
    r = R(0.1, a={"rho": 0.3, "p": 0.03, "n": 48})
    assert not tol.null_all(None, r, {}).passed  # 0.03 < 0.05, the default
    assert tol.null_all(None, r, {"alpha": 0.01}).why == (
        "all 1 cells p >= 0.01 (smallest p = 0.030)"
    )
    two = R(0.1, a={"rho": 0.3, "p": 0.03}, b={"rho": 0.2, "p": 0.2}, c={"rho": -0.4, "p": 0.004})
    assert tol.null_all(None, two, {}).why == (
        "2 of 3 cells significant at 0.05: a (p=0.03), c (p=0.004)"
    )
    with pytest.raises(ConfigError) as bad:
        tol.null_all(None, R(0.2, p=0.3), {})
    assert str(bad.value) == "policy 'null_all': the statistic reports no cells with p-values"


# ---------------------------------------------------------------------------- null_equivalent


def _tost_bound(rho: float, n: int) -> float:
    """The 90% Fisher-z interval's farther end from 0 (Bonett-Wright variance), written out."""
    se = math.sqrt((1 + rho**2 / 2) / (n - 3))
    return math.tanh(abs(math.atanh(rho)) + 1.6448536269514722 * se)


@pytest.mark.parametrize("rho,n", [(0.05, 200), (0.05, 60), (-0.12, 800), (0.2, 1000)])
def test_null_equivalent_passes_exactly_when_every_bound_is_inside_the_margin(rho, n):
    r = R(0.3, x={"rho": 0.0, "n": 2000}, y={"rho": rho, "n": n}, label="not a cell")
    check = tol.null_equivalent(None, r, {"margin": 0.2})
    bounds = [_tost_bound(0.0, 2000), _tost_bound(rho, n)]
    assert check.passed is (max(bounds) < 0.2)
    assert f"equivalence bound {max(bounds):.3f}" in check.why
    assert f"{sum(b < 0.2 for b in bounds)} of 2 cells equivalent" in check.why


def test_null_equivalent_is_not_p_at_least_alpha():
    # rho -0.28 over 48 models: p 0.054 (a null to the paper), bound 0.491: no null shown at 0.3
    r = R(-0.28, cell={"rho": -0.28, "p": 0.054, "n": 48})
    assert tol.null_all(None, r, {}).passed
    check = tol.null_equivalent(None, r, {"margin": 0.3})
    assert not check.passed and "0 of 1 cells" in check.why and "bound 0.491" in check.why


def test_null_equivalent_is_undefined_for_a_cell_too_small_and_an_error_without_cells():
    check = tol.null_equivalent(None, R(0.0, a={"rho": 0.0, "n": 3}), {"margin": 0.3})
    assert not check.passed and check.status == "undefined" and "a equivalence bound" in check.why
    with pytest.raises(ConfigError, match="no cells with rho and n"):
        tol.null_equivalent(None, R(0.2, p=0.3), {"margin": 0.3})


def test_null_equivalent_tests_at_the_claims_alpha_and_reads_only_rho_n_cells():
    """``alpha`` is the claim's (a wider 1 - 2 alpha interval at 0.01 fails a cell that passes at
    0.05); detail entries that are not {rho, n} cells are not read; without cells, the error
    says so whole."""
    r = R(0.1, cell={"rho": 0.05, "n": 200}, note={"p": 0.3}, label="x")
    at_05 = tol.null_equivalent(None, r, {"margin": 0.2})
    at_01 = tol.null_equivalent(None, r, {"margin": 0.2, "alpha": 0.01})
    assert at_05.passed and not at_01.passed
    assert "(TOST at 0.05)" in at_05.why and "(TOST at 0.01)" in at_01.why
    assert set(tol.equivalence_cells(r, 0.2, 0.05)) == {"cell"}
    wide, narrow = (tol.equivalence_cells(r, 0.2, a)["cell"].bound for a in (0.01, 0.05))
    assert wide > 0.2 > narrow
    with pytest.raises(ConfigError) as bad:
        tol.null_equivalent(None, R(0.2, p=0.3, note={"rho": 0.1}), {"margin": 0.3})
    assert str(bad.value) == (
        "policy 'null_equivalent': the statistic reports no cells with rho and n"
    )


def test_within_range_says_what_it_read_and_the_range_in_words():
    """The check's text, whole: the label (``value`` or the detail named by ``of``), the value,
    the range with an open end as -inf/inf, and the rounding it allows at either bound."""
    assert tol.within_range(None, R(3.0), {"low": 2, "high": 4}).why == "value 3 within [2, 4]"
    assert tol.within_range(None, R(1.0), {"high": 0.5}).why == "value 1 OUTSIDE [-inf, 0.5]"
    assert tol.within_range(None, R(9.0, ratio=2.5), {"low": 2, "of": "ratio"}).why == (
        "ratio 2.5 within [2, inf]"
    )
    rounded = tol.within_range(None, R(1.6), {"low": 2, "high": 4, "decimals": 0})
    assert rounded.passed  # "2" printed as an integer reaches down to 1.5
    assert rounded.why.startswith("value 1.6 within [2, 4] (printed to 0 decimals: [1.5, 4.5")
    nan = tol.within_range(None, R(1.0, ratio=float("nan")), {"low": 2, "of": "ratio"})
    assert nan.why == "undefined (NaN): ratio"
    assert tol.within_range(None, R(float("nan")), {"low": 2}).why == "undefined (NaN): value"


def test_within_range_takes_a_single_point_and_names_what_it_needs():
    assert tol.within_range(None, R(3.0), {"low": 3, "high": 3}).passed
    assert not tol.within_range(None, R(3.01), {"low": 3, "high": 3}).passed
    with pytest.raises(ConfigError) as bad:
        tol.within_range(None, R(1.0), {})
    assert str(bad.value) == "policy 'within_range' needs low, high or both"


# ----------------------------------------------------------------------------------- binomial


def _half(p: float, n: int, z: float = 1.96) -> float:
    return z * math.sqrt(p * (1 - p) / n)


def test_binomial_halfwidths_written_out():
    # 0.21 from 1,200 trials: 1.96 * sqrt(0.21 * 0.79 / 1200) = 0.023046...
    assert _half(0.21, 1200) == pytest.approx(0.0230457, abs=1e-7)
    assert _half(0.21, 48) == pytest.approx(0.1152282, abs=1e-7)
    assert tol.binomial(0.21, R(0.21 + 0.0230), {"n": 1200}).passed
    assert not tol.binomial(0.21, R(0.21 + 0.0231), {"n": 1200}).passed
    assert not tol.binomial(0.21, R(0.21 - 0.0231), {"n": 1200}).passed
    # z scales the width: z = 2.576 (99%) -> 0.030289
    assert tol.binomial(0.21, R(0.21 + 0.0300), {"n": 1200, "z": 2.576}).passed
    assert not tol.binomial(0.21, R(0.21 + 0.0305), {"n": 1200, "z": 2.576}).passed


def test_binomial_takes_the_claims_n_before_the_results_n():
    """Claim n = 1,200 trials, result n = 48 models: the claim's n decides
    (0.30 is outside +-0.023)."""
    check = tol.binomial(0.21, R(0.30, n=48), {"n": 1200})
    assert not check.passed and "n=1200" in check.why
    # the other direction: claim n = 48, result n = 1,200: 0.30 is inside +-0.115
    check = tol.binomial(0.21, R(0.30, n=1200), {"n": 48})
    assert check.passed and "n=48" in check.why


def test_binomial_falls_back_to_the_results_n_only_without_a_claim_n():
    assert tol.binomial(0.21, R(0.30, n=48), {}).passed  # +-0.115 from the result's n
    check = tol.binomial(0.21, R(0.30, n=1200), {})
    assert not check.passed and "n=1200" in check.why
    with pytest.raises(ConfigError, match="needs n"):
        tol.binomial(0.21, R(0.21), {})
    with pytest.raises(ConfigError, match="needs a published value"):
        tol.binomial(None, R(0.21, n=10), {"n": 10})


def test_binomial_of_a_count():
    """peak_noise_sensitivity_near_one's measured policy: 34 of n = 48 models. In counts the
    half-width is 1.96 * sqrt(48 * (34/48) * (14/48)) = 1.96 * sqrt(34 * 14 / 48) = 6.1722."""
    assert _half(34 / 48, 48) * 48 == pytest.approx(6.17218, abs=1e-5)
    assert tol.binomial(34, R(40.0), {"n": 48}).passed
    assert tol.binomial(34, R(28.0), {"n": 48}).passed
    check = tol.binomial(34, R(41.0), {"n": 48})
    assert not check.passed and "+- 6.1722" in check.why and "count" in check.why
    assert not tol.binomial(34, R(27.0), {"n": 48}).passed
    # a count of 1 is ambiguous with the rate 1.0: ``unit`` says which
    assert tol.binomial(
        1, R(2.9), {"n": 48, "unit": "count"}
    ).passed  # +- 1.96 * sqrt(47 / 48) = 1.939
    assert not tol.binomial(1, R(2.9), {"n": 48, "unit": "rate"}).passed
    with pytest.raises(ConfigError, match="count 50 is not in"):
        tol.binomial(50, R(40.0), {"n": 48})
    with pytest.raises(ConfigError, match="rate 34 is not in"):
        tol.binomial(34, R(34.0), {"n": 48, "unit": "rate"})
    with pytest.raises(ConfigError, match="unit must be"):
        tol.binomial(0.3, R(0.3), {"n": 48, "unit": "percent"})


# ------------------------------------------------------------------------------ exact_details
#
# The qualitative content of a ranking claim (e.g. imagenet_cbar_strongest_mean_correlation:
# ImageNet-C-bar ranks first). Equality is exact (no tolerance), every named detail is judged
# (a wrong one anywhere fails, whatever its position), the headline value and the published
# number play no part.

RANKING = {
    "first_including_diagonal": "imagenet_cbar",
    "first_excluding_diagonal": "imagenet_cbar",
    "ranking_including_diagonal": ["imagenet_cbar", "imagenet", "imagenet_real"],
    "k": 3,
}


def test_exact_details_passes_only_when_every_named_detail_is_equal():
    r = R(0.8267, **RANKING)
    ok = tol.exact_details(
        0.83, r, {"equal": {"first_including_diagonal": "imagenet_cbar", "k": 3}}
    )
    assert ok.passed and ok.why == "first_including_diagonal = 'imagenet_cbar'; k = 3"
    # the wrong detail first, then a right one: a verdict taken from the last detail only would pass
    bad = tol.exact_details(0.83, r, {"equal": {"first_excluding_diagonal": "imagenet", "k": 3}})
    assert not bad.passed
    assert bad.why == "first_excluding_diagonal = 'imagenet_cbar' (expected 'imagenet'); k = 3"
    last = tol.exact_details(0.83, r, {"equal": {"k": 3, "first_excluding_diagonal": "imagenet"}})
    assert not last.passed


@pytest.mark.parametrize(
    "key,want",
    [
        ("k", 3.0000001),  # no numerical tolerance
        ("k", 4),
        ("first_including_diagonal", "ImageNet_cbar"),  # case matters
        ("first_including_diagonal", "imagenet_cbar "),
        (
            "ranking_including_diagonal",
            ["imagenet", "imagenet_cbar", "imagenet_real"],
        ),  # order matters
        ("ranking_including_diagonal", ["imagenet_cbar", "imagenet"]),
    ],
)
def test_exact_details_equality_is_exact(key, want):
    assert not tol.exact_details(None, R(0.8267, **RANKING), {"equal": {key: want}}).passed
    assert tol.exact_details(None, R(0.8267, **RANKING), {"equal": {key: RANKING[key]}}).passed


def test_exact_details_ignores_the_headline_and_the_published_value():
    """A value far from the published number (a rounding claim would fail) and no p: the
    qualitative content still holds."""
    r = R(-5.0, **RANKING)
    assert tol.exact_details(
        0.83, r, {"equal": {"first_including_diagonal": "imagenet_cbar"}}
    ).passed
    assert tol.exact_details(
        None, r, {"equal": {"first_including_diagonal": "imagenet_cbar"}}
    ).passed


def test_exact_details_errors():
    for params in (
        {},
        {"equal": {}},
        {"equal": "imagenet_cbar"},
        {"equal": ["first_including_diagonal"]},
    ):
        with pytest.raises(ConfigError, match=r"needs `equal = \{detail = value\}`"):
            tol.exact_details(None, R(0.8, **RANKING), params)
    with pytest.raises(ConfigError, match="refers to detail 'first'"):
        tol.exact_details(
            None,
            R(0.8, **RANKING),
            {"equal": {"first_including_diagonal": "imagenet_cbar", "first": "imagenet_cbar"}},
        )


# ------------------------------------------------------------------------ correlation_interval


@pytest.mark.parametrize(
    "interval,value,p,ok,why",
    [
        ((-0.85, -0.55), -0.70, 1e-6, True, "inside"),
        ((-0.76, -0.55), -0.70, 1e-6, True, "inside"),  # the bounds are inclusive
        ((-0.75, -0.55), -0.70, 1e-6, False, "OUTSIDE"),
        ((-0.90, -0.77), -0.80, 1e-6, False, "OUTSIDE"),
        ((-0.90, 0.10), -0.70, 0.20, False, "LOST"),  # inside, same sign, not significant
        ((-0.90, 0.10), 0.05, 0.01, False, "DIFFERENT"),  # inside, significant, other sign
    ],
)
def test_correlation_interval(interval, value, p, ok, why):
    check = tol.correlation_interval(-0.76, R(value, p=p, interval=interval), {})
    assert check.passed is ok and why in check.why


@pytest.mark.parametrize(
    "value,params,ok",
    [
        (3.0, {"low": 2, "high": 4}, True),
        (2.0, {"low": 2, "high": 4}, True),  # the bounds are inclusive
        (4.0, {"low": 2, "high": 4}, True),
        (4.2, {"low": 2, "high": 4}, False),  # exact bounds: 4.2 is outside
        (4.2, {"low": 2, "high": 4, "decimals": 0}, True),  # "4" printed as an integer reaches 4.5
        (4.5, {"low": 2, "high": 4, "decimals": 0}, True),
        (4.51, {"low": 2, "high": 4, "decimals": 0}, False),
        (1.49, {"low": 2, "high": 4, "decimals": 0}, False),
        (4.06, {"low": 2, "high": 4, "decimals": 1}, False),  # "4.0" reaches 4.05 only
        (2.29, {"low": 2}, True),  # a bound alone: unbounded above
        (1.99, {"low": 2}, False),
        (-5.0, {"high": 0}, True),
    ],
)
def test_within_range(value, params, ok):
    check = tol.within_range(None, R(value), params)
    assert check.passed is ok and ("within" if ok else "OUTSIDE") in check.why


def test_within_range_reads_a_named_detail_and_is_undefined_on_nan():
    r = R(9.0, ratio={"value": 3.0})
    assert tol.within_range(None, r, {"low": 2, "high": 4, "of": "ratio"}).passed
    assert not tol.within_range(None, r, {"low": 2, "high": 4}).passed  # the headline 9 is outside
    assert tol.within_range(None, R(float("nan")), {"low": 2}).status == "undefined"
    assert (
        tol.within_range(None, R(1.0, ratio=float("nan")), {"low": 2, "of": "ratio"}).status
        == "undefined"
    )
    with pytest.raises(ConfigError, match="needs low, high or both"):
        tol.within_range(None, R(1.0), {})
    with pytest.raises(ConfigError, match="low 4 > high 2"):
        tol.within_range(None, R(1.0), {"low": 4, "high": 2})


def test_correlation_interval_says_what_it_checked_in_words():
    """The check's text, whole: where the published value falls, the sign, the significance."""
    nan = float("nan")
    assert tol.correlation_interval(-0.76, R(-0.80, p=1e-6, interval=(-0.90, -0.77)), {}).why == (
        "published -0.76 OUTSIDE [-0.900, -0.770]; sign same; "
        "significance same (our p=1e-06, alpha 0.05)"
    )
    assert tol.correlation_interval(0.3, R(-0.1, p=0.5, interval=(-0.4, 0.35)), {}).why == (
        "published 0.3 inside [-0.400, 0.350]; sign DIFFERENT; "
        "significance LOST (our p=0.5, alpha 0.05)"
    )
    # NaN anywhere it reads: undefined, naming each NaN by what it is
    for result, named in [
        (R(nan, p=0.01, interval=(-0.9, -0.5)), "value"),
        (R(-0.7, p=0.01, interval=(nan, -0.5)), "interval low"),
        (R(-0.7, p=0.01, interval=(-0.9, nan)), "interval high"),
        (R(-0.7, p=nan, interval=(-0.9, -0.5)), "p"),
        (R(nan, p=nan, interval=(nan, nan)), "value, interval low, interval high, p"),
    ]:
        check = tol.correlation_interval(-0.76, result, {})
        assert check.status == "undefined" and check.why == f"undefined (NaN): {named}"
    # a p that is not judged is not read
    assert tol.correlation_interval(
        -0.76, R(-0.7, p=nan, interval=(-0.9, -0.5)), {"significant": False}
    ).passed


def test_correlation_interval_significance_options():
    r = R(-0.70, p=0.2, interval=(-0.9, 0.1))
    assert tol.correlation_interval(-0.76, r, {"significant": False}).passed
    assert tol.correlation_interval(-0.76, r, {"alpha": 0.25}).passed
    assert not tol.correlation_interval(-0.76, r, {"alpha": 0.2}).passed  # strict: p < alpha
    assert tol.correlation_interval(
        -0.76, R(-0.70, p=None, interval=(-0.9, -0.5)), {}
    ).passed  # no p: not judged
    with pytest.raises(ConfigError, match="needs a published value and an interval"):
        tol.correlation_interval(-0.76, R(-0.70, p=1e-6), {})
    with pytest.raises(ConfigError, match="needs a published value and an interval"):
        tol.correlation_interval(None, R(-0.70, p=1e-6, interval=(-0.9, -0.5)), {})


# ------------------------------------------------------------ claims, require and the verdicts


def test_verdict_reproduced_and_not_reproduced(tmp_path):
    good = evaluate(claim({"value": 0.53}, ROUND1), ctx(tmp_path))
    assert good.verdict == "reproduced" and good.reproduced and good.as_expected
    bad = evaluate(claim({"value": 0.56}, ROUND1), ctx(tmp_path))
    assert bad.verdict == "not_reproduced" and not bad.reproduced and not bad.as_expected
    assert "OUTSIDE" in bad.check.why and bad.tolerance is ROUND1
    rec = bad.snapshot()
    assert (
        rec["verdict"] == "not_reproduced"
        and rec["tolerance"] == "rounding"
        and rec["value"] == 0.56
    )


def test_verdict_of_a_claim_known_not_to_reproduce(tmp_path):
    known = claim({"value": 0.56}, ROUND1, expected="not_reproduced")
    out = evaluate(known, ctx(tmp_path))
    assert (
        out.verdict == "not_reproduced" and out.as_expected
    )  # as recorded: not a failure of the gate
    fixed = evaluate(claim({"value": 0.5}, ROUND1, expected="not_reproduced"), ctx(tmp_path))
    assert fixed.verdict == "reproduced" and not fixed.as_expected  # starts to reproduce: alarm


def test_require_fails_a_claim_whose_policy_passes(tmp_path):
    tolerance = Tolerance(
        "rounding", {"decimals": 1, "require": {"first": "imagenet_cbar", "k": 3}}, "r"
    )
    ok = evaluate(
        claim({"value": 0.5, "details": {"first": "imagenet_cbar", "k": 3}}, tolerance),
        ctx(tmp_path),
    )
    assert ok.reproduced and "first = 'imagenet_cbar'" in ok.check.why
    wrong = evaluate(
        claim({"value": 0.5, "details": {"first": "imagenet", "k": 3}}, tolerance), ctx(tmp_path)
    )
    assert not wrong.reproduced and wrong.verdict == "not_reproduced"
    assert "first = 'imagenet' (expected 'imagenet_cbar')" in wrong.check.why
    # equality is exact: 3.0000001 is not 3
    near = evaluate(
        claim({"value": 0.5, "details": {"first": "imagenet_cbar", "k": 3.0000001}}, tolerance),
        ctx(tmp_path),
    )
    assert not near.reproduced
    # the policy failing still fails with the requirement met
    both = evaluate(
        claim({"value": 0.9, "details": {"first": "imagenet_cbar", "k": 3}}, tolerance),
        ctx(tmp_path),
    )
    assert not both.reproduced


def test_require_of_a_detail_the_statistic_does_not_report_is_an_error(tmp_path):
    tolerance = Tolerance("rounding", {"decimals": 1, "require": {"peak_model": "a"}}, "r")
    with pytest.raises(ConfigError, match="requires detail 'peak_model'"):
        evaluate(claim({"value": 0.5, "details": {"other": 1}}, tolerance), ctx(tmp_path))


def test_require_is_enforced_under_measured_inputs_too(tmp_path):
    """A rounding claim switches to correlation_interval on measured inputs; its ``require``
    (e.g. which benchmark ranks first) must still be checked."""
    tolerance = Tolerance("rounding", {"decimals": 1, "require": {"first": "imagenet_cbar"}}, "r")
    params = {"value": 0.5, "p": 1e-4, "interval": [0.3, 0.7], "details": {"first": "imagenet"}}
    out = evaluate(claim(params, tolerance), ctx(tmp_path, measured=True))
    assert out.tolerance.policy == "correlation_interval"
    assert not out.reproduced and "expected 'imagenet_cbar'" in out.check.why
    params["details"] = {"first": "imagenet_cbar"}
    assert evaluate(claim(params, tolerance), ctx(tmp_path, measured=True)).reproduced


def test_measured_tolerance_is_used_only_for_measured_inputs(tmp_path):
    measured_tol = Tolerance("binomial", {"n": 1200}, "rate of 1,200 decisions")
    c = claim({"value": 0.56, "n": 48}, ROUND1, measured_tolerance=measured_tol)
    published = evaluate(c, ctx(tmp_path))
    assert published.tolerance is ROUND1 and not published.reproduced  # 0.56 outside 0.5 +- 0.05
    measured = evaluate(c, ctx(tmp_path, measured=True))
    # binomial with the CLAIM's n = 1,200: 0.5 +- 0.0283 -> 0.56 outside; with the
    # result's 48 it would pass
    assert (
        measured.tolerance is measured_tol
        and not measured.reproduced
        and "n=1200" in measured.check.why
    )
    c2 = claim({"value": 0.52, "n": 48}, ROUND1, measured_tolerance=measured_tol)
    assert evaluate(c2, ctx(tmp_path, measured=True)).reproduced


def test_applicable_tolerance_paths():
    with_iv = StatisticResult(0.5, p=1e-4, interval=(0.3, 0.7), sources={"x": "store"})
    pub_iv = StatisticResult(0.5, p=1e-4, interval=(0.3, 0.7), sources={"x": "published"})
    no_iv = StatisticResult(0.5, sources={"x": "store"})
    c = claim({}, ROUND1)
    assert applicable_tolerance(c, with_iv, measured=False) is ROUND1  # published run
    assert (
        applicable_tolerance(c, pub_iv, measured=True) is ROUND1
    )  # this claim's inputs all published
    switched = applicable_tolerance(c, with_iv, measured=True)
    assert switched.policy == "correlation_interval" and "95% interval" in switched.reason
    assert (
        applicable_tolerance(c, no_iv, measured=True) is ROUND1
    )  # nothing statistical to switch to
    assert applicable_tolerance(claim({}, ROUND1, published=None), with_iv, measured=True) is ROUND1
    sig = Tolerance("sign_significance", {"sign": "+"}, "qualitative")
    assert (
        applicable_tolerance(claim({}, sig), with_iv, measured=True) is sig
    )  # only rounding switches
    own = Tolerance("binomial", {"n": 10}, "own")
    assert (
        applicable_tolerance(claim({}, ROUND1, measured_tolerance=own), with_iv, measured=True)
        is own
    )
    assert (
        applicable_tolerance(claim({}, ROUND1, measured_tolerance=own), with_iv, measured=False)
        is ROUND1
    )


def test_compute_rejects_what_is_not_a_statistic(tmp_path):
    """NaN is an undefined statistic (its own verdict, tests/unit/test_claim_verdicts.py);
    infinity, a non-result or an unloadable function is a broken statistic."""
    assert math.isnan(compute(claim({"value": float("nan")}, ROUND1), ctx(tmp_path)).value)
    with pytest.raises(ConfigError, match="infinite value"):
        compute(claim({"value": float("inf")}, ROUND1), ctx(tmp_path))
    with pytest.raises(ConfigError, match="returned float, expected StatisticResult"):
        compute(
            claim({}, ROUND1, statistic="tests.claim_fixtures:not_a_result"),
            ctx(tmp_path),
        )
    with pytest.raises(ConfigError, match="cannot be loaded"):
        compute(claim({}, ROUND1, statistic="tests.claim_fixtures:nope"), ctx(tmp_path))


def test_outcome_summary_matches_the_verdict(tmp_path):
    out = evaluate(claim({"value": 0.53, "p": 1e-3, "interval": [0.4, 0.6]}, ROUND1), ctx(tmp_path))
    assert isinstance(out, ClaimOutcome)
    assert out.as_json() == {
        "id": "t",
        "published": 0.5,
        "measured": 0.53,
        "interval": [0.4, 0.6],
        "verdict": "reproduced",
        "provenance": {},
        "evidence": {"kind": "re-analysis", "measured": 0, "total": 0},
        "phrase": "consistent with the published data",
        "flags": [],
        "agreement": None,
    }


def test_a_claim_judged_by_exact_details_and_require(tmp_path):
    """exact_details as a claim's own tolerance: the verdict follows the details, with ``require``
    on top of it."""
    t = Tolerance(
        "exact_details", {"equal": {"first": "imagenet_cbar"}, "require": {"k": 3}}, "ranking"
    )
    ok = evaluate(
        claim({"value": 0.1, "details": {"first": "imagenet_cbar", "k": 3}}, t, published=None),
        ctx(tmp_path),
    )
    assert ok.verdict == "reproduced" and ok.check.why == "first = 'imagenet_cbar'; k = 3"
    wrong_first = evaluate(
        claim({"value": 0.1, "details": {"first": "imagenet", "k": 3}}, t), ctx(tmp_path)
    )
    assert wrong_first.verdict == "not_reproduced"
    wrong_k = evaluate(
        claim({"value": 0.1, "details": {"first": "imagenet_cbar", "k": 2}}, t), ctx(tmp_path)
    )
    assert wrong_k.verdict == "not_reproduced" and "k = 2 (expected 3)" in wrong_k.check.why
    # under measured inputs an exact_details claim keeps its policy (only rounding switches)
    measured = evaluate(
        claim(
            {"value": 0.1, "interval": [0.0, 0.2], "details": {"first": "imagenet_cbar", "k": 3}}, t
        ),
        ctx(tmp_path, measured=True),
    )
    assert measured.tolerance is t and measured.reproduced


# -------------------------------------------------------------------- [claim.qualitative]
#
# A claim's qualitative content (e.g. "rho = -0.76": negative and significant) is judged by
# leave-one-out robustness beside the claim's verdict; it never decides the verdict itself.

NEGATIVE = Tolerance("sign_significance", {"sign": "-", "alpha": 0.05}, "negative and significant")
ROUND2 = Tolerance("rounding", {"decimals": 2}, "two decimals")


def test_every_tolerance_table_of_a_claim_is_tested_here():
    """A new Tolerance-typed table of a claim fails here until its tests are
    written in this file."""
    import dataclasses
    import typing

    hints = typing.get_type_hints(Claim)
    tables = {
        f.name
        for f in dataclasses.fields(Claim)
        if Tolerance in (hints[f.name], *typing.get_args(hints[f.name]))
    }
    assert tables == TESTED_TOLERANCE_TABLES


def test_the_qualitative_table_never_decides_the_verdict(tmp_path):
    # rounding fails (-0.70 vs -0.76 +- 0.005), the qualitative content holds: not reproduced
    broken_rounding = claim(
        {"value": -0.70, "p": 1e-6}, ROUND2, published=-0.76, qualitative=NEGATIVE
    )
    out = evaluate(broken_rounding, ctx(tmp_path))
    assert (
        out.verdict == "not_reproduced" and out.tolerance is ROUND2 and "OUTSIDE" in out.check.why
    )
    # rounding passes, the qualitative content fails (p = 0.2): still reproduced
    not_significant = claim(
        {"value": -0.7614, "p": 0.2}, ROUND2, published=-0.76, qualitative=NEGATIVE
    )
    out = evaluate(not_significant, ctx(tmp_path))
    assert out.verdict == "reproduced" and out.tolerance is ROUND2
    # under measured inputs the rounding switches to correlation_interval,
    # never to the qualitative table
    measured = evaluate(
        claim(
            {"value": -0.70, "p": 1e-6, "interval": [-0.8, -0.6]},
            ROUND2,
            published=-0.76,
            qualitative=NEGATIVE,
        ),
        ctx(tmp_path, measured=True),
    )
    assert measured.tolerance.policy == "correlation_interval" and measured.reproduced


def test_the_qualitative_verdict_of_robustness():
    """``repro.diagnostics.robustness``: the declared table first; a claim judged by a qualitative
    policy is its own qualitative content; a rounding or binomial claim without one has none."""
    from repro.diagnostics.robustness import QUALITATIVE_POLICIES, judge, qualitative_tolerance

    assert QUALITATIVE_POLICIES == {"sign_significance", "null_all", "exact_details"}
    assert QUALITATIVE_POLICIES <= TESTED_POLICIES
    c = claim({}, ROUND2, published=-0.76, qualitative=NEGATIVE)
    assert qualitative_tolerance(c, ROUND2) is NEGATIVE
    switched = Tolerance("correlation_interval", {}, "measured")
    assert (
        qualitative_tolerance(c, switched) is NEGATIVE
    )  # the declared content, whatever was applied
    assert qualitative_tolerance(claim({}, ROUND2, published=-0.76), ROUND2) is None
    assert (
        qualitative_tolerance(claim({}, Tolerance("binomial", {"n": 48}, "count")), c.tolerance)
        is None
    )
    for own in (
        NEGATIVE,
        Tolerance("null_all", {}, "null"),
        Tolerance("exact_details", {"equal": {"a": 1}}, "x"),
    ):
        assert qualitative_tolerance(claim({}, own, published=None), own) is own
    # the rounding breaks, the finding holds (and the other way round)
    assert (
        not judge(c, R(-0.70, p=1e-6), ROUND2).passed
        and judge(c, R(-0.70, p=1e-6), NEGATIVE).passed
    )
    assert (
        judge(c, R(-0.7614, p=0.2), ROUND2).passed
        and not judge(c, R(-0.7614, p=0.2), NEGATIVE).passed
    )
    assert not judge(c, R(0.70, p=1e-6), NEGATIVE).passed  # the sign flipped


QUALITATIVE_CLAIM = """
[[claim]]
id = "q"
study = "test"
statement = "s"
source = "here"
statistic = "tests.claim_fixtures:fixed_statistic"
params = { value = -0.76 }
published = -0.76
version = 1
[claim.tolerance]
policy = "rounding"
params = { decimals = 2 }
reason = "two decimals"
[claim.qualitative]
policy = "sign_significance"
params = { sign = "-", alpha = 0.05, cells = ["value"] }
reason = "negative and significant"
"""


def test_the_qualitative_table_is_read_and_checked_like_a_tolerance(tmp_path):
    from repro.claims.loader import read_claim_file

    path = tmp_path / "claims.toml"
    path.write_text(QUALITATIVE_CLAIM)
    (c,) = read_claim_file(path)
    assert c.qualitative == Tolerance(
        "sign_significance",
        {"sign": "-", "alpha": 0.05, "cells": ["value"]},
        "negative and significant",
    )
    path.write_text(QUALITATIVE_CLAIM.split("[claim.qualitative]")[0])
    assert read_claim_file(path)[0].qualitative is None  # optional
    for bad, match in (
        (
            QUALITATIVE_CLAIM.replace('"sign_significance"', '"sign"'),
            r"claim #1 \('q'\): qualitative: unknown tolerance policy 'sign'",
        ),
        (
            QUALITATIVE_CLAIM.replace('reason = "negative and significant"', ""),
            r"qualitative: tolerance needs a `reason`",
        ),
    ):
        path.write_text(bad)
        with pytest.raises(ConfigError, match=match):
            read_claim_file(path)

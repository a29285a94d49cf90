"""The checker's steps whole (``repro.claims.check``): the tolerance a claim is judged by on
measured inputs, the refusal of a broken statistic, and the judgement of a policy with its
``require`` details, each asserted as the full value a verdict prints or a user's error reads."""

from __future__ import annotations

import dataclasses

import pytest

from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError
from repro.claims.check import applicable_tolerance, compute, evaluate, judge
from repro.claims.spec import Derived, Tolerance
from repro.claims.tolerance import Check
from repro.claims.verdict import DERIVED, UNDEFINED, Flag
from tests.claim_fixtures import ROUND1, claim, ctx

pytestmark = pytest.mark.unit

SWITCHED_REASON = (
    "measured inputs: the published statistic must lie inside our 95% interval, same sign "
    "and significance"
)


def test_a_rounding_claim_on_measured_inputs_is_judged_by_its_interval_keeping_require():
    measured = StatisticResult(0.5, p=1e-4, interval=(0.3, 0.7), sources={"x": "store"})
    assert applicable_tolerance(claim({}, ROUND1), measured, measured=True) == Tolerance(
        "correlation_interval", {}, SWITCHED_REASON
    )
    req = Tolerance("rounding", {"decimals": 1, "require": {"first": "a"}}, "r")
    assert applicable_tolerance(claim({}, req), measured, measured=True) == Tolerance(
        "correlation_interval", {"require": {"first": "a"}}, SWITCHED_REASON
    )
    # an empty require is no requirement
    empty = Tolerance("rounding", {"decimals": 1, "require": {}}, "r")
    assert applicable_tolerance(claim({}, empty), measured, measured=True) == Tolerance(
        "correlation_interval", {}, SWITCHED_REASON
    )


def test_one_measured_source_among_published_ones_switches_the_tolerance():
    mixed = StatisticResult(
        0.5, p=1e-4, interval=(0.3, 0.7), sources={"a": "published", "b": "store", "c": "published"}
    )
    assert applicable_tolerance(claim({}, ROUND1), mixed, measured=True).policy == (
        "correlation_interval"
    )
    none = StatisticResult(0.5, p=1e-4, interval=(0.3, 0.7), sources={})
    assert applicable_tolerance(claim({}, ROUND1), none, measured=True) is ROUND1


def _compute_error(params, tmp_path, statistic=None) -> str:
    c = claim(params, ROUND1) if statistic is None else claim(params, ROUND1, statistic=statistic)
    with pytest.raises(ConfigError) as e:
        compute(c, ctx(tmp_path))
    return str(e.value)


def test_a_broken_statistic_is_refused_whole(tmp_path):
    stat = "tests.claim_fixtures:fixed_statistic"
    for inf in (float("inf"), float("-inf")):
        assert _compute_error({"value": inf}, tmp_path) == (
            f"claim 't': statistic {stat} returned an infinite value "
            "(a statistic returns a number, or NaN where it is undefined)"
        )
    not_a_result = "tests.claim_fixtures:not_a_result"
    assert _compute_error({}, tmp_path, not_a_result) == (
        f"claim 't': statistic {not_a_result} returned float, expected StatisticResult"
    )
    # the statistic is called with the claim's params
    assert compute(claim({"value": 0.25, "p": 0.5}, ROUND1), ctx(tmp_path)).p == 0.5


def R(value, **details):
    return StatisticResult(value=value, details=details)


def test_judge_joins_the_policy_and_its_requirements():
    req = Tolerance("rounding", {"decimals": 1, "require": {"first": "a", "k": 3}}, "r")
    c = claim({}, req)
    assert judge(c, R(0.52, first="a", k=3), req) == Check(
        True, "value 0.520 within 0.5 +- 0.05; first = 'a'; k = 3"
    )
    assert judge(c, R(0.52, first="b", k=3), req) == Check(
        False, "value 0.520 within 0.5 +- 0.05; first = 'b' (expected 'a'); k = 3"
    )
    assert judge(c, R(0.62, first="a", k=3), req) == Check(
        False, "value 0.620 OUTSIDE 0.5 +- 0.05; first = 'a'; k = 3"
    )
    # a NaN requirement makes the check undefined although the policy passed
    assert judge(c, R(0.52, first="a", k=float("nan")), req) == Check(
        False, "value 0.520 within 0.5 +- 0.05; undefined (NaN): k", UNDEFINED
    )
    # a policy that read a NaN detail keeps its status with the requirements met
    also = Tolerance("rounding", {"decimals": 1, "also": {"d": 1}, "require": {"first": "a"}}, "r")
    assert judge(c, R(0.52, first="a", d=float("nan")), also) == Check(
        False, "undefined (NaN): d; first = 'a'", UNDEFINED
    )
    # a NaN statistic is undefined before any policy or requirement is read
    assert judge(c, R(float("nan"), first="a", k=3), req) == Check(
        False, "undefined (NaN): the statistic", UNDEFINED
    )
    # without require, the policy's check itself
    assert judge(c, R(0.52), ROUND1) == Check(True, "value 0.520 within 0.5 +- 0.05")


def test_a_derived_claim_carries_the_derived_flag_with_its_reason(tmp_path):
    c = dataclasses.replace(
        claim({"value": 0.52}, ROUND1), derived=Derived("the count is read off the table")
    )
    out = evaluate(c, ctx(tmp_path))
    assert out.flags == (Flag(DERIVED, "the count is read off the table"),)
    assert out.flag(DERIVED) == Flag("derived", "the count is read off the table")
    assert out.verdict == "reproduced"
    plain = evaluate(claim({"value": 0.52}, ROUND1), ctx(tmp_path))
    assert plain.flags == () and plain.flag(DERIVED) is None


def test_a_statistic_that_cannot_be_loaded_names_its_claim_file_and_claim(tmp_path):
    ref = "tests.claim_fixtures:nope"
    c = dataclasses.replace(claim({}, ROUND1, statistic=ref), origin="studies/x/claims.toml")
    with pytest.raises(ConfigError) as e:
        compute(c, ctx(tmp_path))
    assert str(e.value) == (
        f"studies/x/claims.toml: claim 't': statistic {ref!r} cannot be loaded "
        "(module 'tests.claim_fixtures' has no attribute 'nope')"
    )

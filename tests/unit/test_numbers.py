"""repro.base.numbers: the one number formatter, with each output's conventions (hand-written
texts: what every table, section and command printed before they shared it)."""

import math

import pytest

from repro.base.numbers import fmt_interval, fmt_num, fmt_p, fmt_value

pytestmark = pytest.mark.unit
NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(
    "v, text",
    [
        (None, "-"),
        (NAN, "undefined"),
        (3.0, "3"),
        (-12.0, "-12"),
        (1200, "1200"),
        (0.0, "0"),
        (-0.0, "-0"),
        (0.5, "0.5000"),
        (1.234e-4, "0.0001234"),
        (-3e-5, "-3e-05"),
        (0.23937, "0.2394"),
        (INF, "inf"),
    ],
)
def test_a_claim_statistic_prints_whole_numbers_as_integers_and_small_ones_in_significant_digits(
    v, text
):
    assert fmt_value(v) == text


@pytest.mark.parametrize(
    "p, text",
    [(None, "-"), (NAN, "-"), (0.5, "0.50"), (0.9996, "1.00"), (0.956, "0.96"), (0.957, "0.96")],
)
def test_a_share_of_redraws_prints_two_decimals(p, text):
    """1,000 redraws give a share to about +-0.016: its third decimal (0.956 on x86-64, 0.957 on
    aarch64 for one claim) is not printed."""
    assert fmt_p(p) == text


@pytest.mark.parametrize(
    "iv, digits, text",
    [
        (None, 3, "-"),
        ("not estimable", 3, "not estimable"),
        ((0.1, 0.25), 3, "[0.100, 0.250]"),
        ([-1, 2.345], 1, "[-1.0, 2.3]"),
    ],
)
def test_an_interval_prints_both_ends(iv, digits, text):
    assert fmt_interval(iv, digits) == text


@pytest.mark.parametrize(
    "v, kwargs, text",
    [
        (0.12345, {}, "0.123"),
        (None, {"none": "undefined"}, "undefined"),
        (NAN, {}, "nan"),
        (NAN, {"nan": "-"}, "-"),
        (INF, {"style": "g", "nan": "-", "inf": "-"}, "-"),
        (1234.5, {"style": "g"}, "1.23e+03"),
        (0.0123, {"digits": 1, "style": "e"}, "1.2e-02"),
        (2.5, {"digits": 4, "small": 1e-3, "strip": True}, "2.5"),
        (5.0, {"digits": 4, "small": 1e-3, "strip": True}, "5"),
        (1.23456e-4, {"digits": 4, "small": 1e-3, "strip": True}, "0.0001235"),
        (197.0, {"digits": 4, "only_floats": True, "whole": (0, 2**53)}, "197"),
        (2.0**53, {"digits": 4, "only_floats": True, "whole": (0, 2**53)}, "9007199254740992.0000"),
        (7, {"only_floats": True}, "7"),
        ("n/a", {"only_floats": True}, "n/a"),
        (7, {}, "7.000"),
    ],
)
def test_the_keywords_keep_each_outputs_convention(v, kwargs, text):
    digits = kwargs.pop("digits", 3)
    assert fmt_num(v, digits, **kwargs) == text


def test_a_whole_number_outside_the_whole_range_keeps_its_decimals():
    assert fmt_num(0.0, 2, whole=(1, math.inf)) == "0.00"
    assert fmt_num(4.0, 2, whole=(1, math.inf)) == "4"

"""The tolerance policies' helpers and their messages, whole.

``rounding``, ``sign_significance`` and their helpers (``is_nan``, ``undefined``, the half-width of
a printed number, the detail and cell readers) are checked here through the exact ``why`` a
verdict prints and the exact error a wrong claim file gets: a researcher reads these strings to
know what was compared, so a changed word, sign or digit is a changed answer. Expected strings
are written from the policies' definitions (``repro.claims.tolerance``'s docstring), not copied
from a run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError
from repro.claims import tolerance as tol
from repro.claims.verdict import UNDEFINED

pytestmark = pytest.mark.unit


def R(value, p=None, **details):
    return StatisticResult(value=value, p=p, n=None, interval=None, details=details, sources={})


def _error(fn, *args) -> str:
    with pytest.raises(ConfigError) as e:
        fn(*args)
    return str(e.value)


# ------------------------------------------------------------------------------------ is_nan


@pytest.mark.parametrize(
    "v,nan",
    [
        (float("nan"), True),
        (np.float64("nan"), True),
        (np.float32("nan"), True),
        (np.array(float("nan")), True),
        (0.0, False),
        (1, False),
        (float("inf"), False),
        (np.float64(0.5), False),
        (None, False),
        (True, False),
        (False, False),
        ("nan", False),
        ([float("nan")], False),
        ({"rho": float("nan")}, False),
        # has a dtype but no single float: not a NaN scalar
        (np.array([float("nan"), 1.0]), False),
    ],
)
def test_is_nan_is_true_for_a_float_nan_only(v, nan):
    assert tol.is_nan(v) is nan


def test_undefined_names_what_and_has_the_undefined_status():
    assert tol.undefined(["a rho", "b p"]) == tol.Check(
        False, "undefined (NaN): a rho, b p", UNDEFINED
    )
    assert tol.Check(True, "x").status is None


@pytest.mark.parametrize("decimals,half", [(0, 0.5), (1, 0.05), (2, 0.005), (3, 0.0005)])
def test_the_rounding_halfwidth_is_half_a_unit_of_the_last_digit_with_float_room(decimals, half):
    got = tol.rounding_halfwidth(decimals)
    # the room is one part in 1e9: a float's rounding passes, a real excess does not
    assert got == pytest.approx(half * (1 + 1e-9), rel=1e-14, abs=0)
    assert half < got < half * (1 + 2e-9)


# ---------------------------------------------------------------------------------- rounding


def test_rounding_why_names_each_compared_number_and_its_interval():
    check = tol.rounding(-0.76, R(-0.7612), {"decimals": 2})
    assert check == tol.Check(True, "value -0.7612 within -0.76 +- 0.005")
    check = tol.rounding(-0.76, R(-0.7651), {"decimals": 2})
    assert check == tol.Check(False, "value -0.7651 OUTSIDE -0.76 +- 0.005")
    # a detail by its value or its rho; a bare number too
    r = R(0.31, a={"value": 0.204}, b={"rho": -0.52, "p": 0.01}, c=3.0)
    check = tol.rounding(0.3, r, {"decimals": 1, "also": {"a": 0.2, "b": -0.5, "c": 3}})
    assert check == tol.Check(
        True,
        "value 0.310 within 0.3 +- 0.05; a 0.204 within 0.2 +- 0.05; "
        "b -0.520 within -0.5 +- 0.05; c 3.000 within 3.0 +- 0.05",
    )
    # one detail outside fails the whole check, and the others are still reported
    check = tol.rounding(0.3, r, {"decimals": 1, "also": {"a": 0.3, "c": 3}})
    assert check == tol.Check(
        False,
        "value 0.310 within 0.3 +- 0.05; a 0.204 OUTSIDE 0.3 +- 0.05; c 3.000 within 3.0 +- 0.05",
    )


def test_rounding_at_the_edge_of_the_printed_digit():
    # 0.205 rounds to 0.21 or 0.20 (half a unit): within; 0.2051 is not
    assert tol.rounding(0.21, R(0.205), {"decimals": 2}).passed
    assert not tol.rounding(0.21, R(0.2049), {"decimals": 2}).passed
    assert tol.rounding(4, R(4.5), {"decimals": 0}).passed
    assert not tol.rounding(4, R(4.5001), {"decimals": 0}).passed


def test_rounding_of_a_nan_names_each_undefined_number():
    nan = float("nan")
    r = R(nan, a={"rho": nan}, b={"value": 0.2})
    check = tol.rounding(0.3, r, {"decimals": 1, "also": {"a": 0.2, "b": 0.2}})
    assert check == tol.Check(False, "undefined (NaN): value, a", UNDEFINED)
    check = tol.rounding(0.3, R(0.3, a={"rho": nan}), {"decimals": 1, "also": {"a": 0.2}})
    assert check == tol.Check(False, "undefined (NaN): a", UNDEFINED)


def test_rounding_errors_whole():
    assert (
        _error(tol.rounding, None, R(0.2), {"decimals": 2})
        == "policy 'rounding' needs a published value"
    )
    assert _error(tol.rounding, 0.2, R(0.2, at=0.1, by=2), {"decimals": 2, "also": {"x": 1}}) == (
        "tolerance refers to detail 'x', which the statistic does not report (has: at, by)"
    )
    assert (
        _error(tol.rounding, 0.2, R(0.2, d={"p": 0.1}), {"decimals": 2, "also": {"d": 1}})
        == "detail 'd' has no 'value' or 'rho'"
    )


def test_a_detail_with_both_value_and_rho_is_read_by_its_value():
    r = R(0.3, d={"rho": 0.9, "value": 0.2})
    assert tol.rounding(0.3, r, {"decimals": 1, "also": {"d": 0.2}}).passed
    assert not tol.rounding(0.3, r, {"decimals": 1, "also": {"d": 0.9}}).passed


# ------------------------------------------------------------------------- sign_significance


def test_sign_significance_why_whole():
    assert tol.sign_significance(None, R(-0.5, p=0.01), {"sign": "-"}) == tol.Check(
        True, "sign -, p < 0.05: value -0.500 (p=0.01) ok"
    )
    # the default sign is +, and the default cell is the headline
    assert tol.sign_significance(None, R(-0.5, p=0.01), {}) == tol.Check(
        False, "sign +, p < 0.05: value -0.500 (p=0.01) FAILS"
    )
    cells = {"a": {"rho": 0.61, "p": 1.234e-5}, "b": {"value": 0.3, "p": 0.0009}}
    check = tol.sign_significance(
        None, R(-0.1, p=0.9, **cells), {"cells": ["a", "b"], "alpha": 0.001}
    )
    assert check == tol.Check(
        True, "sign +, p < 0.001: a +0.610 (p=1.2e-05) ok; b +0.300 (p=0.0009) ok"
    )
    # "value" among the cells is the headline
    check = tol.sign_significance(
        None, R(-0.1, p=0.9, **cells), {"cells": ["a", "value"], "alpha": 0.001}
    )
    assert check == tol.Check(
        False, "sign +, p < 0.001: a +0.610 (p=1.2e-05) ok; value -0.100 (p=0.9) FAILS"
    )
    mixed = {"id": {"rho": 0.3, "p": 0.04}, "adv": {"rho": -0.43, "p": 0.002}}
    check = tol.sign_significance(None, R(0.0, **mixed), {"signs": {"id": "+", "adv": "-"}})
    assert check == tol.Check(
        True, "signs as stated, p < 0.05: id +0.300 (p=0.04) ok; adv -0.430 (p=0.002) ok"
    )
    # signs all the same, given per cell: read as one sign
    check = tol.sign_significance(None, R(0.0, **mixed), {"signs": {"id": "+", "adv": "+"}})
    assert check == tol.Check(
        False, "sign +, p < 0.05: id +0.300 (p=0.04) ok; adv -0.430 (p=0.002) FAILS"
    )


def test_sign_significance_every_cell_counts_not_only_the_last():
    cells = {"a": {"rho": -0.4, "p": 0.01}, "b": {"rho": 0.4, "p": 0.01}}
    assert not tol.sign_significance(None, R(0.0, **cells), {"cells": ["a", "b"]}).passed
    assert not tol.sign_significance(None, R(0.0, **cells), {"cells": ["b", "a"]}).passed
    assert tol.sign_significance(None, R(0.0, **cells), {"cells": ["b"]}).passed


def test_sign_significance_nan_names_each_undefined_number():
    nan = float("nan")
    cells = {
        "a": {"rho": nan, "p": 0.01},
        "b": {"value": 0.2, "p": nan},
        "c": {"rho": 0.1, "p": 0.2},
    }
    check = tol.sign_significance(None, R(0.0, **cells), {"cells": ["a", "b", "c"]})
    assert check == tol.Check(False, "undefined (NaN): a rho, b p", UNDEFINED)
    check = tol.sign_significance(None, R(nan, p=0.01, **cells), {"cells": ["value", "c"]})
    assert check == tol.Check(False, "undefined (NaN): value rho", UNDEFINED)
    check = tol.sign_significance(None, R(0.3, p=nan), {})
    assert check == tol.Check(False, "undefined (NaN): value p", UNDEFINED)
    check = tol.sign_significance(None, R(0.0, b={"value": nan, "p": 0.01}), {"cells": ["b"]})
    assert check == tol.Check(False, "undefined (NaN): b value", UNDEFINED)


def test_sign_significance_errors_whole():
    cells = {"a": {"rho": 0.4, "p": 0.01}, "n": {"rho": 0.4}, "s": 0.4}
    assert (
        _error(tol.sign_significance, None, R(0.4, **cells), {"signs": {"a": "+"}, "cells": ["a"]})
        == "policy 'sign_significance': give `signs` or `sign` and `cells`, not both"
    )
    assert (
        _error(tol.sign_significance, None, R(0.4, **cells), {"sign": "positive"})
        == "policy 'sign_significance': sign must be '+' or '-', got 'positive'"
    )
    assert (
        _error(tol.sign_significance, None, R(0.4, **cells), {"signs": {"a": "+", "n": "0"}})
        == "policy 'sign_significance': sign must be '+' or '-', got '0'"
    )
    assert (
        _error(tol.sign_significance, None, R(0.4, **cells), {"cells": ["a", "n"]})
        == "policy 'sign_significance': cell 'n' has no p-value"
    )
    assert (
        _error(tol.sign_significance, None, R(0.4), {})
        == "policy 'sign_significance': cell 'value' has no p-value"
    )
    for missing in ("zz", "s"):  # absent, or not a cell (a bare number)
        assert _error(tol.sign_significance, None, R(0.4, **cells), {"cells": ["a", missing]}) == (
            f"tolerance refers to detail cell {missing!r}, which the statistic does not report"
        )


def test_get_policy_error_lists_the_known_policies():
    assert _error(tol.get_policy, "binomal") == (
        "unknown tolerance policy 'binomal' (known: " + ", ".join(tol.POLICIES) + ")"
    )
    assert tol.get_policy("rounding") is tol.rounding


def test_a_value_exactly_half_a_unit_away_is_within():
    # the bound itself is inside: |value - published| <= half-width
    for decimals in (0, 1, 2, 3):
        half = tol.rounding_halfwidth(decimals)
        assert tol.rounding(0, R(half), {"decimals": decimals}).passed
        assert tol.rounding(0, R(-half), {"decimals": decimals}).passed
        assert not tol.rounding(0, R(math.nextafter(half, 1)), {"decimals": decimals}).passed

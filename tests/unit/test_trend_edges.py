"""Edges of the censored trend test (``repro.analysis.trend``) that the tau-b and Gehan tests
leave open: the method it names (exact up to ``EXACT_N`` models, seeded random orders above),
its JSON, an undefined tau, and its refusals, whole. Exact p-values are scipy's exact Kendall
test (no censoring, no ties)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.trend import (
    EXACT_N,
    kendall_censored,
    kendall_censored_rows,
    permutation_p_rows,
)

pytestmark = pytest.mark.unit


def test_the_json_of_an_exact_test_names_every_field():
    x, y = np.arange(7.0), np.array([1.0, 3, 2, 5, 4, 7, 6])  # 3 of 21 pairs discordant
    res = kendall_censored(x, y)
    exact = stats.kendalltau(x, y, method="exact", alternative="greater").pvalue
    assert res.as_json() == {
        "tau": pytest.approx(15 / 21, rel=1e-12),
        "s": 15,
        "p": pytest.approx(exact, rel=1e-9),
        "n": 7,
        "censored": 0,
        "undetermined_pairs": 0,
        "method": "exact permutation test over all 5,040 orders, greater",
    }


def test_eight_models_are_still_tested_over_every_order():
    assert EXACT_N == 8
    x = np.arange(8.0)
    y = np.array([2.0, 1, 3, 5, 4, 6, 8, 7])
    res = kendall_censored(x, y, alternative="two-sided")
    assert res.method == "exact permutation test over all 40,320 orders, two-sided"
    assert res.p == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue, rel=1e-9)
    # an exact p is a count of orders over 8!, with the observed order among them
    assert res.p * math.factorial(8) == pytest.approx(round(res.p * math.factorial(8)), abs=1e-6)


def test_nine_models_are_tested_over_seeded_random_orders():
    x = np.arange(9.0)
    y = np.array([1.0, 3, 2, 5, 4, 7, 6, 9, 8])
    cens = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1], dtype=bool)
    res = kendall_censored(x, y, cens, resamples=1000, seed=3, alternative="two-sided")
    assert res.method == (
        "permutation test, 1,000 random orders (seed 3), two-sided; 2 censored (Gehan comparisons)"
    )
    assert (res.n, res.censored, res.undetermined) == (9, 2, 1)
    # (1 + hits) / (resamples + 1): never 0, a whole number of 1,001sts
    hits = res.p * 1001 - 1
    assert res.p > 0 and hits == pytest.approx(round(hits), abs=1e-6)
    again = kendall_censored(x, y, cens, resamples=1000, seed=3, alternative="two-sided")
    assert again.p == res.p
    # the same orders give the same p for the same S through the rows function
    rows = permutation_p_rows(
        x,
        y[None, :],
        cens[None, :],
        np.array([res.s]),
        resamples=1000,
        seed=3,
        alternative="two-sided",
    )
    assert rows[0] == res.p


def test_tau_is_undefined_when_every_x_is_tied():
    res = kendall_censored([2.0, 2.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0])
    assert math.isnan(res.tau) and res.s == 0 and res.p == 1.0


def test_the_refusals_whole():
    with pytest.raises(ValueError) as e:
        kendall_censored([1, 2, 3], [1, 2, 3], alternative="less")
    assert str(e.value) == "alternative must be 'greater' or 'two-sided', got 'less'"
    with pytest.raises(ValueError) as e:
        kendall_censored([1, 2, 3], [1, 2], [False, True])
    assert str(e.value) == (
        "need three or more (x, y, censored) triples of equal length, got 3, 2, 2"
    )
    with pytest.raises(ValueError) as e:
        kendall_censored([1, 2, 3, 4], [1, 2, 3, 4], [False, True, False])
    assert str(e.value) == (
        "need three or more (x, y, censored) triples of equal length, got 4, 4, 3"
    )
    with pytest.raises(ValueError) as e:
        kendall_censored([1, 2], [1, 2])
    assert str(e.value) == (
        "need three or more (x, y, censored) triples of equal length, got 2, 2, 2"
    )
    for x, y in (([1, np.nan, 3], [1, 2, 3]), ([1, 2, 3], [1, np.nan, 3])):
        with pytest.raises(ValueError) as e:
            kendall_censored(x, y)
        assert str(e.value) == (
            "x and y must not hold NaN (mark an unknown y as censored with its censoring value)"
        )
    with pytest.raises(ValueError) as e:
        permutation_p_rows([1, 2, 3], np.ones((1, 3)), np.zeros((1, 3)), [0], alternative="less")
    assert str(e.value) == "alternative must be 'greater' or 'two-sided', got 'less'"


def test_censoring_flags_as_integers_give_the_same_test():
    x = np.arange(7.0)
    # the last value, censored at 2, is known only to exceed 1: against 2, 3, 4 and 5 it is
    # undetermined, as against the other censored value (6); read as an exact 2 it would not be
    y = np.array([1.0, 3, 2, 5, 4, 6, 2])
    flags = [0, 0, 0, 0, 0, 1, 1]
    as_int = kendall_censored(x, y, flags)
    as_bool = kendall_censored(x, y, np.array(flags, dtype=bool))
    assert as_int == as_bool
    assert (as_int.censored, as_int.undetermined) == (2, 5) and as_int.method.endswith(
        "; 2 censored (Gehan comparisons)"
    )


def test_the_rows_function_reads_integer_censoring_flags_as_booleans():

    x = np.arange(7.0)
    y = np.array([[1.0, 3, 2, 5, 4, 6, 2], [2.0, 1, 3, 5, 4, 7, 6]])
    flags = np.array([[0, 0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0, 0]])
    as_int = kendall_censored_rows(x, y, flags)
    as_bool = kendall_censored_rows(x, y, flags.astype(bool))
    for got, want in zip(as_int, as_bool, strict=True):
        np.testing.assert_array_equal(got, want)
    for b in range(2):
        one = kendall_censored(x, y[b], flags[b].astype(bool))
        assert (as_int[0][b], as_int[1][b]) == (pytest.approx(one.tau, rel=1e-12), one.s)


def test_the_rows_function_with_tied_x_and_a_row_without_any_known_order():

    x = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 4.0])  # two tied pairs
    y = np.array([[1.0, 2, 3, 5, 4, 6], [6.0, 5, 4, 3, 2, 1], [1.0, 2, 3, 4, 5, 6]])
    cens = np.zeros((3, 6), dtype=bool)
    cens[2] = True  # every value censored: no pair's order is known
    tau, s, den = kendall_censored_rows(x, y, cens)
    for b in range(2):
        one = kendall_censored(x, y[b], cens[b])
        assert tau[b] == pytest.approx(one.tau, rel=1e-12) and s[b] == one.s
        assert den[b] == pytest.approx(math.sqrt((15 - 2) * (15 - one.undetermined)), rel=1e-12)
    assert tau.dtype == np.float64 and math.isnan(tau[2]) and s[2] == 0 and den[2] == 0.0


def test_the_rows_p_refuses_a_nan_x_whole_and_reads_integer_flags():
    with pytest.raises(ValueError) as e:
        permutation_p_rows([1.0, np.nan, 3.0], np.ones((1, 3)), np.zeros((1, 3), dtype=bool), [0])
    assert str(e.value) == "x must not hold NaN"
    x = np.arange(6.0)
    y = np.array([[1.0, 3, 2, 5, 4, 2]])  # the censored 2 is undetermined against 2 to 5
    flags = np.array([[0, 0, 0, 0, 0, 1]])
    one = kendall_censored(x, y[0], flags[0].astype(bool))
    got = permutation_p_rows(x, y, flags, np.array([one.s]))
    assert got.tolist() == [one.p]


def _null_by_brute_force(x, y):
    """S of every order of y against x (no ties, no censoring): the exact null by enumeration."""

    x = np.asarray(x, dtype=float)
    n = len(x)
    out = []
    for order in itertools.permutations(range(n)):
        yy = np.asarray(y, dtype=float)[list(order)]
        out.append(
            sum(
                np.sign(x[a] - x[b]) * np.sign(yy[a] - yy[b])
                for a in range(n)
                for b in range(a + 1, n)
            )
        )
    return np.array(out)


def test_a_falling_trend_against_scipys_exact_test_both_ways():
    x = np.arange(7.0)
    y = np.array([7.0, 5, 6, 3, 4, 1, 2])  # S = -15
    greater = kendall_censored(x, y)
    two = kendall_censored(x, y, alternative="two-sided")
    assert greater.s == -15
    ref_greater = stats.kendalltau(x, y, method="exact", alternative="greater").pvalue
    assert greater.p == pytest.approx(ref_greater, rel=1e-9) and greater.p > 0.95
    assert two.p == pytest.approx(stats.kendalltau(x, y, method="exact").pvalue, rel=1e-9)


def test_the_rows_p_at_moved_statistics_of_rows_with_the_same_comparisons():
    x = np.arange(6.0)
    y = np.array([[1.0, 3, 2, 5, 4, 6]] * 3)  # one null distribution shared by three rows
    s = np.array([11.0, 7.0, np.nan])  # the row's own S, a moved one, an undefined one
    null = _null_by_brute_force(x, y[0])
    got = permutation_p_rows(x, y, np.zeros((3, 6), dtype=bool), s)
    assert got[0] == pytest.approx(np.mean(null >= 11), rel=1e-12)
    assert got[1] == pytest.approx(np.mean(null >= 7), rel=1e-12) and got[1] > got[0]
    assert got.dtype == np.float64 and math.isnan(got[2])
    two = permutation_p_rows(
        x, y[:2], np.zeros((2, 6), dtype=bool), [-11.0, 7.0], alternative="two-sided"
    )
    assert two[0] == pytest.approx(np.mean(np.abs(null) >= 11), rel=1e-12)
    assert two[1] == pytest.approx(np.mean(np.abs(null) >= 7), rel=1e-12)


def test_the_rows_p_of_more_than_a_block_of_distinct_rows():
    # 140 redraws with different comparisons: the null distributions are built 64 at a time

    x = np.arange(6.0)
    y = np.array(list(itertools.permutations(range(6)))[::5][:140], dtype=float)
    cens = np.zeros_like(y, dtype=bool)
    s = np.array([kendall_censored(x, row).s for row in y], dtype=float)
    got = permutation_p_rows(x, y, cens, s)
    null = _null_by_brute_force(x, np.arange(6.0))  # no ties: every row's null is this one
    want = [np.mean(null >= v) for v in s]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(np.unique(y, axis=0)) == 140

"""The intervals of a difference of two proportions (``repro.base.stats``), against the values
Newcombe published for his method 10: paired data (Stat Med 1998, 17: 2635-2650, Table II)
and two independent samples (Stat Med 1998, 17: 873-890, Table II), to the 4 decimals printed
there; and against an independent simulation of the coverage they promise."""

from __future__ import annotations

import numpy as np
import pytest

from repro.base.stats import binomial_interval, difference_interval, paired_difference_interval

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ((36, 12, 2, 0), (0.0569, 0.3404)),
        ((18, 12, 2, 18), (0.0562, 0.3290)),
        ((53, 0, 0, 1), (-0.0729, 0.0729)),
        ((0, 30, 0, 0), (0.8395, 1.0)),
    ],
)
def test_paired_difference_interval_matches_newcombe_1998_table(table, expected):
    lo, hi = paired_difference_interval(*table)
    assert (round(lo, 4), round(hi, 4)) == expected


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((56, 70, 48, 80), (0.0524, 0.3339)),
        ((9, 10, 3, 10), (0.1705, 0.8090)),
    ],
)
def test_independent_difference_interval_matches_newcombe_1998_table(counts, expected):
    lo, hi = difference_interval(*counts)
    assert (round(lo, 4), round(hi, 4)) == expected


def test_paired_interval_is_narrower_than_the_independent_one_for_concordant_judgements():
    """1,000 items judged twice that agree on all but 10 (6 vs 4): the paired interval knows the
    judgements move together; treated as independent samples the same margins are far wider."""
    paired = paired_difference_interval(700, 6, 4, 290)
    independent = difference_interval(706, 1000, 704, 1000)
    assert paired[0] < 0.002 < paired[1] and paired[1] - paired[0] < 0.02
    assert independent[1] - independent[0] > 0.07


def test_paired_interval_covers_the_true_difference_as_promised():
    """Simulated paired judgements (p1 = 0.30, p2 = 0.25, correlated): the 95% interval covers
    the true difference 0.05 in 93-97% of 2,000 tables of 200 items (Newcombe: close to nominal)."""
    rng = np.random.default_rng(20)
    cells = np.array([0.20, 0.10, 0.05, 0.65])  # both, first only, second only, neither
    covered = 0
    for table in rng.multinomial(200, cells, size=2000):
        lo, hi = paired_difference_interval(*table)
        covered += lo <= 0.05 <= hi
    assert 0.93 <= covered / 2000 <= 0.97


def test_difference_intervals_reject_impossible_counts():
    with pytest.raises(ValueError, match=">= 0"):
        paired_difference_interval(1, -1, 0, 0)
    with pytest.raises(ValueError, match="n > 0"):
        paired_difference_interval(0, 0, 0, 0)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        difference_interval(11, 10, 3, 10)
    with pytest.raises(ValueError, match="confidence"):
        difference_interval(1, 10, 3, 10, confidence=1.0)


def test_the_difference_of_equal_counts_is_centred_on_zero():
    lo, hi = difference_interval(30, 100, 30, 100)
    assert lo == pytest.approx(-hi) and lo < 0 < hi
    w = binomial_interval(30, 100)
    assert hi < (w[1] - w[0])  # square-and-add: narrower than the two widths added

"""Placement ranks (``repro.placement.rank``) against hand counts: rank, the tie range, the
percentile with ties counted half, the range over the value's interval, undefined population
values left out and counted; and against an independent computation (scipy's rankdata) over
random populations with heavy ties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import rankdata

from repro.placement.rank import rank_among

pytestmark = pytest.mark.unit
POP = [0.9, 0.7, 0.5, 0.5, 0.5, 0.3, 0.1]  # 7 values, three tied at 0.5


def test_hand_counts_without_ties():
    r = rank_among(0.6, POP)
    assert (r.rank, r.tie_worst, r.best, r.worst, r.of) == (3, 3, 3, 3, 7)  # 0.9, 0.7 above
    assert r.percentile == pytest.approx(100 * 5 / 7)  # 0.5 x3, 0.3, 0.1 below
    assert r.rank_text() == "3" and r.range_text() == "3-3"


def test_ties_give_a_range_and_count_half():
    r = rank_among(0.5, POP)
    assert (r.rank, r.tie_worst, r.ties) == (3, 6, 3)  # shares ranks 3..6 with the three 0.5s
    assert r.rank_text() == "3-6"
    assert r.percentile == pytest.approx(100 * (2 + 0.5 * 3) / 7)


def test_the_range_over_the_interval():
    r = rank_among(0.6, POP, (0.45, 0.75))
    assert (r.best, r.worst) == (2, 6)  # above 0.75: 0.9 only; at 0.45: 0.9, 0.7, 0.5 x3 above
    r = rank_among(0.6, POP, (0.5, 0.6))
    assert r.worst == 6  # at 0.5 its ties count against it: 0.9, 0.7 and the three 0.5s
    r = rank_among(0.95, POP, (0.92, 0.99))
    assert (r.rank, r.best, r.worst, r.percentile) == (1, 1, 1, 100.0)
    r = rank_among(0.0, POP)
    assert (r.rank, r.percentile) == (8, 0.0)


def test_undefined_population_values_are_left_out_and_counted():
    r = rank_among(0.6, [*POP, None, math.nan])
    assert (r.rank, r.of, r.undefined) == (3, 7, 2)
    with pytest.raises(ValueError, match="no defined population value"):
        rank_among(0.5, [None, math.nan])
    with pytest.raises(ValueError, match="not finite"):
        rank_among(math.nan, POP)


def test_against_scipy_rankdata_with_heavy_ties():
    """Integer-valued populations (like critical-band thresholds): the value's tie range is
    scipy's 'min' and 'max' rank of the value in the population with it added, descending."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        pop = rng.integers(0, 5, size=int(rng.integers(1, 40))).astype(float)
        value = float(rng.integers(0, 6))
        r = rank_among(value, pop.tolist())
        both = np.append(-pop, -value)  # descending: the largest gets rank 1
        assert r.rank == int(rankdata(both, method="min")[-1])
        assert r.tie_worst == int(rankdata(both, method="max")[-1])
        assert r.percentile == pytest.approx(
            100 * (np.sum(pop < value) + 0.5 * np.sum(pop == value)) / len(pop)
        )

"""At or below chance (``repro.analysis.chance``): the one-sided exact binomial p against a hand
sum of binomial terms, and the flag at the 16-class chance rate."""

from __future__ import annotations

import math

import pytest

from repro.analysis.chance import CHANCE_16, above_chance_p, at_chance, chance_ratio

pytestmark = pytest.mark.unit


def test_above_chance_p_is_the_upper_binomial_tail():
    n, p = 40, 1 / 16
    for k in (0, 2, 3, 6, 10):
        tail = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
        assert above_chance_p(k, n, p) == pytest.approx(tail, rel=1e-9)


def test_sixteen_class_values_at_chance():
    # 58 of 1,050 right (5.5%) is below 1/16 = 6.25%; 90 of 1,050 (8.6%) is above it (p = 0.002)
    assert at_chance(58, 1050) and at_chance(66, 1050)
    assert not at_chance(90, 1050) and above_chance_p(90, 1050, CHANCE_16) < 0.01
    assert chance_ratio(974, 1050) == pytest.approx(
        1050 / 16 / 974
    )  # 0.067: the HFC ratio of chance guessing
    with pytest.raises(ValueError):
        above_chance_p(5, 0, CHANCE_16)

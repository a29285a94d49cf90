"""Fit conditioning (repro.scoring.fit_conditioning): the moved starts and the stable digits.

The moved starts are the study's start (A, mu, sigma) = (1, 0, 1) with A and sigma scaled by
1 + 1e-4 z and mu shifted by 1e-4 z, z the first standard normals of NumPy's default generator
seeded 20240501 (METHODS.md / the module's documented seed); recomputed here from NumPy itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from repro.scoring import critical_band
from repro.scoring.fit_conditioning import (
    STARTS,
    moved_start,
    sensitivity,
    stable_decimals,
    stable_text,
)

pytestmark = pytest.mark.unit


def test_the_moved_starts_are_the_seeded_moves_of_the_study_start():
    z = np.random.default_rng(20_240_501).standard_normal((4, 3))
    expected = [(1.0 + 1e-4 * a, 0.0 + 1e-4 * m, 1.0 + 1e-4 * s) for a, m, s in z]
    assert len(STARTS) == 4
    for got, want in zip(STARTS, expected, strict=True):
        assert got == pytest.approx(want, rel=1e-15, abs=1e-18)
    # each move is small (|z| < 5 for four draws) but not zero: A and sigma stay near 1, mu near 0
    for a, m, s in STARTS:
        assert 0 < abs(a - 1) < 5e-4 and 0 < abs(m) < 5e-4 and 0 < abs(s - 1) < 5e-4


def _numpy_starts() -> list[tuple[float, float, float]]:
    z = np.random.default_rng(20_240_501).standard_normal((4, 3))
    return [(1.0 + 1e-4 * a, 1e-4 * m, 1.0 + 1e-4 * s) for a, m, s in z]


def test_sensitivity_is_the_relative_spread_of_the_summaries_over_the_starts():
    y = (4.0, 4.0, 2.0, 4.0, 4.0, 4.0, 4.0)  # alexnet's vector, ill-conditioned (docstring)
    rows = []
    for start in [(1.0, 0.0, 1.0), *_numpy_starts()]:
        params = critical_band._fit_params(y, start)
        assert params is not None
        rows.append(critical_band.summaries(params))
    a = np.array(rows)
    expected = (a.max(axis=0) - a.min(axis=0)) / np.abs(a).mean(axis=0)
    got = sensitivity(y)
    assert got is not None and len(got) == 3
    assert np.allclose(got, expected, rtol=1e-12, atol=0)
    assert all(v > 0 for v in got)  # moved starts do move this fit
    assert critical_band.START.get() == (1.0, 0.0, 1.0)  # the study's start is back afterwards


def test_moved_start_sets_the_start_inside_the_block_only():
    with moved_start((2, 0.5, 3)):
        assert critical_band.START.get() == (2.0, 0.5, 3.0)
    assert critical_band.START.get() == (1.0, 0.0, 1.0)


# stable_decimals: value +- value * margin * rel must round the same at the returned decimals.
# 62.98776 with rel 2e-6, margin 10: err = 0.00125976, ends 62.98650 .. 62.98902: they differ at
# 4 and 3 decimals (62.9865/62.9890, 62.986 or 62.987/62.989) and agree at 2 (62.99).
# With margin 1: err = 0.000126, ends 62.987634 .. 62.987886: agree at 3 (62.988), not at 4.
# 17421.5 with rel 1.8e-5: err = 3.13587, ends 17418.36 .. 17424.64: agree first at -1 (17420).
# 1.0 with rel 1.0: err = 10, ends -9 .. 11: round(-9, -2) == round(11, -2) == 0 at -2.
# 1e15 with rel 1.0: err = 1e16, ends -9e15 .. 1.1e16 never agree down to -11: the floor -12.
@pytest.mark.parametrize(
    ("value", "rel", "decimals", "margin", "expected"),
    [
        (62.98776, 2e-6, 4, 10.0, 2),
        (62.98776, 2e-6, 4, 1.0, 3),
        (17421.5, 1.8e-5, 2, 10.0, -1),
        (1.0, 1.0, 3, 10.0, -2),
        (1e15, 1.0, 2, 10.0, -12),
        (62.98776, 0.0, 4, 10.0, 4),  # no spread: all the decimals asked for
        (62.98776, 1e-12, 4, 10.0, 4),  # err 6.3e-10: stable at 4, never more than asked
        (62.98776, 0.5, 4, 10.0, -3),  # err 314.9, ends -251.9 .. 377.9: -300 vs 400, then 0
        (float("nan"), 1e-3, 3, 10.0, 3),
        (float("inf"), 1e-3, 3, 10.0, 3),
    ],
)
def test_stable_decimals_are_those_both_ends_of_the_spread_round_to(
    value, rel, decimals, margin, expected
):
    assert stable_decimals(value, rel, decimals, margin) == expected


def test_stable_decimals_default_margin_is_ten():
    # margin 10 gives 2 decimals (above); margin 1 would give 3
    assert stable_decimals(62.98776, 2e-6, 4) == 2


@pytest.mark.parametrize(
    ("value", "rel", "decimals", "margin", "expected"),
    [
        (62.98776, 2e-6, 4, 10.0, "62.99"),
        (62.98776, 2e-6, 4, 1.0, "62.988"),
        (17421.5, 1.8e-5, 2, 10.0, "17420"),  # tens
        (1.0, 1.0, 3, 10.0, "undetermined"),  # rounds to 0 at -2 decimals
        (0.0, 0.0, 2, 10.0, "0.00"),  # zero itself is determined
        (62.98776, 0.0, 3, 10.0, "62.988"),
    ],
)
def test_stable_text_prints_the_stable_decimals(value, rel, decimals, margin, expected):
    assert stable_text(value, rel, decimals, margin) == expected


def test_stable_text_default_margin_is_ten():
    assert stable_text(62.98776, 2e-6, 4) == "62.99"

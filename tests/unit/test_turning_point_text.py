"""What the two inverted-U tests print (``UTest.text``, ``TwoLines.text``): every field in its
place, the Fieller interval bounded only when both ends are finite, the level from alpha, and the
conclusion from the decision, not from the sign of a slope alone."""

from __future__ import annotations

import math

import pytest

from repro.analysis.turning_point import TwoLines, UTest

pytestmark = pytest.mark.unit


def _u(**change):
    fields = dict(
        b1=1.0,
        b2=-1.0,
        x_low=0.2,
        x_high=0.8,
        slope_low=0.61234,
        slope_high=-0.5,
        t_low=3.456,
        t_high=-2.2,
        t=2.2,
        p=0.0123,
        df=12,
        vertex=0.5,
        vertex_interval=(0.41, 0.59),
        alpha=0.05,
        inside=True,
    )
    return UTest(**(fields | change))


def test_the_u_test_text_of_an_inverted_u():
    assert _u().text() == (
        "U test (Lind-Mehlum): slope +0.6123 at x = 0.200 (t +3.46), -0.5 at x = 0.800 (t -2.20); "
        "p = 0.012; vertex 0.500, 95% Fieller interval [0.410, 0.590]: inverted U at 0.05"
    )


@pytest.mark.parametrize("ends", [(-math.inf, 0.59), (0.41, math.inf), (-math.inf, math.inf)])
def test_the_u_test_text_calls_an_interval_with_an_infinite_end_unbounded(ends):
    assert (
        _u(vertex_interval=ends)
        .text()
        .endswith("vertex 0.500, 95% Fieller interval unbounded: inverted U at 0.05")
    )


def test_the_u_test_text_without_an_inverted_u_at_another_level():
    # p over alpha: not shown, whatever the slopes; the level reads 90% and 0.1
    u = _u(p=0.2, alpha=0.1)
    assert not u.inverted_u
    assert u.text().endswith(
        "p = 0.2; vertex 0.500, 90% Fieller interval [0.410, 0.590]: no inverted U shown at 0.1"
    )


def _two(**change):
    fields = dict(
        breakpoint=0.45,
        n_low=7,
        n_high=9,
        slope_low=12.5,
        slope_high=-3.25,
        p_low=0.004,
        p_high=0.031,
        df=12,
        alpha=0.05,
    )
    return TwoLines(**(fields | change))


def test_the_two_lines_text_of_an_inverted_u():
    assert _two().text() == (
        "two lines (Simonsohn) at x = 0.450: slope +12.5 over 7 points below (p = 0.004), -3.25 "
        "over 9 at or above (p = 0.031): inverted U at 0.05"
    )


def test_the_two_lines_text_without_an_inverted_u():
    # the high line is not significant at 0.01
    t = _two(alpha=0.01)
    assert not t.inverted_u
    assert t.text() == (
        "two lines (Simonsohn) at x = 0.450: slope +12.5 over 7 points below (p = 0.004), -3.25 "
        "over 9 at or above (p = 0.031): no inverted U shown at 0.01"
    )

"""Fit conditioning: the seeded start points as built by ``_starts``, and ``sensitivity``'s
handling of a summary whose mean magnitude is zero.

``STARTS`` is computed once at import, so the start points are checked here by calling
``_starts()`` itself and comparing exactly with the same moves recomputed with NumPy from the
module's constants (SEED, N_STARTS, DELTA) and the study's start P0.

A summary that is zero at every start (or whose mean magnitude underflows to zero) has no
relative spread to measure: ``sensitivity`` reports 0.0 for it, quietly. The fits are replaced by
fixed summary rows (one per start) so that those columns can be built exactly.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from repro.scoring import critical_band
from repro.scoring import fit_conditioning as fc

pytestmark = pytest.mark.unit


def test_starts_are_the_seeded_relative_and_absolute_moves_of_p0_exactly():
    assert fc.P0 == (1.0, 0.0, 1.0)  # the study's start: mu is moved absolutely (it is 0)
    z = np.random.default_rng(fc.SEED).standard_normal((fc.N_STARTS, 3))
    p0 = np.array(fc.P0)
    expected = np.column_stack(
        [
            p0[0] * (1.0 + fc.DELTA * z[:, 0]),  # A scaled by 1 + DELTA z
            p0[1] + fc.DELTA * z[:, 1],  # mu shifted by DELTA z
            p0[2] * (1.0 + fc.DELTA * z[:, 2]),  # sigma scaled by 1 + DELTA z
        ]
    )
    got = fc._starts()
    assert isinstance(got, tuple) and all(isinstance(p, tuple) for p in got)
    # IEEE double arithmetic: NumPy's elementwise ops give the same bits as Python floats
    assert got == tuple(tuple(float(v) for v in row) for row in expected)
    assert fc.STARTS == got  # the import-time constant is the same points


def _fake_fits(monkeypatch, rows_by_start: dict[tuple[float, float, float], tuple]) -> None:
    """Every fit "returns" its start as parameters, and the summaries of that start are given."""
    monkeypatch.setattr(fc, "fit_params", lambda y: critical_band.START.get())
    monkeypatch.setattr(fc, "summaries", lambda params: rows_by_start[tuple(params)])


def _starts_in_order() -> list[tuple[float, float, float]]:
    return [fc.P0, *fc.STARTS]


def test_sensitivity_of_a_summary_that_is_zero_at_every_start_is_zero_without_warnings(
    monkeypatch,
):
    # column 0: zero at all five starts (mean |.| 0, spread 0: 0/0 would be nan);
    # column 1: 1..5, mean 3, spread 4 -> 4/3; column 2: all 2.0 -> spread 0 -> 0.0
    starts = _starts_in_order()
    assert len(starts) == 5
    rows = {s: (0.0, float(i + 1), 2.0) for i, s in enumerate(starts)}
    _fake_fits(monkeypatch, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the 0/0 of the zero column must stay quiet
        got = fc.sensitivity([4, 4, 2, 4, 4, 4, 4])
    assert got == (0.0, 4.0 / 3.0, 0.0)
    assert all(type(v) is float for v in got)


def test_sensitivity_where_the_mean_magnitude_underflows_to_zero_is_zero_without_warnings(
    monkeypatch,
):
    # column 0: the smallest subnormal 5e-324 at one start, 0 at the other four: the spread is
    # 5e-324 but the mean magnitude 5e-324 / 5 rounds to 0.0, so spread / scale would be a
    # division by zero (inf). Column 1 and 2: 10, 10, 10, 10, 12 -> spread 2 over mean 10.4.
    tiny = 5e-324
    assert tiny > 0 and np.abs(np.array([tiny, 0, 0, 0, 0])).mean() == 0.0
    starts = _starts_in_order()
    rows = {s: (tiny if i == 0 else 0.0, 10.0, 10.0) for i, s in enumerate(starts)}
    rows[starts[-1]] = (0.0, 12.0, -12.0)  # the magnitude, not the sign, is averaged
    _fake_fits(monkeypatch, rows)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the x/0 of the underflowed column must stay quiet
        got = fc.sensitivity([4, 4, 2, 4, 4, 4, 4])
    # column 2: max 10, min -12 -> spread 22 over mean |.| 52 / 5 = 10.4
    assert got == (0.0, 2.0 / 10.4, 22.0 / 10.4)


def test_sensitivity_is_none_when_a_moved_fit_fails(monkeypatch):
    starts = _starts_in_order()
    monkeypatch.setattr(
        fc,
        "fit_params",
        lambda y: None if critical_band.START.get() == starts[3] else critical_band.START.get(),
    )
    monkeypatch.setattr(fc, "summaries", lambda params: (1.0, 1.0, 1.0))
    assert fc.sensitivity([4, 4, 2, 4, 4, 4, 4]) is None
    assert critical_band.START.get() == fc.P0  # the study's start is back afterwards

"""Scoring stage: how well a critical-band fit's end point is determined, and its stable digits.

The stable digits are the digits of the end point that can be printed and compared.

curve_fit stops where its tolerances say the cost no longer falls. For a well-conditioned
threshold vector that point is fixed to about 1e-10; for an ill-conditioned one (a narrow
spike, a fit whose centre lies far outside the seven bands, a near-flat vector) it lies
somewhere along a near-flat valley, and any small change on the way there moves it: the
rounding of another CPU's kernels as much as another start. Measured for alexnet's 4,4,2,4,4,4,4
under four OpenBLAS kernel families with NumPy's AVX-512 paths on and off: bandwidth
62.98771-62.98782 (relative 1.9e-6), centre 17421.40-17421.65 (1.4e-5); under starts moved by
1e-4 (``sensitivity``): 2.3e-6 and 1.8e-5. The same holds for the other vectors measured
(docs/testing.md, "Kernels and CPUs").

So the spread of a fit's summaries over a few slightly moved starts (``STARTS``, seeded) is its
measured sensitivity: comparisons allow ``MARGIN`` times it (``tests/snapshot_ext.py``), and
printed values keep only the decimals that it leaves stable (``stable_decimals``). A flat vector
(all thresholds equal) has no fit at all (``critical_band.fit``: undefined).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator

import numpy as np

from repro.scoring.critical_band import P0, START, fit_params, summaries

SEED = 20_240_501
DELTA = 1e-4  # relative size of the moves of (A, mu, sigma)'s start
N_STARTS = 4
MARGIN = 10.0  # comparisons allow this many times the measured spread


def _starts() -> tuple[tuple[float, float, float], ...]:
    """A and sigma moved by a relative DELTA, mu (0 at the study's start) by an absolute one."""
    z = np.random.default_rng(SEED).standard_normal((N_STARTS, 3))
    return tuple(
        (P0[0] * (1 + DELTA * a), P0[1] + DELTA * m, P0[2] * (1 + DELTA * s))
        for a, m, s in z.tolist()
    )


#: the moved starts, the same in every process and on every machine
STARTS: tuple[tuple[float, float, float], ...] = _starts()


@contextlib.contextmanager
def moved_start(start: tuple[float, float, float]) -> Iterator[None]:
    """A block in which every critical-band fit starts from ``start``.

    Instead of the study's (1, 0, 1); tables built inside it are other tables (their caches are
    keyed by the start)."""
    token = START.set(tuple(float(v) for v in start))  # type: ignore[arg-type]
    try:
        yield
    finally:
        START.reset(token)


def sensitivity(thresholds: Iterable[float]) -> tuple[float, float, float] | None:
    """Relative spread (max - min over |mean|) of (bandwidth, centre, PNS) over the starts.

    The starts are the study's and ``STARTS``; None where a fit fails (a flat vector is undefined
    before any fit: callers check ``critical_band.fit`` first)."""
    y = tuple(float(v) for v in thresholds)
    rows = []
    for start in (P0, *STARTS):
        with moved_start(start):
            params = fit_params(y)
        if params is None:
            return None
        rows.append(summaries(params))
    a = np.asarray(rows, dtype=float)
    scale = np.abs(a).mean(axis=0)
    spread = a.max(axis=0) - a.min(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(scale > 0, spread / scale, 0.0)
    return tuple(float(v) for v in rel)  # type: ignore[return-value]


def stable_decimals(value: float, rel: float, decimals: int, margin: float = MARGIN) -> int:
    """The most decimals, at most ``decimals``, at which ``value`` is stable under its spread.

    Those at which ``value`` rounds the same at both ends of ``value * (1 +- margin * rel)``; may be
    negative (tens, hundreds). ``decimals`` when ``rel`` is 0 or the value is not finite."""
    if not math.isfinite(value) or rel <= 0:
        return decimals
    err = abs(value) * margin * rel
    d = decimals
    while d > -12:
        if round(value - err, d) == round(value + err, d):
            return d
        d -= 1
    return d


UNDETERMINED = "undetermined"


def stable_text(value: float, rel: float, decimals: int, margin: float = MARGIN) -> str:
    """``value`` printed to its ``stable_decimals``: ``62.99``, ``17420`` (tens).

    ``undetermined`` where not even its leading digit is stable (a non-zero value that rounds to 0
    at the stable decimals)."""
    d = stable_decimals(value, rel, decimals, margin)
    if value != 0 and round(value, d) == 0:
        return UNDETERMINED
    if d >= 0:
        return f"{value:.{d}f}"
    return f"{round(value, d):.0f}"

"""Counts and their uncertainty: each accuracy is a ``Count`` (k of n) with a confidence interval.

Every accuracy in repro is a ``Count`` (k of n), never a bare rate, and carries a binomial
confidence interval.

Wilson score interval by default (well behaved near 0 and 1, unlike the Wald interval);
Clopper-Pearson (exact, conservative) on request.

The difference of two proportions by Newcombe's square-and-add of the two Wilson intervals
(Newcombe 1998, Statistics in Medicine 17: 873-890, method 10, for two independent samples:
``difference_interval``; Newcombe 1998, Statistics in Medicine 17: 2635-2650, method 10, for
paired data, where each item is judged twice: ``paired_difference_interval``, with the phi
correction for the correlation of the two judgements).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def binomial_interval(
    k: int, n: int, confidence: float = 0.95, method: str = "wilson"
) -> tuple[float, float]:
    """Two-sided ``confidence`` interval for a proportion k/n, as fractions in [0, 1]."""
    if n <= 0:
        raise ValueError(f"binomial interval needs n > 0, got n={n}")
    if not 0 <= k <= n:
        raise ValueError(f"binomial interval needs 0 <= k <= n, got k={k}, n={n}")
    from scipy import stats as _st  # lazy: keeps CLI start-up (listing, scoring) fast

    alpha = 1.0 - confidence
    if method == "wilson":
        z = float(_st.norm.ppf(1 - alpha / 2))
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        # at k = 0 / k = n the Wilson bound is exactly 0 / 1; avoid 1 - 1e-16 from rounding
        lo = 0.0 if k == 0 else max(0.0, centre - half)
        hi = 1.0 if k == n else min(1.0, centre + half)
        return lo, hi
    if method == "clopper-pearson":
        lo = 0.0 if k == 0 else float(_st.beta.ppf(alpha / 2, k, n - k + 1))
        hi = 1.0 if k == n else float(_st.beta.ppf(1 - alpha / 2, k + 1, n - k))
        return lo, hi
    raise ValueError(f"unknown interval method {method!r} (wilson, clopper-pearson)")


def _z(confidence: float) -> float:
    from scipy import stats as _st

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    return float(_st.norm.ppf(0.5 + confidence / 2.0))


def _square_and_add(
    p1: float, iv1: tuple[float, float], p2: float, iv2: tuple[float, float], phi: float = 0.0
) -> tuple[float, float]:
    (l1, u1), (l2, u2) = iv1, iv2
    d = p1 - p2
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(
        max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    )
    return max(-1.0, low), min(1.0, high)


def difference_interval(
    k1: int, n1: int, k2: int, n2: int, confidence: float = 0.95
) -> tuple[float, float]:
    """``confidence`` interval of k1/n1 - k2/n2 for two INDEPENDENT samples.

    Newcombe's hybrid score interval (the square-and-add of the two Wilson intervals; method 10
    of Newcombe 1998, Stat Med 17: 873-890)."""
    _z(confidence)
    iv1, iv2 = binomial_interval(k1, n1, confidence), binomial_interval(k2, n2, confidence)
    return _square_and_add(k1 / n1, iv1, k2 / n2, iv2)


def paired_difference_interval(
    both: int, first_only: int, second_only: int, neither: int, confidence: float = 0.95
) -> tuple[float, float]:
    """``confidence`` interval of p1 - p2 for PAIRED proportions.

    n items each judged twice (e.g. correct by our run and correct by the published run), counted
    as ``both``, ``first_only``, ``second_only`` and ``neither`` (p1 = (both + first_only) / n,
    p2 = (both + second_only) / n). Newcombe's method 10 (Stat Med 1998, 17: 2635-2650): the
    square-and-add of the two marginal Wilson intervals, corrected by the phi coefficient of the
    2x2 table (with its continuity adjustment: ad - bc above n/2 is reduced by n/2, between 0 and
    n/2 it is 0; phi = 0 when a margin is empty)."""
    a, b, c, d = (int(x) for x in (both, first_only, second_only, neither))
    if min(a, b, c, d) < 0:
        raise ValueError(f"paired counts must be >= 0, got {a}, {b}, {c}, {d}")
    n = a + b + c + d
    if n == 0:
        raise ValueError("a paired difference needs n > 0 items")
    _z(confidence)
    product = (a + b) * (c + d) * (a + c) * (b + d)
    phi = 0.0
    if product > 0:
        cross = a * d - b * c
        adjusted = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
        phi = adjusted / math.sqrt(product)
    iv1, iv2 = binomial_interval(a + b, n, confidence), binomial_interval(a + c, n, confidence)
    return _square_and_add((a + b) / n, iv1, (a + c) / n, iv2, phi)


@dataclass(frozen=True)
class Count:
    """k successes out of n trials."""

    k: int
    n: int

    def __post_init__(self) -> None:
        if self.n < 0 or not 0 <= self.k <= max(self.n, 0):
            raise ValueError(f"invalid count k={self.k}, n={self.n}")

    @property
    def rate(self) -> float:
        return self.k / self.n if self.n else float("nan")

    def interval(self, confidence: float = 0.95, method: str = "wilson") -> tuple[float, float]:
        return binomial_interval(self.k, self.n, confidence, method)

    def __add__(self, other: Count) -> Count:
        return Count(self.k + other.k, self.n + other.n)

    def as_json(self) -> dict[str, float | int | list[float]]:
        lo, hi = self.interval() if self.n else (float("nan"), float("nan"))
        return {"k": self.k, "n": self.n, "rate": self.rate, "interval": [lo, hi]}

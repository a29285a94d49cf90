"""Counts and their uncertainty: every accuracy in repro is a ``Count`` (k of n), never a
bare rate, and carries a binomial confidence interval.

Wilson score interval by default (well behaved near 0 and 1, unlike the Wald interval);
Clopper-Pearson (exact, conservative) on request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def binomial_interval(k: int, n: int, confidence: float = 0.95, method: str = "wilson") -> tuple[float, float]:
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

    def as_dict(self) -> dict[str, float | int | list[float]]:
        lo, hi = self.interval() if self.n else (float("nan"), float("nan"))
        return {"k": self.k, "n": self.n, "rate": self.rate, "interval": [lo, hi]}

"""Placement: where one value lands among a population's values (pure; no I/O).

- rank: 1 + the number of population values above it (1 = the largest);
- tie range: the ranks it shares with equal population values, ``rank`` to ``rank + ties``
  (a value equal to 3 population values could be any of 4 ranks);
- percentile: the share of the population below it, ties counted half, in %;
- rank over the interval: the best rank (at the interval's upper end, its ties resolved in its
  favour) and the worst (at the lower end, its ties resolved against it), so the range holds
  every rank a value inside the interval could have.

Undefined population values (None or NaN) are left out and counted (``undefined``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Rank:
    value: float
    rank: int  # 1 + number above
    tie_worst: int  # rank + number equal (the last rank the value shares with its ties)
    best: int  # best rank over the interval (its upper end, ties in its favour)
    worst: int  # worst rank over the interval (its lower end, ties against it)
    percentile: float  # share below, ties half, in %
    of: int  # defined population values
    undefined: int = 0  # population values left out (None / NaN)
    interval: tuple[float, float] | None = None

    @property
    def ties(self) -> int:
        return self.tie_worst - self.rank

    def rank_text(self) -> str:
        """``7`` or, with ties, ``7-9`` (the ranks the value shares with its equals)."""
        return f"{self.rank}" if self.tie_worst == self.rank else f"{self.rank}-{self.tie_worst}"

    def range_text(self) -> str:
        return f"{self.best}-{self.worst}"


def defined(values: Iterable[float | None]) -> tuple[list[float], int]:
    """(the finite values, how many were None or NaN)."""
    out, missing = [], 0
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            missing += 1
        else:
            out.append(float(v))
    return out, missing


def rank_among(
    value: float, population: Iterable[float | None], interval: tuple[float, float] | None = None
) -> Rank:
    """The rank of ``value`` among ``population`` (see the module docstring).

    ValueError when the population has no defined value or ``value`` is not finite."""
    pop, missing = defined(population)
    if not pop:
        raise ValueError("no defined population value to rank among")
    if not math.isfinite(value):
        raise ValueError(f"cannot rank a value that is not finite ({value!r})")
    above = sum(1 for p in pop if p > value)
    equal = sum(1 for p in pop if p == value)
    below = sum(1 for p in pop if p < value)
    lo, hi = interval if interval is not None else (value, value)
    best = 1 + sum(1 for p in pop if p > hi)
    worst = 1 + sum(1 for p in pop if p >= lo)
    return Rank(
        value,
        1 + above,
        1 + above + equal,
        best,
        worst,
        100.0 * (below + 0.5 * equal) / len(pop),
        len(pop),
        missing,
        interval,
    )

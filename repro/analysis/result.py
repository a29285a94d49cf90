"""Analysis output: what a statistic function returns (``StatisticResult``), the value the claim
checker compares with the published one, with everything it rests on.

It lives in the analysis stage (not in claims) because the statistics compute it; the claims
only read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StatisticResult:
    """A recomputed statistic with everything it rests on.

    value: the headline number compared with the published one
    p: its p-value where it has one
    n: number of models (or items) it was computed over
    interval: 95% interval of ``value`` and the method that made it
    per_model: the per-model inputs (so a regression snapshot shows which model moved)
    details: further named sub-results (e.g. per-group correlations, p-values of a table)
    sources: for each input quantity, where it came from (``published``, ``store``, ``mini``)
    """

    value: float
    p: float | None = None
    n: int | None = None
    interval: tuple[float, float] | None = None
    interval_method: str | None = None
    per_model: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

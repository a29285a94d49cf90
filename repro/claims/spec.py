"""Claims as data: the types every study's claim file is parsed into.

A claim file (``repro/claims/data/<study>.toml``) holds one ``[[claim]]`` table per claim:

    [[claim]]
    id = "shape_bias_vs_id_accuracy"          # test id: test_claim[<id>]
    study = "gavrikov2024"
    statement = "Shape bias correlates strongly negatively with ID accuracy (Total)"
    source = "Gavrikov & Keuper 2024, Sec. 4.1, Fig. 3"
    statistic = "repro.analysis.statistics:bias_category_spearman"   # lazy "module:function"
    params = { bias = "shape_bias", category = "id", group = "total" }
    published = -0.76                         # or omitted for a qualitative claim
    expected = "reproduced"                   # or "not_reproduced" (strict xfail)
    version = 1                               # bump when the claim's numbers may change
    [claim.tolerance]
    policy = "rounding"                       # a named policy in repro.claims.tolerance
    params = { decimals = 2 }
    reason = "the paper prints rho to two decimals"

Optional ``[claim.measured_tolerance]`` (same fields as ``[claim.tolerance]``) is the policy
used when the statistic's inputs come from our own measurements.

A statistic function takes ``(context, **params)`` and returns a ``StatisticResult``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Tolerance:
    policy: str
    params: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class Claim:
    id: str
    study: str
    statement: str
    source: str
    statistic: str
    params: dict[str, Any]
    published: float | None
    tolerance: Tolerance
    version: int
    expected: Literal["reproduced", "not_reproduced"] = "reproduced"
    # optional, added compatibly: the policy used when the inputs come from our own
    # measurements (``--source store|measure``); default: ``correlation_interval`` for claims
    # whose statistic carries an interval, else ``tolerance``
    measured_tolerance: Tolerance | None = None
    origin: str = ""  # the claim file it was read from
    measure: str = ""  # optional: what the recomputed number is, when not obvious (shown under the table)


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

"""Claims as data: the types every study's claim file is parsed into.

A study's claim file (the ``claims`` of its study.toml, e.g. ``repro/studies/<study>/claims.toml``) holds one ``[[claim]]`` table per claim:

    [[claim]]
    id = "shape_bias_vs_id_accuracy"          # test id: test_claim[<id>]
    study = "mystudy"                         # the study whose claim file holds it
    statement = "Shape bias correlates strongly negatively with ID accuracy (Total)"
    source = "Gavrikov & Keuper 2024, Sec. 4.1, Fig. 3"
    statistic = "mystudy_stats:bias_category_spearman"   # lazy "module:function"
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

Optional ``[claim.qualitative]`` (same fields) states the claim's qualitative content for a
claim whose tolerance is a rounding of the published value (e.g. ``sign_significance`` for
"rho = -0.76": negative and significant), so that leave-one-out robustness can tell a rounding
that breaks from a finding that breaks (``repro.claims.robustness``).

A statistic function takes ``(context, **params)`` and returns a
``repro.analysis.result.StatisticResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    qualitative: Tolerance | None = None  # optional: the claim's qualitative content (robustness)
    origin: str = ""  # the claim file it was read from
    measure: str = ""  # optional: what the recomputed number is, when not obvious (shown under the table)

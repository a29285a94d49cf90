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

Optional, what the claim's question needs beyond the paper's method (issue 21; each shown
beside the verdict under the paper's method, never changing it):

- ``[claim.estimand]``: what the claim is about. ``kind = "census"`` (the models are the
  population the claim describes: no interval over models, only measurement and replication
  intervals) or ``"sample"`` (the models stand for a wider population, e.g. training recipes:
  an interval over models that resamples the declared ``clusters``, a lazy
  ``"module:function"`` ``(context, models) -> one cluster label per model``, or
  ``"not estimable"`` where they are too few); ``population`` names it, ``unit`` the item the
  statistic counts (``model``, ``run``, ``strength``), ``reason`` why.
- ``[claim.derived]``: the expected value comes from the data under test (e.g. a count read off
  the published table), not from the paper's text or figures: the check is a regression check of
  the data, not a reproduction; ``reason`` says where the value came from.
- ``[claim.equivalence]``: for a null claim ("no correlation"), the equivalence margin on
  Spearman's rho (``margin`` in (0, 1), ``alpha``, default 0.05) and the substantive ``reason``
  for it (``repro.analysis.equivalence``).
- ``[claim.turning_point]``: for an inverted-U claim, which test decides the turning point
  (``decides = "u_test"``: Lind & Mehlum's; ``"two_lines"``: Simonsohn's two-lines test) and why.

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


ESTIMAND_KINDS = ("census", "sample")
TURNING_POINT_TESTS = ("u_test", "two_lines")


@dataclass(frozen=True)
class Estimand:
    """What the claim is about (``[claim.estimand]``): a census of its models or a sample of a
    wider population, with the clusters a bootstrap over models must resample for a sample."""

    kind: Literal["census", "sample"]
    population: str
    reason: str
    unit: str = "model"
    clusters: str | None = None  # "module:function" (context, models) -> labels; a sample only


@dataclass(frozen=True)
class Derived:
    """The claim's expected value comes from the data under test (``[claim.derived]``)."""

    reason: str


@dataclass(frozen=True)
class Equivalence:
    """The equivalence margin of a null claim (``[claim.equivalence]``)."""

    margin: float
    reason: str
    alpha: float = 0.05


@dataclass(frozen=True)
class TurningPoint:
    """Which test decides an inverted-U claim's turning point (``[claim.turning_point]``)."""

    decides: Literal["u_test", "two_lines"]
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
    estimand: Estimand | None = None  # optional: census or sample (issue 21)
    derived: Derived | None = None  # optional: the expected value comes from the data under test
    equivalence: Equivalence | None = None  # optional: a null claim's equivalence margin
    turning_point: TurningPoint | None = None  # optional: which test decides an inverted U

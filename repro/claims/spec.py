"""Claims as data: the types every study's claim file is parsed into.

A study's claim file (the ``claims`` of its study.toml, e.g. ``repro/studies/<study>/claims.toml``)
holds one ``[[claim]]`` table per claim:

    [[claim]]
    id = "shape_bias_vs_id_accuracy"          # test id: test_claim[<id>]
    study = "mystudy"                         # the study whose claim file holds it
    statement = "Shape bias correlates strongly negatively with ID accuracy (Total)"
    source = "Gavrikov & Keuper 2024, Sec. 4.1, Fig. 3"
    statistic = "mystudy_stats:bias_category_spearman"   # lazy "module:function"
    params = { bias = "shape_bias", category = "id", group = "total" }
    published = -0.76                         # or omitted for a qualitative claim
    expected = "reproduced"                   # or "not_reproduced" (strict xfail)
    expected_finding = "not_reproduced"       # optional: where the finding's verdict differs
    version = 1                               # bump when the claim's numbers may change
    [claim.tolerance]
    policy = "rounding"                       # a named policy in repro.claims.tolerance
    params = { decimals = 2 }
    reason = "the paper prints rho to two decimals"

``expected`` records the verdict under the claim's tolerance (the paper's method: its digits, a
null's p >= 0.05); ``expected_finding`` records the verdict of its finding
(``repro.diagnostics.strength``: an equivalence-tested null, a range as printed, a sign kept where
the digits move) where that differs from ``expected``. The gate reads both.

Optional ``[claim.measured_tolerance]`` (same fields as ``[claim.tolerance]``) is the policy
used when the statistic's inputs come from our own measurements.

Optional ``[claim.qualitative]`` (same fields) states the claim's qualitative content for a
claim whose tolerance is a rounding of the published value (e.g. ``sign_significance`` for
"rho = -0.76": negative and significant), so that leave-one-out robustness can tell a rounding
that breaks from a finding that breaks (``repro.diagnostics.robustness``).

Optional, what the claim's question needs beyond the paper's method (each shown
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
- ``[claim.untestable]``: the claim's test has too few units for what it fits (``units``,
  ``parameters``, ``reason``): its strength grade is ``untestable``, never a confirmation.
- ``[claim.equivalence]``: for a null claim ("no correlation"), the equivalence margin on
  Spearman's rho (``margin`` in (0, 1), ``alpha``, default 0.05) and the substantive ``reason``
  for it (``repro.analysis.equivalence``).
- ``[claim.turning_point]``: for an inverted-U claim, which test decides the turning point
  (``decides = "u_test"``: Lind & Mehlum's; ``"two_lines"``: Simonsohn's two-lines test) and why.

A statistic function takes ``(context, **params)`` and returns a
``repro.analysis.result.StatisticResult``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from repro.base.schema import INTERNAL, Expect, Float, Int, invalid, rule, table

TEXT = "{where}: {key} must be a string, got {value!r:.80}"
MISSING = "{where}: missing field(s) {missing}"


@table
class Tolerance:
    """A tolerance policy by name (``repro.claims.tolerance``), its parameters and why."""

    WHERE: ClassVar[str] = "{parent}: {key}"
    INVALID: ClassVar[str] = "{where}: tolerance must be a table with policy, params, reason"
    policy: Annotated[
        str, Expect("{where}: unknown tolerance policy {value!r} (known: {policies})")
    ]
    params: Annotated[dict[str, Any], Expect("{where}: tolerance params must be a table")]
    reason: Annotated[
        str,
        Field(pattern=r"\S"),
        Expect("{where}: tolerance needs a `reason` (why this tolerance)"),
    ]

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any, info: ValidationInfo) -> Any:
        """In a claim file ``params`` may be left out (no parameters)."""
        return {"params": {}, **data} if isinstance(data, Mapping) and info.context else data

    @field_validator("policy")
    @classmethod
    def _known(cls, policy: str, info: ValidationInfo) -> str:
        known = (info.context or {}).get("known_policies")
        if known is not None and policy not in known:
            raise invalid("{where}: unknown tolerance policy {value!r} (known: {policies})")
        return policy


ESTIMAND_KINDS = ("census", "sample")
TURNING_POINT_TESTS = ("u_test", "two_lines")
REASON = Expect("{where}: needs a `reason` (a non-empty string)")
REASONED_UNKNOWN = "{where}: unknown field {unknown_list[0]!r} (expected {known_sorted})"
REASONED_INVALID = "{where}: expected a table with a `reason`"
NON_EMPTY = "{where}: `{key}` = {value!r:.80}, expected a non-empty string"
CLUSTERS = (
    '{where}: a sample needs `clusters = "module:function"` (the units a bootstrap over models '
    "resamples), "
    "got {value!r:.80}"
)
FRACTION = "{where}: {key} = {value!r:.80}, expected a number strictly between 0 and 1"


def _fraction() -> Any:
    return rule(lambda v: 0 < v < 1, FRACTION)


@table
class Estimand:
    """What the claim is about (``[claim.estimand]``): a census of its models or a sample.

    A sample of a wider population comes with the clusters a bootstrap over models must resample."""

    WHERE: ClassVar[str] = "{parent}: {key}"
    INVALID: ClassVar[str] = REASONED_INVALID
    UNKNOWN: ClassVar[str] = REASONED_UNKNOWN
    kind: Annotated[
        Literal["census", "sample"],
        Expect("{where}: kind = {value!r:.80}, expected one of " + ", ".join(ESTIMAND_KINDS)),
    ]
    population: Annotated[str, Field(pattern=r"\S"), Expect(NON_EMPTY)]
    reason: Annotated[str, Field(pattern=r"\S"), REASON]
    unit: Annotated[str, Field(pattern=r"\S"), Expect(NON_EMPTY)] = "model"
    # "module:function" (context, models) -> labels; a sample only
    clusters: Annotated[str, Expect(CLUSTERS)] | None = None

    @model_validator(mode="after")
    def _clusters(self) -> Estimand:
        if self.kind == "sample" and (self.clusters is None or ":" not in self.clusters):
            raise invalid(CLUSTERS, value=self.clusters)
        if self.kind == "census" and self.clusters is not None:
            raise invalid(
                "{where}: a census has no clusters (no interval over models is formed); drop "
                "`clusters`"
            )
        return self


@table
class Derived:
    """The claim's expected value comes from the data under test (``[claim.derived]``)."""

    WHERE: ClassVar[str] = "{parent}: {key}"
    INVALID: ClassVar[str] = REASONED_INVALID
    UNKNOWN: ClassVar[str] = REASONED_UNKNOWN
    reason: Annotated[str, Field(pattern=r"\S"), REASON]


@table
class Untestable:
    """Too few units for the claim's test (``[claim.untestable]``).

    The strength grade ``untestable`` (``repro.diagnostics.strength``)."""

    WHERE: ClassVar[str] = "{parent}: {key}"
    INVALID: ClassVar[str] = REASONED_INVALID
    UNKNOWN: ClassVar[str] = REASONED_UNKNOWN
    units: Annotated[Int, Field(ge=1), Expect("{where}: units must be a positive integer")]
    parameters: Annotated[Int, Field(ge=0), Expect("{where}: parameters must be an integer >= 0")]
    reason: Annotated[str, Field(pattern=r"\S"), REASON]


@table
class Equivalence:
    """The equivalence margin of a null claim (``[claim.equivalence]``)."""

    WHERE: ClassVar[str] = "{parent}: {key}"
    INVALID: ClassVar[str] = REASONED_INVALID
    UNKNOWN: ClassVar[str] = REASONED_UNKNOWN
    margin: Annotated[Float, _fraction(), Expect(FRACTION)]
    reason: Annotated[str, Field(pattern=r"\S"), REASON]
    alpha: Annotated[
        Float,
        _fraction(),
        rule(
            lambda a: a < 0.5,
            "{where}: alpha = {value}, expected below 0.5 (the test uses a 1 - 2 alpha interval)",
        ),
        Expect(FRACTION),
    ] = 0.05


@table
class TurningPoint:
    """Which test decides an inverted-U claim's turning point (``[claim.turning_point]``)."""

    WHERE: ClassVar[str] = "{parent}: {key}"
    INVALID: ClassVar[str] = REASONED_INVALID
    UNKNOWN: ClassVar[str] = REASONED_UNKNOWN
    decides: Annotated[
        Literal["u_test", "two_lines"],
        Expect(
            "{where}: decides = {value!r:.80}, expected one of " + ", ".join(TURNING_POINT_TESTS)
        ),
    ]
    reason: Annotated[str, Field(pattern=r"\S"), REASON]


def _claim_where(parent: str, key: Any, data: Any, n: int | None) -> str:
    named = f" ({data['id']!r})" if isinstance(data, Mapping) and "id" in data else ""
    return f"{parent}: claim #{n}{named}"


@table
class Claim:
    """One ``[[claim]]`` table of a claim file (the module docstring lists its fields)."""

    WHERE: ClassVar[Any] = _claim_where
    INVALID: ClassVar[str] = "{where}: expected a [[claim]] table, got {value!r:.80}"
    id: Annotated[str, Expect(TEXT, MISSING)]
    study: Annotated[str, Expect(TEXT, MISSING)]
    statement: Annotated[str, Expect(TEXT, MISSING)]
    source: Annotated[str, Expect(TEXT, MISSING)]
    statistic: Annotated[
        str,
        Field(pattern=":"),
        Expect("{where}: statistic {value!r} must be 'module:function'", MISSING),
    ]
    params: Annotated[
        dict[str, Any],
        Expect("{where}: params must be a table (the statistic's parameters), got {value!r:.80}"),
    ]
    published: Annotated[
        Float | None,
        Expect("{where}: published must be a number (or omitted for a qualitative claim)"),
    ]
    tolerance: Annotated[Tolerance, Expect(missing=MISSING)]
    version: Annotated[
        Int,
        Expect(
            "{where}: version must be an integer (bump it when the claim's numbers may "
            "change), got {value!r:.80}",
            MISSING,
        ),
    ]
    expected: Annotated[
        Literal["reproduced", "not_reproduced"],
        Expect("{where}: expected must be 'reproduced' or 'not_reproduced', got {value!r}"),
    ] = "reproduced"
    # optional: the finding's recorded verdict where it is not ``expected``
    expected_finding: Annotated[
        Literal["reproduced", "not_reproduced"] | None,
        Expect("{where}: expected_finding must be 'reproduced' or 'not_reproduced', got {value!r}"),
    ] = None
    # optional, added compatibly: the policy used when the inputs come from our own
    # measurements (``--source store|measure``); default: ``correlation_interval`` for claims
    # whose statistic carries an interval, else ``tolerance``
    measured_tolerance: Tolerance | None = None
    qualitative: Tolerance | None = None  # optional: the claim's qualitative content (robustness)
    origin: Annotated[str, INTERNAL] = ""  # the claim file it was read from (set by the reader)
    measure: Annotated[str, Expect(TEXT)] = (
        ""  # optional: what the recomputed number is, when not obvious
    )
    estimand: Estimand | None = None  # optional: census or sample
    derived: Derived | None = None  # optional: the expected value comes from the data under test
    equivalence: Equivalence | None = None  # optional: a null claim's equivalence margin
    untestable: Untestable | None = None  # optional: too few units for the claim's test
    turning_point: TurningPoint | None = None  # optional: which test decides an inverted U

    @property
    def expected_finding_verdict(self) -> str:
        """The finding's recorded verdict: ``expected_finding``, else ``expected``."""
        return self.expected_finding or self.expected

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any, info: ValidationInfo) -> Any:
        """A table of a claim file, its ``origin`` the file.

        ``params`` and ``published`` may be left out."""
        if not (isinstance(data, Mapping) and info.context and "origin" in info.context):
            return data
        if "origin" in data:
            raise invalid(
                "{where}: unknown key 'origin' (a claim's origin is the file that holds it)"
            )
        return {"params": {}, "published": None, **data, "origin": info.context["origin"]}


@table
class ClaimFile:
    """A claim file: one or more ``[[claim]]`` tables."""

    claim: Annotated[tuple[Claim, ...], Field(min_length=1), Expect("{where}: no [[claim]] tables")]

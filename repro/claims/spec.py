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

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from repro.base.schema import INTERNAL, Expect, Float, Int, invalid, table

TEXT = "{where}: {key} must be a string, got {value!r:.80}"
MISSING = "{where}: missing field(s) {missing}"


@table
class Tolerance:
    """A tolerance policy by name (``repro.claims.tolerance``), its parameters and why."""

    WHERE: ClassVar[str] = "{parent}: {key}"
    INVALID: ClassVar[str] = "{where}: tolerance must be a table with policy, params, reason"
    policy: Annotated[str, Expect("{where}: unknown tolerance policy {value!r} (known: {policies})")]
    params: Annotated[dict[str, Any], Expect("{where}: tolerance params must be a table")]
    reason: Annotated[str, Field(pattern=r"\S"), Expect("{where}: tolerance needs a `reason` (why this tolerance)")]

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
    statistic: Annotated[str, Field(pattern=":"), Expect("{where}: statistic {value!r} must be 'module:function'",
                                                          MISSING)]
    params: Annotated[dict[str, Any], Expect("{where}: params must be a table (the statistic's parameters), "
                                             "got {value!r:.80}")]
    published: Annotated[Float | None, Expect("{where}: published must be a number (or omitted for a "
                                              "qualitative claim)")]
    tolerance: Annotated[Tolerance, Expect(missing=MISSING)]
    version: Annotated[Int, Expect("{where}: version must be an integer (bump it when the claim's numbers may "
                                   "change), got {value!r:.80}", MISSING)]
    expected: Annotated[Literal["reproduced", "not_reproduced"],
                        Expect("{where}: expected must be 'reproduced' or 'not_reproduced', got {value!r}")] = \
        "reproduced"
    # optional, added compatibly: the policy used when the inputs come from our own
    # measurements (``--source store|measure``); default: ``correlation_interval`` for claims
    # whose statistic carries an interval, else ``tolerance``
    measured_tolerance: Tolerance | None = None
    qualitative: Tolerance | None = None  # optional: the claim's qualitative content (robustness)
    origin: Annotated[str, INTERNAL] = ""  # the claim file it was read from (set by the reader)
    measure: Annotated[str, Expect(TEXT)] = ""  # optional: what the recomputed number is, when not obvious

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any, info: ValidationInfo) -> Any:
        """A table of a claim file: ``params`` and ``published`` may be left out; ``origin`` is the file."""
        if not (isinstance(data, Mapping) and info.context and "origin" in info.context):
            return data
        if "origin" in data:
            raise invalid("{where}: unknown key 'origin' (a claim's origin is the file that holds it)")
        return {"params": {}, "published": None, **data, "origin": info.context["origin"]}


@table
class ClaimFile:
    """A claim file: one or more ``[[claim]]`` tables."""

    claim: Annotated[tuple[Claim, ...], Field(min_length=1), Expect("{where}: no [[claim]] tables")]

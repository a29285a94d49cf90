"""Diagnostics: the one registry of what is said about a claim's verdict after the fact.

A ``Diagnostic`` has a name, the entries it adds to each claim of ``claims --json`` (``fields``:
``(outcome, context) -> {key: JSON data}``, in document order; None for one that speaks of a
whole study, as the gate's power) and the report section of a study's page that shows it
(``section``, a lazy ``"module:render"``; None for one shown elsewhere, as the strength grade in
REPORT.md's summary). ``claims --json`` (``repro.diagnostics.output.claims_document``) and the
study pages (``repro.report.sections.STUDY``) iterate ``DIAGNOSTICS`` in its order: a new
diagnostic is its module and one ``DIAGNOSTICS.register`` here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from repro.base.registry import Registry
from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.diagnostics.replication import replication
from repro.diagnostics.robustness import robustness
from repro.diagnostics.statements import statements_of
from repro.diagnostics.strength import strength

Fields = Callable[[ClaimOutcome, ClaimContext], dict[str, Any]]


@dataclass(frozen=True)
class Diagnostic:
    name: str
    fields: Fields | None = None  # the claim's entries in claims --json
    section: str | None = None  # the study page's section that shows it ("module:render")


def _robustness(o: ClaimOutcome, ctx: ClaimContext) -> dict[str, Any]:
    return {"robustness": robustness(o, ctx).as_json()}


def _replication(o: ClaimOutcome, ctx: ClaimContext) -> dict[str, Any]:
    rep = replication(o, ctx)
    return {"p_verdict": rep.p_verdict, "replication": rep.as_json()}


def _strength(o: ClaimOutcome, ctx: ClaimContext) -> dict[str, Any]:
    s = strength(o, ctx)
    return {
        "finding": s.finding.as_json(),
        "digits": None if s.digits is None else s.digits.as_json(),
        "strength": s.as_json(),
    }


#: the statements' entries in claims --json (``repro.diagnostics.statements``)
STATEMENT_FIELDS = (
    "verdict_paper_method",
    "estimand",
    "expected_source",
    "derived",
    "equivalence",
    "turning_point",
    "unit",
    "quirk_variants",
)


def _statements(o: ClaimOutcome, ctx: ClaimContext) -> dict[str, Any]:
    doc = statements_of(o, ctx).as_json()
    return {name: doc[name] for name in STATEMENT_FIELDS}


DIAGNOSTICS: Registry[Diagnostic] = Registry("diagnostic")
for _d in (
    Diagnostic("robustness", _robustness, "repro.report.sections.robustness:render"),
    Diagnostic("replication", _replication, "repro.report.sections.replication:render"),
    Diagnostic("strength", _strength),  # REPORT.md's summary (repro.report.sections.summary)
    Diagnostic("power", None, "repro.report.sections.power:render"),  # per study, --power
    Diagnostic("statements", _statements, "repro.report.sections.statements:render"),
):
    DIAGNOSTICS.register(_d.name, _d)


def claim_fields(outcome: ClaimOutcome, ctx: ClaimContext) -> dict[str, Any]:
    """Every diagnostic's entries of one claim, in the registry's order."""
    out: dict[str, Any] = {}
    for _, d in DIAGNOSTICS.items():
        if d.fields is not None:
            out |= d.fields(outcome, ctx)
    return out


def report_sections() -> list[str]:
    """The study page's diagnostic sections, in the registry's order."""
    return [d.section for _, d in DIAGNOSTICS.items() if d.section is not None]

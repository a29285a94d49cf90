"""Diagnostics: the one registry of what is said about a claim's verdict after the fact.

A ``Diagnostic`` has a name, the entries it adds to each claim of ``claims --json`` (``fields``:
``(outcome, context) -> {key: JSON data}``, in document order; None for one that speaks of a
whole study, as the gate's power), the report section of a study's page that shows it
(``section``, a lazy ``"module:render"``; None for one shown elsewhere, as the strength grade in
REPORT.md's summary) and its columns in the claims table (``columns``, each cell computed from
what ``compute`` says of the claim). ``claims --json``
(``repro.diagnostics.output.claims_document``), the claims table (``table_columns``) and the
study pages (``repro.report.sections.STUDY``) iterate ``DIAGNOSTICS`` in its order: a new
diagnostic is its module and one ``DIAGNOSTICS.register`` here.

The table's columns have an order of their own (``Column.slot``), apart from the registry's (which
is the JSON document's key order): the core's columns (``CORE_COLUMNS``) in their slots, and a
diagnostic's column in a slot already taken takes its place (the strength's finding where the
verdict stands); of two diagnostics with a column in one slot, the later registered wins.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from repro.base.registry import Registry
from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.diagnostics import cells
from repro.diagnostics.replication import replication
from repro.diagnostics.robustness import robustness
from repro.diagnostics.statements import statements_of
from repro.diagnostics.strength import strength

Fields = Callable[[ClaimOutcome, ClaimContext], dict[str, Any]]


@dataclass(frozen=True)
class Column:
    """A column of the claims table: its header, its place and its cell.

    ``cell(outcome, said)``: the text of one claim's cell, ``said`` being what the column's
    diagnostic computed for that claim (None for a core column); ``whole``: never wrapped inside
    its cell (a number, an interval); ``wide_only``: shown only in the wide table (``--wide``).
    """

    header: str
    slot: int
    cell: Callable[[ClaimOutcome, Any], str]
    whole: bool = False
    wide_only: bool = False


#: the claims table without diagnostics: the statistic's own interval, the verdict
CORE_COLUMNS = (
    Column("claim", 10, cells.claim_cell),
    Column("published", 20, cells.published_cell, whole=True),
    Column("recomputed", 30, cells.recomputed_cell, whole=True),
    Column("interval", 40, cells.interval_text, whole=True),
    Column("verdict", 50, cells.verdict_text),
    Column("evidence", 80, cells.evidence_text),
    Column("inputs", 90, cells.inputs_text, wide_only=True),
)


@dataclass(frozen=True)
class Diagnostic:
    """What is said about a claim's verdict after the fact (see the module docstring)."""

    name: str
    fields: Fields | None = None  # the claim's entries in claims --json
    section: str | None = None  # the study page's section that shows it ("module:render")
    compute: Callable[[ClaimOutcome, ClaimContext], Any] | None = None  # what its columns show
    columns: tuple[Column, ...] = ()  # its columns in the claims table


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
    Diagnostic(
        "replication",
        _replication,
        "repro.report.sections.replication:render",
        replication,
        (Column(cells.P_VERDICT, 60, cells.p_verdict_cell, whole=True),),
    ),
    Diagnostic(  # REPORT.md's summary shows it (repro.report.sections.summary)
        "strength",
        _strength,
        None,
        strength,
        (
            Column(cells.FINDING, 50, cells.finding_text),
            Column(cells.P_FINDING, 60, cells.p_finding_cell, whole=True),
            Column(cells.STRENGTH, 70, cells.grade_cell),
        ),
    ),
    Diagnostic("power", None, "repro.report.sections.power:render"),  # per study, --power
    Diagnostic(
        "statements",
        _statements,
        "repro.report.sections.statements:render",
        statements_of,
        (Column("interval", 40, cells.interval_text, whole=True),),  # the estimand's interval
    ),
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


#: what the diagnostics with columns said of each claim: {diagnostic: {claim id: result}}
Said = Mapping[str, Mapping[str, Any]]


def table_columns(said: Said) -> list[tuple[Column, Mapping[str, Any] | None]]:
    """The claims table's columns in slot order, each with what its diagnostic said per claim.

    The core's columns, and those of the diagnostics in ``said`` (by the rule of the module
    docstring).
    """
    by_slot: dict[int, tuple[Column, Mapping[str, Any] | None]] = {
        c.slot: (c, None) for c in CORE_COLUMNS
    }
    for name, d in DIAGNOSTICS.items():
        if name in said:
            by_slot |= {c.slot: (c, said[name]) for c in d.columns}
    return [by_slot[slot] for slot in sorted(by_slot)]


def said_of(results: Sequence[tuple[ClaimContext, Sequence[ClaimOutcome]]]) -> dict[str, Any]:
    """What every diagnostic with columns says of each claim of ``results``."""
    return {
        name: {o.claim.id: d.compute(o, ctx) for ctx, os in results for o in os}
        for name, d in DIAGNOSTICS.items()
        if d.columns and d.compute is not None
    }

"""The diagnostics registry (``repro.diagnostics.registry``): ``claims --json``'s per-claim
entries and a study page's diagnostic sections both come from it, in its order, and a diagnostic
registered there appears in the JSON document without any other edit."""

from __future__ import annotations

import pytest

from repro.diagnostics.output import claims_document
from repro.diagnostics.registry import (
    DIAGNOSTICS,
    STATEMENT_FIELDS,
    Diagnostic,
    claim_fields,
    report_sections,
)
from repro.report.sections import STUDY

pytestmark = pytest.mark.claims


def test_the_json_entries_and_the_page_sections_follow_the_registry(published_outcomes):
    o = published_outcomes["shape_bias_vs_id_accuracy"]
    ctx = published_outcomes.contexts[o.claim.study]
    assert DIAGNOSTICS.names() == ["robustness", "replication", "strength", "power", "statements"]
    assert list(claim_fields(o, ctx)) == [
        "robustness",
        "p_verdict",
        "replication",
        "finding",
        "digits",
        "strength",
        *STATEMENT_FIELDS,
    ]
    assert (
        STUDY[2:]
        == report_sections()
        == [
            "repro.report.sections.robustness:render",
            "repro.report.sections.replication:render",
            "repro.report.sections.power:render",
            "repro.report.sections.statements:render",
        ]
    )


def test_a_registered_diagnostic_is_in_every_claims_json_entry(published_outcomes):
    ctx = published_outcomes.contexts["subramanian2023"]
    outcomes = published_outcomes.of("subramanian2023")
    seen = []

    def fields(outcome, context):
        seen.append(outcome.claim.id)
        return {"n_inputs": outcome.result.n}

    DIAGNOSTICS.register("n_inputs", Diagnostic("n_inputs", fields))
    try:
        doc = claims_document([(ctx, outcomes)])
    finally:
        del DIAGNOSTICS._entries["n_inputs"]
    assert seen == [o.claim.id for o in outcomes] and len(seen) == 7
    assert [c["n_inputs"] for c in doc["claims"]] == [o.result.n for o in outcomes]
    assert "n_inputs" not in DIAGNOSTICS


def test_the_claims_table_columns_come_from_the_registry_in_slot_order(published_outcomes):
    """Core columns alone; a diagnostic's column in a free slot is inserted (P(verdict) after the
    verdict), one in a taken slot replaces (the strength's finding where the verdict stands)."""
    from types import SimpleNamespace

    from repro.diagnostics.output import table

    outcomes = published_outcomes.of("subramanian2023")
    core = ["claim", "published", "recomputed", "interval", "verdict", "evidence", "inputs"]
    header, body, whole = table(outcomes, {})
    assert header == core and whole == ["published", "recomputed", "interval"]
    assert [r[4].split(" (")[0] for r in body] == [o.verdict for o in outcomes]
    reps = {o.claim.id: SimpleNamespace(p_verdict=0.25) for o in outcomes}
    header, body, _ = table(outcomes, {"replication": reps})
    assert header == [*core[:5], "P(verdict)", *core[5:]] and {r[5] for r in body} == {"0.25"}
    header, _, _ = table(outcomes, {"replication": reps}, wide=False)
    assert header == [*core[:5], "P(verdict)", "evidence"]  # the inputs' provenance: --wide only


def test_a_registered_diagnostic_with_a_column_is_in_the_claims_table(published_outcomes):
    from repro.diagnostics.output import table
    from repro.diagnostics.registry import Column, said_of

    ctx = published_outcomes.contexts["subramanian2023"]
    outcomes = published_outcomes.of("subramanian2023")
    column = Column("n", 75, lambda o, n: f"{n} models")
    DIAGNOSTICS.register(
        "n_inputs", Diagnostic("n_inputs", compute=lambda o, c: o.result.n, columns=(column,))
    )
    try:
        header, body, _ = table(outcomes, said_of([(ctx, outcomes)]))
    finally:
        del DIAGNOSTICS._entries["n_inputs"]
    assert header == [
        "claim",
        "published",
        "recomputed",
        "interval",
        "finding",
        "P(finding)",
        "strength",
        "n",
        "evidence",
        "inputs",
    ]
    assert [r[7] for r in body] == [f"{o.result.n} models" for o in outcomes]

"""``python -m repro claims --source store|measure --store DIR``: the claim gate's sources as
options of the command, with the gate's meaning (``--source`` / ``--store`` of the pytest plugin,
repro.pytest_plugin; ``repro.claims.context.measured_context``)."""

from __future__ import annotations

import re

import pytest

from tests.claims.test_measured_source import measured, noisy, write_records

pytestmark = pytest.mark.claims


@pytest.fixture
def study():
    from repro.base.study import get_study

    return get_study("gavrikov2024")


@pytest.fixture
def population(published_claim_context) -> list[str]:
    return list(published_claim_context.analysis.population)


def test_claims_command_source_store_is_the_gates_source_store(
    tmp_path, study, population, data_dir, published_claim_context, run_cli
):
    """``python -m repro claims --source store --store S`` judges each claim on the context the
    gate's ``--source store`` builds (``measured_context``): the same verdicts, evidence and
    provenance; a claim the store holds nothing for is incomplete, and the command exits 1."""
    import json

    from repro.diagnostics.output import claims_document

    store = tmp_path / "store"
    write_records(store, noisy(published_claim_context, population))
    out = tmp_path / "c.json"
    res = run_cli(
        "claims",
        "--source",
        "store",
        "--store",
        store,
        "--study",
        "gavrikov2024",
        "--data-dir",
        data_dir,
        "--json",
        out,
        "--wide",  # every column: the inputs' provenance too
    )
    assert res.returncode == 1, (
        res.stdout + res.stderr
    )  # the claims reading nothing measured are incomplete
    doc = json.loads(out.read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    sb = by_id["shape_bias_vs_id_accuracy"]
    assert sb["evidence"] == {"kind": "mixed", "measured": 48, "total": 192}
    assert sb["verdict"] == "reproduced" and sb["phrase"] == "reproduced by measurement"
    assert by_id["low_frequency_bias_helps_pgd"]["verdict"] == "incomplete"
    ctx = measured(study, store, data_dir)
    from repro.claims.check import evaluate_all

    gate = {c["id"]: c for c in claims_document([(ctx, evaluate_all(ctx))])["claims"]}
    for cid, c in by_id.items():
        assert {k: c[k] for k in ("verdict", "evidence", "provenance", "measured")} == {
            k: gate[cid][k] for k in ("verdict", "evidence", "provenance", "measured")
        }, cid
    row = next(
        line for line in res.stdout.splitlines() if line.startswith("shape_bias_vs_id_accuracy")
    )
    # finding, P(finding) (a replication of the measured table), strength, evidence, inputs
    assert re.search(
        r"reproduced\s+[01]\.\d{2}\s+(robust|fragile|unexamined)\s+mixed \(48 of 192 "
        r"measured\)\s+measured 48, published 144",
        row,
    ), row
    assert "source: store" in res.stdout
    missing = run_cli(
        "claims", "--source", "store", "--store", tmp_path / "nowhere", "--data-dir", data_dir
    )
    assert missing.returncode == 2 and "no such measurement store" in missing.stderr

"""Claims on measured inputs: our stored measurements overlaid on the published table, each
input value labelled with where it came from, judged by the statistical tolerance, and never
judged on the published fallback when a value the run was to measure is failed or missing.

The stores here are real stores (``repro.store.files.Store``) holding records written the way
the runner writes them: the code under test reads them as it reads a real run's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from repro.claims.check import evaluate
from repro.claims.loader import load_claims
from repro.claims.verdict import INCOMPLETE, NOT_REPRODUCED, REPRODUCED
from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.claims

ROOT = Path(__file__).resolve().parents[2]
ID_COLUMNS = 3  # top1_acc/imagenet, -v2, -real: the ID category of the analysis definition


def write_records(
    store_dir: Path,
    values: dict[str, float | None],
    *,
    measurement: str = "shape_bias",
    column: str = "shape-bias",
    failed: dict[str, str] | None = None,
    version: str | None = None,
    provenance: dict | None = None,
) -> None:
    """Records as the runner stores them: ``values`` {model: value (None: undefined)}, each an ok
    record of the current version of ``measurement``; ``failed`` {model: error message}."""
    from repro.measurements.registry import current_versions
    from repro.store.files import Store
    from repro.store.record import STATUS_FAILED, STATUS_OK, ColumnValue, JobRecord

    store = Store(store_dir)
    ver = version or current_versions([measurement])[measurement]
    prov = {"dataset": "cue_conflict", "dataset_items": 1280, **(provenance or {})}
    for model, v in values.items():
        col = (
            ColumnValue(column, None, 0, 0, None, note="undefined")
            if v is None
            else ColumnValue(column, float(v), int(round(v * 1000)), 1000, (v - 0.03, v + 0.03))
        )
        store.write(
            JobRecord(model, measurement, ver, STATUS_OK, value=v, columns=[col], provenance=prov)
        )
    for model, message in (failed or {}).items():
        store.write(
            JobRecord(
                model,
                measurement,
                ver,
                STATUS_FAILED,
                provenance=prov,
                error={"type": "DataError", "message": message, "traceback": ""},
            )
        )


@pytest.fixture
def study():
    from repro.base.study import get_study

    return get_study("gavrikov2024")


@pytest.fixture
def population(published_claim_context) -> list[str]:
    return list(published_claim_context.analysis.population)


def measured(study, store, data_dir):
    from repro.claims.context import measured_context

    return measured_context(study, store, data_dir)


def shape_bias_claim():
    return load_claims().get("shape_bias_vs_id_accuracy")


def noisy(ctx, models, seed=0, half=0.008) -> dict[str, float]:
    """The published shape biases, each moved by up to ``half`` (uniform): measurement noise that
    stays inside the study's 0.01 implementation margin, so every value agrees with its own."""
    rng = np.random.default_rng(seed)
    return {m: ctx.table.value(m, "shape-bias") + float(rng.uniform(-half, half)) for m in models}


def test_measured_context_overlays_labels_and_counts_every_value(
    tmp_path, study, population, data_dir, published_claim_context
):
    values = noisy(published_claim_context, population)
    write_records(tmp_path, values)
    ctx = measured(study, tmp_path, data_dir)
    assert ctx.measured and ctx.table.source_of("shape-bias") == "store"
    assert ctx.table.source_of("top1_acc/imagenet") == "published"
    m = population[0]
    assert ctx.table.value(m, "shape-bias") == pytest.approx(values[m])
    assert {(m, r.status) for (m, _), r in ctx.agreement.items()} == {
        (m, "agrees") for m in population
    }
    outcome = evaluate(shape_bias_claim(), ctx)
    assert outcome.result.sources["shape-bias"] == "store"
    assert outcome.tolerance.policy == "correlation_interval"
    lo, hi = outcome.result.interval
    assert outcome.reproduced == (lo <= -0.76 <= hi and outcome.result.p < 0.05)
    assert outcome.reproduced  # small measurement noise keeps the published rho inside our interval
    # 48 shape-bias values from the store; the 3 ID columns of the 48 models stay published
    assert outcome.provenance.counts() == {"measured": 48, "published": ID_COLUMNS * 48}
    assert outcome.provenance.by_column()["shape-bias"] == {"measured": 48}
    assert outcome.provenance.by_column()["top1_acc/imagenet"] == {"published": 48}
    assert outcome.as_json()["provenance"] == {"measured": 48, "published": 144}


def test_measured_inputs_that_break_the_claim_are_not_reproduced(
    tmp_path, study, population, data_dir, published_claim_context
):
    rng = np.random.default_rng(1)
    shuffled = rng.permutation(
        [published_claim_context.table.value(m, "shape-bias") for m in population]
    )
    write_records(tmp_path, dict(zip(population, map(float, shuffled), strict=True)))
    outcome = evaluate(shape_bias_claim(), measured(study, tmp_path, data_dir))
    assert outcome.tolerance.policy == "correlation_interval" and outcome.verdict == NOT_REPRODUCED
    assert "OUTSIDE" in outcome.check.why and outcome.provenance.complete


def test_a_failed_job_makes_the_claim_incomplete_not_a_published_fallback(
    tmp_path, study, population, data_dir, published_claim_context
):
    """The issue's case: the jobs failed; the published shape bias must not stand in for them."""
    values = noisy(published_claim_context, population[1:])
    write_records(tmp_path, values, failed={population[0]: "weights download failed (offline)"})
    outcome = evaluate(shape_bias_claim(), measured(study, tmp_path, data_dir))
    assert outcome.verdict == INCOMPLETE and not outcome.reproduced and not outcome.as_expected
    assert outcome.provenance.counts() == {"measured": 47, "published": 144, "failed": 1}
    assert outcome.provenance.cells["shape-bias"][population[0]] == "failed"
    assert f"shape-bias of {population[0]}" in outcome.check.why
    assert "weights download failed (offline)" in outcome.check.why
    # the counts are shown in the claims table, in `claims --json` and in REPORT.md
    from repro.diagnostics.output import claims_document, format_table
    from repro.report import ReportContext
    from repro.report.sections import claims as claims_section

    ctx = measured(study, tmp_path, data_dir)
    row = next(
        line for line in format_table([outcome]).splitlines() if line.startswith(outcome.claim.id)
    )
    assert row.rstrip().endswith(
        "INCOMPLETE  mixed (47 of 192 measured)  measured 47, published 144, failed 1"
    )
    doc = claims_document([(ctx, [outcome])])
    assert doc["claims"][0]["provenance"] == {"measured": 47, "published": 144, "failed": 1}
    assert doc["claims"][0]["evidence"] == {"kind": "mixed", "measured": 47, "total": 192}
    report = claims_section.render(
        ReportContext(tmp_path / "REPORT.md", [(ctx, [outcome])], claims=ctx, outcomes=[outcome])
    )
    assert f"| `{outcome.claim.id}` |" in report
    assert (
        "| **INCOMPLETE** | - | mixed (47 of 192 measured) | measured 47, published 144, failed 1 |"
        in report
    )
    # and with every job failed, as with every download failing
    every = tmp_path / "all_failed"
    write_records(every, {}, failed={m: "offline" for m in population})
    outcome = evaluate(shape_bias_claim(), measured(study, every, data_dir))
    assert outcome.verdict == INCOMPLETE and outcome.provenance.counts()["failed"] == 48
    assert "48 input value(s) failed" in outcome.check.why and "+45 more" in outcome.check.why


@pytest.mark.parametrize("case", ["no record", "other version", "mini data", "undefined value"])
def test_a_missing_measurement_makes_the_claim_incomplete(
    case, tmp_path, study, population, data_dir, published_claim_context
):
    values: dict[str, float | None] = dict(noisy(published_claim_context, population))
    first = population[0]
    if case == "no record":
        del values[first]
    write_records(tmp_path, values)
    if case == "other version":
        write_records(tmp_path, {first: values[first]}, version="0+old")
    elif case == "mini data":
        write_records(tmp_path, {first: values[first]}, provenance={"dataset_mini": True})
    elif case == "undefined value":
        write_records(tmp_path, {first: None})
    outcome = evaluate(shape_bias_claim(), measured(study, tmp_path, data_dir))
    assert outcome.verdict == INCOMPLETE
    assert outcome.provenance.counts() == {"measured": 47, "published": 144, "missing": 1}
    assert outcome.provenance.cells["shape-bias"][first] == "missing"
    why = {
        "no record": "no record in the store",
        "other version": "stale (stored with version 0+old",
        "mini data": "not evidence (measured on generated mini data",
        "undefined value": "undefined in the record",
    }
    assert why[case] in outcome.check.why


def test_a_claim_none_of_whose_inputs_was_measured_is_incomplete(tmp_path, study, data_dir):
    """A store that holds other measurements only: the shape-bias claim checked nothing on ours."""
    write_records(
        tmp_path,
        {"tv_resnet50": 80.0},
        measurement="imagenet_sketch",
        column="top1_acc/imagenet-sketch",
    )
    ctx = measured(study, tmp_path, data_dir)
    outcome = evaluate(load_claims().get("shape_bias_yfcc_ssl_equals_baseline"), ctx)
    assert outcome.verdict == INCOMPLETE and outcome.provenance.counts() == {"published": 2}
    assert (
        "none of its inputs was measured in this run: shape_bias (dataset cue_conflict "
        "not configured"
    ) in outcome.check.why


def test_claims_without_measurable_inputs_stay_published_under_a_measured_source(
    tmp_path, study, data_dir
):
    """ImageNet-X claims read published factor tables that no measurement
    produces: judged on them."""
    from repro.base.study import get_study
    from repro.claims.context import measured_context

    write_records(tmp_path, {"tv_resnet50": 0.2})
    ctx = measured_context(get_study("imagenetx"), tmp_path, data_dir)
    outcome = evaluate(load_claims().get("imagenetx_failure_modes_concordant"), ctx)
    assert outcome.verdict == REPRODUCED and set(outcome.provenance.counts()) == {"published"}


def test_pytest_source_store_with_failed_jobs_fails_the_claim_tests(tmp_path, population, data_dir):
    """``pytest -k shape_bias_vs --source store`` on a store whose jobs all failed: the claim
    tests FAIL naming the failure (before: "4 passed" on the published fallback)."""
    write_records(tmp_path, {}, failed={m: "cannot download weights (offline)" for m in population})
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/claims/test_claims.py",
            "-k",
            "shape_bias_vs",
            "--source",
            "store",
            "--store",
            str(tmp_path),
            "--data-dir",
            str(data_dir),
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "ClaimNotChecked: shape_bias_vs_id_accuracy: incomplete" in out
    assert "cannot download weights (offline)" in out
    # test_claim and test_claim_finding, each failing closed; the regression snapshot reads the
    # published data and passes
    assert "2 failed" in out
    assert "test_claim_finding[shape_bias_vs_id_accuracy]" in out


def test_pytest_source_store_without_a_store_fails(tmp_path, data_dir):
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/claims/test_claims.py",
            "-k",
            "shape_bias_vs_id",
            "--source",
            "store",
            "--store",
            str(tmp_path / "nowhere"),
            "--data-dir",
            str(data_dir),
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "measurement store" in out and "does not exist" in out and "skipped" not in out


@pytest.mark.parametrize("mini", [True, False])
def test_store_overlay_of_a_mini_run_draws_the_mini_records_labelled_not_evidence(tmp_path, mini):
    """A mini ``reproduce`` overlays its own (mini) store, labelled as no evidence, its plan's
    models only (m3 is in the store, not in the run); a real run leaves mini records out (they are
    no evidence about the real datasets)."""
    from types import SimpleNamespace

    from repro.studies.gavrikov2024.figures import store_overlay

    store_dir = tmp_path / "store"
    write_records(store_dir, {"m1": 0.25, "m2": 0.4, "m3": 0.5}, provenance={"dataset_mini": True})
    gav = SimpleNamespace(name="gavrikov2024")
    ctx = SimpleNamespace(
        claims=SimpleNamespace(study=gav, population=["m1", "m2"]),
        plans=[
            SimpleNamespace(
                study=gav,
                store=store_dir,
                mini=mini,
                models=["m1", "m2"],
                measurements=["shape_bias"],
            )
        ],
    )
    overlays = store_overlay(ctx)
    if mini:
        assert [o.label for o in overlays] == ["measured here (mini run: NOT evidence)"]
        assert {m: row["shape-bias"] for m, row in overlays[0].rows.items()} == {
            "m1": 0.25,
            "m2": 0.4,
        }
    else:
        assert overlays == []


def test_a_claim_with_mini_inputs_is_mini_never_reproduced_or_not(
    tmp_path, study, data_dir, published_claim_context
):
    """The context of a mini run (the pipeline's: tiny models standing in for 3 study models): the
    shape-bias claims on their mini values are ``mini`` in the outcome, the table, the JSON and
    the report, whether their check passes (the published values) or fails (the claim with its
    sign turned: published +0.76)."""
    from dataclasses import replace

    from repro.claims.context import published_context
    from repro.claims.provenance import run_inputs
    from repro.claims.verdict import MINI
    from repro.diagnostics.output import claims_document, format_table
    from repro.report import ReportContext
    from repro.report.sections import claims as claims_section
    from repro.store.export import wide_table

    stand_ins = dict(study.stand_ins)
    values = {
        tiny: published_claim_context.table.value(model, "shape-bias")
        for tiny, model in stand_ins.items()
    }
    write_records(tmp_path, values, provenance={"dataset_mini": True})
    ctx = published_context(study, data_dir)
    overlay = {
        stand_ins[m]: row for m, row in wide_table(tmp_path, versions=None, allow_mini=True).items()
    }
    ctx.table = ctx.table.overlay(overlay, "mini")
    ctx.inputs = run_inputs(
        tmp_path, ["shape_bias"], list(stand_ins), mini=True, stand_ins=stand_ins
    )
    for case, claim in (
        ("passing", shape_bias_claim()),
        ("failing", replace(shape_bias_claim(), published=0.76)),
    ):
        outcomes = [
            evaluate(claim, ctx),
            evaluate(load_claims().get("shape_bias_yfcc_ssl_equals_baseline"), ctx),
        ]
        sb, ssl = outcomes
        assert sb.check.passed == (
            case == "passing"
        )  # the numbers alone would say reproduced / not
        assert sb.verdict == MINI and sb.evidence.kind == "mini" and not sb.as_expected, case
        assert sb.provenance.counts() == {"mini": 3, "published": 189}
        # tiny_random_a stands in for tv_resnet50, which the ssl claim reads next to ssl_resnet50
        assert ssl.verdict == MINI and ssl.provenance.counts() == {"mini": 1, "published": 1}
        table = format_table(outcomes)
        rows = [
            line
            for line in table.splitlines()
            if line.startswith(("shape_bias_vs", "shape_bias_yfcc"))
        ]
        assert len(rows) == 2 and all(" MINI " in r and "reproduced" not in r for r in rows), table
        assert "inputs from generated mini data (mini 3, published 189): not evidence" in table
        doc = claims_document([(ctx, outcomes)])
        assert [c["verdict"] for c in doc["claims"]] == ["mini", "mini"]
        report = claims_section.render(
            ReportContext(tmp_path / "REPORT.md", [(ctx, outcomes)], claims=ctx, outcomes=outcomes)
        )
        claim_rows = [line for line in report.splitlines() if line.startswith("| `shape_bias")]
        assert len(claim_rows) == 2 and all(
            "**MINI** | - | mini |" in r and "reproduced" not in r for r in claim_rows
        )

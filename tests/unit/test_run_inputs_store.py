"""What a run on our measurements was to measure, read from a store (``repro.claims.provenance.
run_inputs``): each stored job's values labelled measured, imported, mini, failed or missing with
why, the models and measurements of the run only, a mini run's stand-ins, and every zoo model
when none is named."""

from __future__ import annotations

import dataclasses

import pytest

from repro.analysis.result import StatisticResult
from repro.claims.provenance import (
    FAILED,
    IMPORTED,
    MEASURED,
    MINI,
    MISSING,
    PUBLISHED,
    RunInputs,
    claim_provenance,
    run_inputs,
)
from repro.measurements.registry import current_versions
from repro.store.files import Store
from repro.store.record import JobRecord
from tests.small_store import shape_record

pytestmark = pytest.mark.unit

VERSION = current_versions(["shape_bias"])["shape_bias"]
IMPORT = {"imported": {"file": "theirs.csv", "sha256": "0" * 64, "row": 2}}


def _store(tmp_path):
    store = Store(tmp_path / "store")
    store.write(shape_record("ok", 600, 400, dataset_mini=False))
    store.write(shape_record("theirs", 500, 500, **IMPORT))
    store.write(shape_record("tiny", 300, 700, dataset_mini=True))
    store.write(shape_record("other", 100, 900))  # a model the run does not name
    store.write(dataclasses.replace(shape_record("old", 1, 1), version="0+old"))
    store.write(
        JobRecord(
            "broken", "shape_bias", VERSION, "failed", error={"type": "OSError", "message": "disk"}
        )
    )
    empty = dataclasses.replace(shape_record("empty", 1, 1), columns=[])
    store.write(empty)
    return store


def test_a_run_labels_its_models_values_from_the_store(tmp_path):
    store = _store(tmp_path)
    names = ["ok", "theirs", "tiny", "old", "broken", "empty", "never"]
    inputs = run_inputs(store.root, ["shape_bias", "shape_bias"], names, not_run={"x": "why"})
    assert not inputs.mini and inputs.models == frozenset(names)
    assert inputs.columns == {"shape-bias": "shape_bias"} and inputs.not_run == {"x": "why"}
    assert dict(inputs.cells) == {
        ("ok", "shape-bias"): (MEASURED, ""),
        ("theirs", "shape-bias"): (IMPORTED, ""),
        ("tiny", "shape-bias"): (
            MISSING,
            "tiny x shape_bias: not evidence (measured on generated mini data, not evidence)",
        ),
        ("old", "shape-bias"): (
            MISSING,
            f"old x shape_bias: stale (stored with version 0+old, current {VERSION})",
        ),
        ("broken", "shape-bias"): (FAILED, "broken x shape_bias failed: OSError: disk"),
        ("empty", "shape-bias"): (
            MISSING,
            "empty x shape_bias: shape-bias undefined in the record",
        ),
    }
    assert inputs.label("never", "shape-bias") == (
        MISSING,
        "never x shape_bias: no record in the store",
    )
    assert inputs.label("other", "shape-bias") == (PUBLISHED, "")  # not a model of the run


def test_a_run_of_other_measurements_labels_nothing(tmp_path):
    store = _store(tmp_path)
    inputs = run_inputs(store.root, ["imagenet"], ["ok"], versions={"imagenet": "1"})
    assert dict(inputs.cells) == {} and "shape-bias" not in inputs.columns
    assert inputs.label("ok", "shape-bias") == (PUBLISHED, "")


def test_a_mini_run_labels_its_stand_ins_values_mini_under_the_study_names(tmp_path):
    store = _store(tmp_path)
    inputs = run_inputs(
        store.root,
        ["shape_bias"],
        ["tiny", "theirs", "ok"],
        mini=True,
        stand_ins={"tiny": "tv_resnet50", "theirs": "ssl_resnet50"},
    )
    assert inputs.mini and inputs.models == frozenset({"tv_resnet50", "ssl_resnet50"})
    assert dict(inputs.cells) == {
        ("tv_resnet50", "shape-bias"): (MINI, ""),
        ("ssl_resnet50", "shape-bias"): (MINI, ""),  # imported, but a mini run's value is mini
    }
    # stand-ins are a mini run's only: a real run keeps the store's names
    real = run_inputs(store.root, ["shape_bias"], ["tiny"], stand_ins={"tiny": "tv_resnet50"})
    assert real.models == frozenset({"tiny"}) and ("tiny", "shape-bias") in real.cells


def test_every_zoo_model_is_a_model_of_a_run_that_names_none(tmp_path):
    from repro.zoo import specs

    inputs = run_inputs(_store(tmp_path).root, ["shape_bias"], None)
    assert inputs.models == frozenset(s.name for s in specs())
    # every stored job is read: the store's own names are labelled too
    assert inputs.cells[("ok", "shape-bias")] == (MEASURED, "")


def test_a_problem_names_three_values_and_counts_the_rest():
    def problems(k):
        models = [f"m{i}" for i in range(k)]
        cells = {(m, "shape-bias"): (FAILED, "boom") for m in models}
        inputs = RunInputs(False, frozenset(models), {"shape-bias": "shape_bias"}, cells)
        result = StatisticResult(
            0.1, per_model={m: {} for m in models}, sources={"shape-bias": "x"}
        )
        return claim_provenance(result, inputs).problems

    assert problems(3) == (
        "3 input value(s) failed (shape-bias of m0: boom; shape-bias of m1: boom; shape-bias of "
        "m2: boom)",
    )
    assert problems(4) == (
        "4 input value(s) failed (shape-bias of m0: boom; shape-bias of m1: boom; shape-bias of "
        "m2: boom; +1 more)",
    )


def test_measurements_not_run_for_one_reason_are_named_together():
    result = StatisticResult(
        0.2,
        per_model={"tv_resnet50": {}},
        sources={"shape-bias": "published", "top1_acc/imagenet": "published"},
    )
    inputs = RunInputs(False, frozenset({"tv_resnet50"}), {}, {})
    assert claim_provenance(result, inputs).problems == (
        "none of its inputs was measured in this run: shape_bias, imagenet (not measured in "
        "this run)",
    )


def test_the_versions_passed_decide_which_records_are_current(tmp_path):
    inputs = run_inputs(
        _store(tmp_path).root, ["shape_bias"], ["ok", "old"], versions={"shape_bias": "0+old"}
    )
    assert inputs.cells[("old", "shape-bias")] == (MEASURED, "")
    assert inputs.cells[("ok", "shape-bias")] == (
        MISSING,
        f"ok x shape_bias: stale (stored with version {VERSION}, current 0+old)",
    )

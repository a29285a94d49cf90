"""A run that measures a study model and a model of your own (``repro.runner.pipeline.
claims_context``): the study model's value replaces its published one in the claims' table, your
model never enters that table nor the run's inputs, so it can neither move a claim nor make one
incomplete; with no study model at all the context is the published one (a re-analysis)."""

from __future__ import annotations

import pytest

from repro.base.study import get_study
from repro.runner.pipeline import MeasurePlan, claims_context
from repro.store.files import Store
from tests.small_store import shape_record

pytestmark = pytest.mark.claims

PROV = {
    "dataset_fingerprint": "f",
    "dataset_items": 1280,
    "dataset_mini": False,
    "dataset_partial": False,
}


def _plan(store, models):
    return MeasurePlan(get_study("gavrikov2024"), False, models, ["shape_bias"], store, "cpu", {})


def test_only_the_study_models_of_a_run_enter_the_claims(tmp_path, data_dir):
    store = Store(tmp_path / "store")
    store.write(shape_record("tv_resnet50", 300, 500, **PROV))  # 0.375, published 0.215
    store.write(shape_record("my_model", 600, 200, **PROV))
    ctx = claims_context(_plan(store.root, ["tv_resnet50", "my_model"]), data_dir)
    assert ctx.table.values["tv_resnet50"]["shape-bias"] == pytest.approx(300 / 800)
    assert "my_model" not in ctx.table.models
    assert ctx.inputs.models == frozenset({"tv_resnet50"})
    assert {m for m, _ in ctx.inputs.cells} == {"tv_resnet50"}


def test_a_run_of_your_model_alone_is_the_published_context(tmp_path, data_dir):
    store = Store(tmp_path / "store")
    store.write(shape_record("my_model", 600, 200, **PROV))
    ctx = claims_context(_plan(store.root, ["my_model"]), data_dir)
    assert ctx.source != "measure" and ctx.inputs is None
    assert "my_model" not in ctx.table.models
    published = float(ctx.table.values["tv_resnet50"]["shape-bias"])
    assert 0.2 < published < 0.23  # the published table's value, untouched

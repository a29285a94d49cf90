"""The context of a claim on our measurements (``repro.claims.context.measured_context``), built on
the published Gavrikov & Keuper table and a store written here: current records overlaid and
labelled with the source, a stale one neither overlaid nor compared, the agreement of each current
value with the published one, and the run's inputs (every zoo model; the measurements whose
dataset is configured or that the store holds; why each other one is not run). The data
directory is the one passed (the default points nowhere here), and an analysis definition passed
replaces the study's."""

from __future__ import annotations

import dataclasses

import pytest

from repro.claims.provenance import FAILED, MEASURED, MISSING
from repro.measurements.registry import current_versions, get
from repro.store.files import Store
from repro.store.record import JobRecord
from tests.small_store import shape_record

pytestmark = pytest.mark.claims

SHAPE = current_versions(["shape_bias"])["shape_bias"]


def _store(tmp_path):
    store = Store(tmp_path / "store")
    store.write(shape_record("tv_resnet50", 540, 660))  # 0.45
    store.write(dataclasses.replace(shape_record("tv2_resnet50", 100, 100), version="0+old"))
    store.write(
        JobRecord(
            "ssl_resnet50",
            "imagenet",
            current_versions(["imagenet"])["imagenet"],
            "failed",
            error={"type": "OSError", "message": "no such file"},
        )
    )
    return store


@pytest.fixture
def measured(tmp_path, data_dir, monkeypatch):
    """``measured_context(study, store, data_dir, **kw)`` with only shape_bias's dataset
    configured, and the default data directory pointing nowhere."""
    from repro.base.study import get_study
    from repro.claims import context

    def configured(names):
        return ["shape_bias"], {n: get(n).dataset for n in names if n != "shape_bias"}

    monkeypatch.setattr(context, "split_configured", configured)
    link = tmp_path / "data"
    link.symlink_to(data_dir)
    monkeypatch.setenv("REPRO_DATA_DIR", str(tmp_path / "nowhere"))
    store = _store(tmp_path)

    def build(**kw):
        return context.measured_context(get_study("gavrikov2024"), store.root, link, **kw), link

    return build


def test_current_records_are_overlaid_and_labelled_stale_ones_are_not(
    measured, published_claim_context
):
    ctx, link = measured()
    published = published_claim_context.table
    assert ctx.source == "store" and ctx.data_dir == link
    assert ctx.table.value("tv_resnet50", "shape-bias") == pytest.approx(0.45)
    assert ctx.table.source_of("shape-bias") == "store"
    assert ctx.table.source_of("top1_acc/imagenet") == "published"  # the failed job: nothing
    assert ctx.table.value("tv2_resnet50", "shape-bias") == published.value(
        "tv2_resnet50", "shape-bias"
    )
    assert ctx.table.value("ssl_resnet50", "top1_acc/imagenet") == published.value(
        "ssl_resnet50", "top1_acc/imagenet"
    )
    other, _ = measured(source="measure")
    assert other.source == "measure" and other.table.source_of("shape-bias") == "measure"


def test_the_agreement_compares_the_current_values_only(measured, published_claim_context):
    ctx, _ = measured()
    keys = set(ctx.agreement)
    assert keys == {("tv_resnet50", "shape-bias")}
    row = ctx.agreement[("tv_resnet50", "shape-bias")]
    assert row.ours == pytest.approx(0.45)
    assert row.published == published_claim_context.table.value("tv_resnet50", "shape-bias")


def test_the_run_is_every_zoo_model_and_the_configured_or_stored_measurements(measured):
    from repro.measurements.registry import names
    from repro.zoo import specs

    ctx, _ = measured()
    inputs = ctx.inputs
    assert inputs.models == frozenset(s.name for s in specs()) and not inputs.mini
    run = set(inputs.columns.values())
    # shape_bias: configured; imagenet: not configured, but the store holds a record of it
    assert run == {"shape_bias", "imagenet"}
    assert inputs.label("tv_resnet50", "shape-bias") == (MEASURED, "")
    assert inputs.label("tv2_resnet50", "shape-bias") == (
        MISSING,
        f"tv2_resnet50 x shape_bias: stale (stored with version 0+old, current {SHAPE})",
    )
    assert inputs.label("ssl_resnet50", "top1_acc/imagenet") == (
        FAILED,
        "ssl_resnet50 x imagenet failed: OSError: no such file",
    )
    assert set(inputs.not_run) == set(names()) - {"shape_bias", "imagenet"}
    assert inputs.not_run["imagenet_a"] == (
        f"dataset {get('imagenet_a').dataset} not configured, no record in the store"
    )


def test_an_analysis_definition_passed_replaces_the_studys(measured):
    from repro.analysis.spec import load_spec

    spec = dataclasses.replace(load_spec("gavrikov2024"), alpha=0.01, name="mine")
    ctx, _ = measured(analysis=spec)
    assert ctx.spec is spec and ctx.analysis.spec.alpha == 0.01


def test_published_contexts_take_an_analysis_only_where_a_study_has_one(tmp_path, data_dir):
    from repro.claims.context import published_context, published_contexts

    path = tmp_path / "mine.toml"
    path.write_text('extends = "gavrikov2024"\nalpha = 0.01\n')
    gav, inx = published_contexts(["gavrikov2024", "imagenetx"], data_dir, str(path))
    assert gav.source == inx.source == "published" and gav.data_dir == data_dir
    assert gav.spec.alpha == 0.01 and gav.spec.origin == str(path)
    assert inx.spec is None  # ImageNet-X has no analysis definition: none is forced on it
    own = published_contexts(["gavrikov2024"], data_dir)[0]
    assert own.spec.alpha == 0.05 and own.spec.origin.endswith("gavrikov2024/analysis.toml")
    single = published_context(gav.study, data_dir, path)
    assert single.spec.alpha == 0.01 and not single.measured

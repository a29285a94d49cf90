"""A claim's context (``repro.claims.context.ClaimContext``): leaving models out (of the population
and every group with an analysis definition, of the table without one) keeps everything else the
context holds, drops the bootstrap only when asked, and adds up what was left out; a study without
an analysis definition says so whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.analysis.spec import AnalysisSpec, Group, Selector
from repro.base.errors import ConfigError
from repro.base.study import Study
from repro.base.table import ModelTable
from repro.claims.context import ClaimContext
from repro.claims.provenance import RunInputs

pytestmark = pytest.mark.unit

TABLE = ModelTable(
    {m: {"x": float(i)} for i, m in enumerate("abcd")}, origin="t.csv", sources={"x": "store"}
)
CATS = {"all": ["a", "b", "c", "d"]}
SPEC = AnalysisSpec(
    name="t",
    alpha=0.05,
    population=Selector(model_categories="all", exclude_models=("d",)),
    groups={"g": Group("g", "G", Selector(models=("a", "b", "c"), exclude_models=("b",)))},
    categories={},
    biases={},
    benchmarks={},
    resamples=2500,
    seed=3,
    confidence=0.9,
    origin="def.toml",
)


def _study(tmp_path) -> Study:
    return Study(
        name="s", title="S", citation="-", folder=Path(tmp_path), claims=Path(tmp_path) / "c.toml"
    )


def test_leaving_models_out_keeps_the_rest_of_the_context(tmp_path):
    inputs = RunInputs(False, frozenset({"a"}), {"x": "m"})
    agreement = {("a", "x"): object()}
    study = _study(tmp_path)
    ctx = ClaimContext(study, tmp_path, TABLE, CATS, "store", SPEC, inputs=inputs)
    ctx.agreement = agreement
    ctx.cache["k"] = 1
    out = ctx.without_models(["b", "b", "a"])
    assert out.study is study and out.data_dir == tmp_path and out.source == "store"
    assert out.inputs is inputs and out.agreement is agreement and out.table is TABLE
    assert out.model_categories is CATS and out.cache == {}  # nothing cached carries over
    assert out.intervals is True and out.spec.resamples == 2500  # the bootstrap kept
    assert out.spec.population.exclude_models == ("d", "b", "a")  # added once each, in order
    assert out.spec.groups["g"].selector.exclude_models == ("b", "a")
    assert out.spec.groups["g"].selector.models == ("a", "b", "c")
    assert out.left_out == ("b", "a") and out.population == ["c"]
    assert (out.spec.seed, out.spec.confidence, out.spec.alpha) == (3, 0.9, 0.05)
    fast = out.without_models(["c"], intervals=False)
    assert fast.intervals is False and fast.spec.resamples == 0
    assert fast.left_out == ("b", "a", "c") and fast.population == []
    assert ctx.spec is SPEC and ctx.left_out == ()  # the context itself is unchanged


def test_without_an_analysis_definition_models_leave_the_table(tmp_path):
    ctx = ClaimContext(_study(tmp_path), tmp_path, TABLE, CATS)
    assert ctx.population == ["a", "b", "c", "d"] and ctx.measured
    out = ctx.without_models(["c"], intervals=False)
    assert out.table.models == ["a", "b", "d"] and out.spec is None and out.intervals is False
    assert out.population == ["a", "b", "d"] and out.left_out == ("c",)
    assert TABLE.models == ["a", "b", "c", "d"]
    with pytest.raises(ConfigError) as e:
        ctx.analysis  # noqa: B018
    assert str(e.value) == (
        f"{ctx.study.origin}: study 's' has no analysis definition (field `analysis`), which "
        "this statistic needs"
    )
    published = ClaimContext(_study(tmp_path), tmp_path, ModelTable({"a": {"x": 1.0}}), CATS)
    assert not published.measured


def test_the_agreement_reads_the_store_and_the_contexts_data_directory(tmp_path):
    """A study whose family declares a ``paired`` hook: the hook gets the context's data
    directory, and only the current record is compared."""
    from repro.claims.context import attach_agreement
    from repro.store.files import Store
    from repro.store.record import ColumnValue, JobRecord
    from tests import claim_fixtures

    (tmp_path / "agreement.toml").write_text(
        '[[family]]\nname = "top-1"\ncolumns = ["top1/*"]\nmargin = 0.1\nstimuli = "fixed"\n'
        'reason = "r"\nscale = 100.0\npaired = "tests.claim_fixtures:paired_hook"\n'
    )
    study = Study(
        name="s",
        title="S",
        citation="-",
        folder=tmp_path,
        claims=tmp_path / "c.toml",
        agreement=tmp_path / "agreement.toml",
    )
    store = Store(tmp_path / "store")
    for model, version in (("m1", "1"), ("m2", "0+old")):
        col = ColumnValue.from_count("top1/in", 761, 1000)
        store.write(JobRecord(model, "imagenet", version, "ok", columns=[col]))
    table = ModelTable({"m1": {"top1/in": 76.0}, "m2": {"top1/in": 75.0}})
    ctx = ClaimContext(study, tmp_path / "data", table, {})
    claim_fixtures.PAIRED_CALLS.clear()
    attach_agreement(ctx, store.root, {"imagenet": "1"})
    assert claim_fixtures.PAIRED_CALLS == [tmp_path / "data"]
    assert set(ctx.agreement) == {("m1", "top1/in")}
    assert ctx.agreement[("m1", "top1/in")].ours == pytest.approx(76.1)

"""Claims on measured inputs: our stored measurements overlaid on the published table, each
overlaid column labelled with its source, and judged by the statistical tolerance."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from repro.claims.check import evaluate
from repro.claims.loader import load_claims

pytestmark = pytest.mark.claims


@pytest.fixture
def fake_store(monkeypatch, published_claim_context):
    """A stand-in for repro.store.export returning measured shape bias."""
    ctx = published_claim_context
    rng = np.random.default_rng(0)
    measured = {m: {"shape-bias": ctx.table.value(m, "shape-bias") + float(rng.normal(0, 0.005))}
                for m in ctx.analysis.population}
    module = types.ModuleType("repro.store.export")
    module.wide_table = lambda store_dir, **_: measured  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "repro.store.export", module)
    return measured


def test_measured_context_overlays_and_labels_columns(tmp_path, fake_store, data_dir):
    from repro.base.study import get_study
    from repro.claims.context import measured_context

    ctx = measured_context(get_study("gavrikov2024"), tmp_path, data_dir)
    assert ctx.measured and ctx.table.source_of("shape-bias") == "store"
    assert ctx.table.source_of("top1_acc/imagenet") == "published"
    m = next(iter(fake_store))
    assert ctx.table.value(m, "shape-bias") == fake_store[m]["shape-bias"]
    outcome = evaluate(load_claims().get("shape_bias_vs_id_accuracy"), ctx)
    assert outcome.result.sources["shape-bias"] == "store"
    assert outcome.tolerance.policy == "correlation_interval"
    lo, hi = outcome.result.interval
    assert outcome.reproduced == (lo <= -0.76 <= hi and outcome.result.p < 0.05)
    assert outcome.reproduced  # small measurement noise keeps the published rho inside our interval


def test_measured_inputs_that_break_the_claim_are_not_reproduced(tmp_path, monkeypatch, published_claim_context, data_dir):
    from repro.base.study import get_study
    from repro.claims.context import measured_context

    ctx0 = published_claim_context
    rng = np.random.default_rng(1)
    shuffled = rng.permutation([ctx0.table.value(m, "shape-bias") for m in ctx0.analysis.population])
    module = types.ModuleType("repro.store.export")
    module.wide_table = lambda store_dir, **_: {  # type: ignore[attr-defined]
        m: {"shape-bias": float(v)} for m, v in zip(ctx0.analysis.population, shuffled, strict=True)}
    monkeypatch.setitem(sys.modules, "repro.store.export", module)
    outcome = evaluate(load_claims().get("shape_bias_vs_id_accuracy"), measured_context(get_study("gavrikov2024"), tmp_path, data_dir))
    assert outcome.tolerance.policy == "correlation_interval" and not outcome.reproduced
    assert "OUTSIDE" in outcome.check.why

"""A claim's replication is kept in the user cache under the digest of its inputs
(``repro.diagnostics.replication.replication_inputs``): read back it is the replication computed,
field
by field and redraw by redraw; a changed input (a table value, the count model's seed) is computed
anew; a corrupt entry is recomputed, never trusted; ``REPRO_RESULT_CACHE=off`` always computes.
"""

from __future__ import annotations

import copy
from dataclasses import fields, replace

import numpy as np
import pytest

import repro.diagnostics.replication as rep_mod
from repro.claims.check import evaluate_all
from repro.claims.context import published_contexts
from repro.diagnostics.replication import count_model, replication

pytestmark = pytest.mark.claims

CLAIM = "low_frequency_bias_helps_pgd"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("REPRO_RESULT_CACHE", raising=False)
    return tmp_path / "results"


@pytest.fixture
def computed(monkeypatch):
    """Counts the replications actually computed (not read from the cache)."""
    calls: list[str] = []
    real = rep_mod._replication
    monkeypatch.setattr(
        rep_mod, "_replication", lambda o, c, g: calls.append(o.claim.id) or real(o, c, g)
    )
    return calls


def fresh(data_dir, study="gavrikov2024"):
    (ctx,) = published_contexts([study], data_dir)
    return ctx, {o.claim.id: o for o in evaluate_all(ctx)}


def same(a, b):
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "values":
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y, f.name


def test_read_back_is_what_was_computed(cache, computed, data_dir):
    ctx, outcomes = fresh(data_dir)
    first = replication(outcomes[CLAIM], ctx)
    assert computed == [CLAIM] and len(list(cache.glob("replication-*.json"))) == 1
    ctx2, outcomes2 = fresh(data_dir)
    again = replication(outcomes2[CLAIM], ctx2)
    assert computed == [CLAIM]  # read, not computed
    assert first.p_verdict is not None and first.values is not None and first.values.size == 1000
    same(first, again)


def test_a_changed_input_is_computed_anew(cache, computed, data_dir):
    ctx, outcomes = fresh(data_dir)
    base = replication(outcomes[CLAIM], ctx)
    # one value of one model moved by 0.001: another table, another digest. On a copy: the
    # published table is cached per process (repro.published.table.load_table) and shared by
    # every context of it; moving a value in place moved it for every later test of the worker
    # (it once turned REPORT.md's P(verdict) 0.001 into 0.002 in test_report_md)
    ctx, _ = fresh(data_dir)
    table = copy.deepcopy(ctx.table)
    model = table.models[0]
    table.values[model]["top1_acc/imagenet"] += 0.001
    ctx2 = replace(ctx, table=table, cache={})
    outcomes2 = {o.claim.id: o for o in evaluate_all(ctx2)}
    replication(outcomes2[CLAIM], ctx2)
    assert fresh(data_dir)[0].table.values[model]["top1_acc/imagenet"] == pytest.approx(
        table.values[model]["top1_acc/imagenet"] - 0.001, abs=1e-12
    )  # the shared table is as published
    # another seed of the same count model file
    ctx3, outcomes3 = fresh(data_dir)
    ctx3.cache["replication.counts"] = replace(count_model(ctx3), seed=1)
    other = replication(outcomes3[CLAIM], ctx3)
    assert computed == [CLAIM] * 3 and len(list(cache.glob("replication-*.json"))) == 3
    assert other.seed == 1 and not np.array_equal(other.values, base.values)


def test_a_corrupt_entry_is_recomputed(cache, computed, data_dir):
    ctx, outcomes = fresh(data_dir)
    first = replication(outcomes[CLAIM], ctx)
    (entry,) = cache.glob("replication-*.json")
    entry.write_text(entry.read_text()[:40])
    ctx2, outcomes2 = fresh(data_dir)
    again = replication(outcomes2[CLAIM], ctx2)
    assert computed == [CLAIM, CLAIM]
    same(first, again)


def test_off_computes_every_time(cache, computed, data_dir, monkeypatch):
    monkeypatch.setenv("REPRO_RESULT_CACHE", "off")
    for _ in range(2):
        ctx, outcomes = fresh(data_dir)
        replication(outcomes[CLAIM], ctx)
    assert computed == [CLAIM, CLAIM] and not cache.exists()


def test_other_libraries_are_another_result(cache, computed, data_dir, monkeypatch):
    """The numerical environment is part of the key (repro.base.numerics): a replication computed
    with another NumPy or SciPy, or on another architecture, is not read back here."""
    ctx, outcomes = fresh(data_dir)
    replication(outcomes[CLAIM], ctx)
    import repro.base.numerics

    monkeypatch.setattr(repro.base.numerics, "numerics", lambda: "numpy 0.0; scipy 0.0; aarch64")
    ctx2, outcomes2 = fresh(data_dir)
    replication(outcomes2[CLAIM], ctx2)
    assert computed == [CLAIM, CLAIM] and len(list(cache.glob("replication-*.json"))) == 2


def test_kernel_family_is_not_part_of_the_key(cache, computed, data_dir, monkeypatch):
    """The kernel family is not in the key: its rounding stays below every compared digit
    (docs/testing.md, "Kernels and CPUs"), so a result cached under one is read under another."""
    ctx, outcomes = fresh(data_dir)
    replication(outcomes[CLAIM], ctx)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Sandybridge")  # as another process's environment
    ctx2, outcomes2 = fresh(data_dir)
    replication(outcomes2[CLAIM], ctx2)
    assert computed == [CLAIM] and len(list(cache.glob("replication-*.json"))) == 1

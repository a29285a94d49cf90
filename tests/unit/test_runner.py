"""Unit tests of the runner with fake models, sources and probes (tests/fakes.py):
skip on rerun, failures recorded without stopping the sweep, retry on request, re-measure on a
version change, exclusive jobs between workers, the submitit path, and the summarizers'
published variants (Q1-Q3)."""

from __future__ import annotations

import os

import pytest

from repro.base.results import ConditionCount, ProbeResult
from repro.measurements import columns
from repro.runner.jobs import Job, jobs_for, run_sweep
from repro.store.files import Store
from tests import fakes

pytestmark = pytest.mark.unit

MODELS = ["tiny_a", "tiny_b"]
MEAS = ["fake_a", "fake_b"]


@pytest.fixture
def env():
    return fakes.environment()


def _sweep(store, env, **kw):
    return run_sweep(jobs_for(MODELS, MEAS), store, env=env, progress=False, **kw)


def test_jobs_are_ordered_by_model_and_deduplicated():
    assert jobs_for(["a", "b", "a"], ["x", "y"]) == [
        Job("a", "x"),
        Job("a", "y"),
        Job("b", "x"),
        Job("b", "y"),
    ]


def test_sweep_measures_then_skips_finished_jobs(tmp_path, env, torch_threads):
    store = Store(tmp_path)
    first = _sweep(store, env)
    assert len(first.ran) == 4 and not first.failed and not first.skipped
    rec = store.read("tiny_a", "fake_a")
    assert rec.ok and rec.version == "1+1" and rec.n_records == fakes.N_ITEMS
    assert rec.conditions[0]["n"] == fakes.N_ITEMS and 0 <= rec.conditions[0]["k"] <= fakes.N_ITEMS
    prov = rec.provenance
    assert (
        prov["dataset"] == "data_a"
        and prov["seed"] == 0
        and prov["device"] == "cpu"
        and prov["torch"]
    )
    assert len(prov["dataset_fingerprint"]) == 16 and prov["measurement_version"] == "1+1"
    assert prov["repro_version"] and prov["finished_utc"].endswith("Z") and prov["duration_s"] >= 0
    mtimes = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.json")}
    second = _sweep(store, env)
    assert not second.ran and len(second.skipped) == 4
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*.json")} == mtimes


def test_same_inputs_give_identical_values_and_items(tmp_path, env, torch_threads):
    a, b = Store(tmp_path / "a"), Store(tmp_path / "b")
    _sweep(a, env)
    _sweep(b, env)
    for ra, rb in zip(a, b, strict=True):
        assert (ra.model, ra.measurement, ra.conditions, ra.columns) == (
            rb.model,
            rb.measurement,
            rb.conditions,
            rb.columns,
        )
        assert ra.records_sha256 == rb.records_sha256


def test_failures_are_recorded_and_the_sweep_goes_on(tmp_path, env, torch_threads, monkeypatch):
    monkeypatch.setenv("FAKE_FAIL_MODELS", "tiny_a")
    monkeypatch.setenv("FAKE_FAIL_MEASUREMENTS", "data_b")
    store = Store(tmp_path)
    s = _sweep(store, env)
    assert len(s.ran) == 4
    assert s.failed == [Job("tiny_a", "fake_a"), Job("tiny_a", "fake_b"), Job("tiny_b", "fake_b")]
    rec = store.read("tiny_a", "fake_a")
    assert (
        rec.status == "failed"
        and rec.error["type"] == "RuntimeError"
        and "cannot load tiny_a" in rec.error["message"]
    )
    assert "Traceback" in rec.error["traceback"]
    assert store.read("tiny_b", "fake_a").ok
    # failed jobs are kept (not retried) by default ...
    monkeypatch.delenv("FAKE_FAIL_MODELS")
    monkeypatch.delenv("FAKE_FAIL_MEASUREMENTS")
    again = _sweep(store, env)
    assert not again.ran and len(again.skipped) == 4
    # ... and retried on request
    retry = _sweep(store, env, retry_failed=True)
    assert sorted(map(str, retry.ran)) == sorted(map(str, s.failed)) and not retry.failed
    assert all(r.ok for r in store)


def test_a_version_change_remeasures(tmp_path, env, torch_threads, monkeypatch):
    store = Store(tmp_path)
    _sweep(store, env)
    monkeypatch.setattr(fakes, "VERSION", "2")
    s = _sweep(store, env)
    assert len(s.remeasured) == 4 and all(r.version == "2+1" for r in store)


def test_a_job_held_by_another_worker_is_not_run(tmp_path, env, torch_threads):
    store = Store(tmp_path)
    lock = store.lock("tiny_b", "fake_a")
    assert lock.acquire()
    try:
        s = _sweep(store, env)
    finally:
        lock.release()
    assert s.busy == [Job("tiny_b", "fake_a")] and len(s.ran) == 3
    assert store.read("tiny_b", "fake_a") is None


def test_workers_start_at_different_models(tmp_path, env):
    from repro.runner.jobs import _rotate

    jobs = jobs_for(["a", "b", "c", "d"], ["x"])
    assert [j.model for j in _rotate(jobs, 0, 2)] == ["a", "b", "c", "d"]
    assert [j.model for j in _rotate(jobs, 1, 2)] == ["c", "d", "a", "b"]


def test_ensure_measured_runs_only_what_is_missing(tmp_path, env, torch_threads):
    from repro.runner.ensure import ensure_measured

    store = Store(tmp_path)
    run_sweep([Job("tiny_a", "fake_a")], store, env=env, progress=False)
    s = ensure_measured(MODELS, MEAS, tmp_path, device="cpu", env=env)
    assert len(s.ran) == 3 and s.skipped == [Job("tiny_a", "fake_a")]
    from repro.store.export import wide_table

    wide = wide_table(
        tmp_path, versions={"fake_a": "1+1", "fake_b": "1+1"}
    )  # fakes are not in the registry
    assert set(wide) == set(MODELS) and set(wide["tiny_a"]) == {"top1_acc/imagenet"}


# summarizers (published variants) ------------------------------------------------------------


def _ctx():
    return columns.SummaryContext("x", 0)


def test_pgd_published_variant_pads_the_denominator_to_full_batches():
    # 50,000 images, 0 robust: published floor 48/50,048 (METHODS Q2)
    res = ProbeResult("pgd", "1", 0, [ConditionCount("all", 0, 50000)])
    std, pub = columns.pgd_low(res, _ctx())
    assert std.value == 0.0 and std.n == 50000
    assert (pub.k, pub.n, pub.variant) == (48, 50048, "published")
    assert pub.value == pytest.approx(100 * 48 / 50048)


def test_imagenet_c_published_is_the_19_corruption_mean():
    from repro.scoring.imagenet_c import IMAGENET_C_19, IMAGENET_C_EXTRA

    conds = [
        ConditionCount(f"{c}/{s}", 10 * s if c in IMAGENET_C_EXTRA else 50, 100)
        for c in IMAGENET_C_19
        for s in range(1, 6)
    ]
    out = columns.imagenet_c(ProbeResult("c", "1", 0, conds), _ctx())
    head = {c.variant: c for c in out if c.column == "top1_acc/imagenet-c"}
    assert head["standard"].value == pytest.approx(50.0) and head["standard"].n == 7500
    # extras average 30 %: (15 * 50 + 4 * 30) / 19
    assert (
        head["published"].value == pytest.approx((15 * 50 + 4 * 30) / 19)
        and head["published"].n == 9500
    )
    lo, hi = head["standard"].interval  # 75 independent cells of p = 0.5, n = 100
    assert hi - lo == pytest.approx(2 * 1.959964 * 100 * (0.25 / 100) ** 0.5 / 75**0.5, rel=1e-5)
    per = {c.column: c.value for c in out if c.column != "top1_acc/imagenet-c"}
    assert len(per) == 95 and per["top1_acc/saturate_2"] == pytest.approx(20.0)


def test_imagenet_c_rejects_unknown_corruptions():
    from repro.base.errors import ReproError

    with pytest.raises(ReproError, match="unknown corruptions"):
        columns.imagenet_c(ProbeResult("c", "1", 0, [ConditionCount("blurry/1", 1, 2)]), _ctx())


def test_accuracy_uses_the_top1_condition_not_all_conditions_pooled(tmp_path, env, torch_threads):
    res = ProbeResult(
        "classify", "1", None, [ConditionCount("top1", 30, 100), ConditionCount("top5", 70, 100)]
    )
    (col,) = columns.imagenet(res, _ctx())
    assert (col.k, col.n, col.value) == (30, 100, 30.0)


def test_pgd_uses_the_robust_condition_and_pads_by_128_whatever_the_batch_size():
    res = ProbeResult(
        "pgd",
        "1",
        0,
        [
            ConditionCount("clean", 90, 200),
            ConditionCount("robust", 20, 200),
            ConditionCount("robust_published", 76, 256),
        ],
    )
    std, pub = columns.pgd_low(res, _ctx())
    assert (std.k, std.n) == (20, 200) and (pub.k, pub.n) == (20 + 56, 256)


def test_spectral_ratios_to_clean_accuracy():
    res = ProbeResult(
        "s",
        "1",
        0,
        [
            ConditionCount("clean", 40, 50),
            ConditionCount("LFC/0.1", 10, 50),
            ConditionCount("HFC/0.5", 20, 50),
        ],
    )
    out = {c.column: c.value for c in columns.spectral(res, _ctx())}
    assert out == {
        "metric/bandpass/LFC/0.1": pytest.approx(0.25),
        "metric/bandpass/HFC/0.5": pytest.approx(0.5),
    }
    # no clean image correct (a random model on mini data): ratios undefined, not an error
    res0 = ProbeResult(
        "s", "1", 0, [ConditionCount("clean", 0, 50), ConditionCount("LFC/0.1", 1, 50)]
    )
    assert [c.value for c in columns.spectral(res0, _ctx())] == [None]


def test_critical_band_keeps_undefined_fits_as_none():
    res = ProbeResult(
        "cb", "1", 0, values={"bw_norm": 1.0, "cf_norm": 39.6, "pns_norm": 1.0, "bw": None}
    )
    out = {c.column: c.value for c in columns.critical_band(res, _ctx())}
    assert (
        out["metric/criticalband/cf_norm"] == pytest.approx(39.6)
        and out["metric/criticalband/bw"] is None
    )


def test_reproduce_plan_measures_only_what_has_a_configured_dataset(tmp_path, monkeypatch):
    from repro.runner import pipeline

    monkeypatch.chdir(tmp_path)
    (tmp_path / "none.toml").write_text(
        ""
    )  # an empty config (a missing REPRO_CONFIG file is an error)
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "none.toml"))
    for key in [k for k in os.environ if k.startswith("REPRO_") and k.endswith("_ROOT")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("REPRO_CUE_CONFLICT_ROOT", str(tmp_path / "cue"))
    monkeypatch.setenv("REPRO_IMAGENET_VAL_ROOT", str(tmp_path / "val"))
    from repro.base.study import get_study

    plan = pipeline.plan(
        get_study("gavrikov2024"), models=["tv_resnet50"], device="cpu", store=tmp_path / "store"
    )
    assert not plan.mini and plan.models == ["tv_resnet50"] and plan.store == tmp_path / "store"
    assert plan.measurements == [
        "imagenet",
        "imagenet_real",
        "pgd_low",
        "shape_bias",
        "spectral",
        "critical_band",
    ]
    assert plan.not_configured == {
        "imagenet_v2": "imagenet_v2",
        "imagenet_a": "imagenet_a",
        "imagenet_r": "imagenet_r",
        "imagenet_sketch": "imagenet_sketch",
        "imagenet_c": "imagenet_c",
        "imagenet_cbar": "imagenet_cbar",
        "stylized": "stylized",
    }
    assert "not measured (dataset not configured): imagenet_v2 (imagenet_v2)" in plan.describe()


def _no_datasets(tmp_path, monkeypatch):
    """No dataset configured (an empty config, no REPRO_*_ROOT), and a data directory holding the
    two stimulus folders the shipped part reads (empty: the plan only looks for the folders)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "none.toml").write_text("")
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("REPRO_STORE_DIR", raising=False)
    for key in [k for k in os.environ if k.startswith("REPRO_") and k.endswith("_ROOT")]:
        monkeypatch.delenv(key)
    data = tmp_path / "data"
    for folder in ("texture-vs-shape/cue-conflict", "critical-band-masking/CBMSplit"):
        (data / folder).mkdir(parents=True)
    return data


def test_with_no_dataset_configured_reproduce_measures_the_shipped_part(tmp_path, monkeypatch):
    """A fresh clone: not the mini run, but the `reproduce` part of the session `real`
    (EfficientNet-Lite0 x shape bias and pre-made critical band) on the data directory's stimuli,
    with the session's device and batch size, into `runs/store` under the working directory."""
    from pathlib import Path

    from repro.base.study import get_study
    from repro.runner import pipeline

    data = _no_datasets(tmp_path, monkeypatch)
    study = get_study("gavrikov2024")
    plan = pipeline.plan(study, data_dir=data)
    assert (plan.mini, plan.shipped, plan.models, plan.measurements) == (
        False,
        "real",
        ["efficientnet_lite0"],
        ["shape_bias", "critical_band_16_premade"],
    )
    assert (plan.device, plan.batch_size, plan.store, plan.data_dir) == (
        "cpu",
        16,
        Path("runs") / "store",
        data,
    )
    assert plan.dataset_roots == {
        "cue_conflict": str(data / "texture-vs-shape/cue-conflict"),
        "cbmsplit": str(data / "critical-band-masking/CBMSplit"),
    }
    assert "mode: shipped data" in plan.describe() and "NOT evidence" not in plan.describe()
    # the command line narrows or replaces the part; what has no stimuli in the
    # data directory is left out
    other = pipeline.plan(
        study,
        models=["efficientnet_lite1"],
        measurements=["shape_bias", "critical_band_16"],
        data_dir=data,
        store=tmp_path / "s",
        device="cpu",
    )
    assert other.models == ["efficientnet_lite1"] and other.measurements == ["shape_bias"]
    assert (
        other.not_configured == {"critical_band_16": "graysplit"} and other.store == tmp_path / "s"
    )
    # no stimuli there, or a study without a shipped part: nothing to measure
    # (the published data only)
    assert pipeline.plan(study, data_dir=tmp_path / "nowhere") is None
    assert pipeline.plan(get_study("imagenetx"), data_dir=data) is None
    # asked for: the mini run, as before
    assert pipeline.plan(study, mini=True, work_dir=tmp_path / "mini", data_dir=data).mini

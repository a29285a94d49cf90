"""The tests of tests/unit/test_runner.py that start a process (`python -m repro` or another), in
the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import os

import pytest

from repro.runner.jobs import jobs_for, run_sweep
from repro.store.files import Store
from tests import fakes
from tests.unit import test_runner as unit_module
from tests.unit.test_runner import MODELS, _no_datasets

env = unit_module.env  # the fixture of tests/unit/test_runner.py

pytestmark = pytest.mark.cli


def test_submitit_local_executor_runs_one_job_per_pair(tmp_path, torch_threads, monkeypatch):
    from repro.runner.slurm import submit

    monkeypatch.setenv("PYTHONPATH", os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    jobs = jobs_for(MODELS, ["fake_a"])
    results = submit(
        jobs,
        tmp_path / "store",
        device="cpu",
        batch_size=8,
        cluster="local",
        folder=tmp_path / "submitit",
        env="tests.fakes:environment",
    )
    assert [(r["model"], r["status"], r["ran"]) for r in results] == [
        ("tiny_a", "ok", True),
        ("tiny_b", "ok", True),
    ]
    store = Store(tmp_path / "store")
    pids = {store.read(m, "fake_a").provenance["pid"] for m in MODELS}
    assert os.getpid() not in pids and len(pids) == 2  # each ran in its own process
    # the same values as an in-process sweep
    ref = Store(tmp_path / "ref")
    run_sweep(jobs, ref, env=fakes.environment(), batch_size=8, progress=False)
    assert [r.conditions for r in store] == [r.conditions for r in ref]


def test_parallel_workers_never_run_the_same_job_and_each_gets_one_gpu(tmp_path, monkeypatch):
    """``--workers 2`` on a 2-GPU box: two ``measure`` processes share the store; each job runs
    exactly once, and each worker sees one GPU (CUDA_VISIBLE_DEVICES), here ids 3 and 5."""
    from repro.runner.local import run_workers

    log = tmp_path / "runs.log"
    for key, value in {
        "FAKE_RUN_LOG": str(log),
        "FAKE_SLEEP": "0.3",
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }.items():
        monkeypatch.setenv(key, value)
    models = ["tiny_a", "tiny_b", "tiny_c"]
    codes = run_workers(
        [
            "--env",
            "tests.fakes:environment",
            "--models",
            *models,
            "--measurements",
            "fake_a,fake_b",
            "--device",
            "cpu",
            "--store",
            str(tmp_path / "store"),
            "--no-progress",
        ],
        2,
        gpus=["3", "5"],
    )
    assert codes == [0, 0]
    lines = [line.split() for line in log.read_text().splitlines()]
    jobs = sorted((model, data) for _, data, model, _ in lines if data != "<start>")
    assert jobs == sorted(
        (m, d) for m in models for d in ("data_a", "data_b")
    )  # each job exactly once
    gpu_of = {pid: gpu for pid, data, _, gpu in lines if data == "<start>"}
    assert sorted(gpu_of.values()) == ["3", "5"]  # two workers, one GPU each
    assert all(gpu_of[pid] == gpu for pid, data, _, gpu in lines if data != "<start>")
    assert len(Store(tmp_path / "store").records()) == 6


def test_cli_reports_unknown_measurement_in_one_line(tmp_path, run_cli):
    res = run_cli(
        "measure", "--models", "tiny_random_a", "--measurements", "shape_bais", "--store", tmp_path
    )
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        "error: unknown measurement 'shape_bais'; did you mean 'shape_bias'? (known: 17 "
        "entries, list them "
        "with `python -m repro` help)"
    ]


def test_claims_map_to_the_measurements_and_models_they_rest_on(data_dir):
    from repro.measurements.registry import measurements_for_columns
    from repro.runner.ensure import needs_of_claims

    assert measurements_for_columns(["shape-bias", "top1_acc/imagenet-real"]) == [
        "imagenet_real",
        "shape_bias",
    ]
    assert measurements_for_columns(["top1_acc/fog_3"]) == ["imagenet_c"]
    assert measurements_for_columns(["metric/criticalband/cf_norm", "metric/bandpass/HFC/0.3"]) == [
        "spectral",
        "critical_band",
    ]
    models, meas = needs_of_claims(["shape_bias_yfcc_ssl_equals_baseline"], data_dir)
    assert sorted(models) == ["ssl_resnet50", "tv_resnet50"] and meas == ["shape_bias"]
    models, meas = needs_of_claims(["shape_bias_vs_id_accuracy"], data_dir)
    assert len(models) == 48 and meas == ["imagenet", "imagenet_v2", "imagenet_real", "shape_bias"]


def test_a_shipped_run_of_models_outside_the_study_leaves_the_claims_on_the_published_data(
    tmp_path, monkeypatch, data_dir
):
    """EfficientNet-Lite0 is not a study model: the claims context is the published one (no
    measured column, no run inputs), so no claim switches to the measured-data tolerance; and the
    measured table holds the plan's models only, whatever else the store holds."""
    from repro.base.study import get_study
    from repro.runner import pipeline
    from repro.store.record import ColumnValue, JobRecord

    data = _no_datasets(tmp_path, monkeypatch)
    plan = pipeline.plan(get_study("gavrikov2024"), data_dir=data, store=tmp_path / "store")
    from repro.measurements.registry import get

    version = get("shape_bias").version()
    prov = {
        "dataset_fingerprint": "f",
        "dataset_items": 1280,
        "dataset_mini": False,
        "dataset_partial": False,
    }
    for model in ("efficientnet_lite0", "tv_resnet50"):
        Store(plan.store).write(
            JobRecord(
                model,
                "shape_bias",
                version,
                "ok",
                provenance=prov,
                columns=[ColumnValue.from_count("shape-bias", 300, 800, scale=1.0)],
            )
        )
    assert list(pipeline.measured_table(plan)) == ["efficientnet_lite0"]
    ctx = pipeline.claims_context(plan, data_dir)  # the published table of the real data directory
    assert ctx.inputs is None and not ctx.measured and ctx.source == "published"

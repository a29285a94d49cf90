"""The tests of tests/unit/test_throughput.py that start a process (`python -m repro` or another),
in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import json

import pytest

from repro.planner import throughput as tp

pytestmark = pytest.mark.cli


def test_harness_on_real_stimuli_and_the_plan_reads_it(run_cli, data_dir, tmp_path):
    out = tmp_path / "tp.json"
    res = run_cli(
        "throughput",
        "--model",
        "tiny_random_a",
        "--device",
        "cpu",
        "--limit",
        "6",
        "--batch-size",
        "4",
        "--stages",
        "shape_bias,critical_band,classify,pgd",
        "--data-dir",
        data_dir,
        "--out",
        out,
        env={"REPRO_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    runs = {(r["stage"], r["precision"]): r for r in doc["runs"]}
    assert (
        runs[("critical_band", "float32")]["forward"] == 6 * 29
        and runs[("classify", "bfloat16")]["forward"] == 6
    )
    assert runs[("shape_bias", "float32")]["forward"] == 6
    # pgd_low's passes with the harness's steps: the clean pass, the steps, the adversarial's pass
    assert (
        runs[("pgd", "float32")]["forward"] == 6 * (tp.PGD_STEPS + 2)
        and runs[("pgd", "float32")]["backward"] == 6 * tp.PGD_STEPS
    )
    assert all(r["images_per_s"] > 0 for r in doc["runs"])
    ag = doc["agreement"]["critical_band"]
    assert ag["changed_argmax"][1] == 6 * 29 and 0 <= ag["changed_argmax"][0] <= 6 * 29
    assert "images/s" in res.stdout and "agreement of bfloat16" in res.stdout
    plan = run_cli(
        "plan", "--throughput", out, "--measurements", "imagenet,critical_band,pgd_low,shape_bias"
    )
    assert plan.returncode == 0, plan.stderr
    assert "measured: tiny_random_a on cpu" in plan.stdout
    bad = run_cli("throughput", "--model", "tiny_random_a", "--stages", "shape,spectral")
    assert bad.returncode == 2 and "--stages" in bad.stderr

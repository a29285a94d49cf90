"""The prepared GPU run (tests/gpu/device_check.sh, issue 24 item 4) end to end on the CPU, on a
tiny zoo model and a few images: every step runs (parity, the throughput harness on every stage,
data-major throughput with resident copies, decode included), the data-major runs are merged into
the harness's JSON and ``repro plan --throughput`` projects from it with both execution orders.
It checks the script and its plumbing, not a device's speed; the caps on each step are lifted
(``CAP_FACTOR``), so load on this machine cannot fail it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "gpu" / "device_check.sh"


def test_the_cpu_dry_run_measures_data_major_and_feeds_the_plan(tmp_path, data_dir):
    prep, out = tmp_path / "prep", tmp_path / "out"
    (prep / "data").mkdir(parents=True)
    out.mkdir()
    for sub in ("texture-vs-shape", "critical-band-masking"):  # what --prepare copies, linked
        (prep / "data" / sub).symlink_to(Path(data_dir) / sub)
    env = {
        **os.environ,
        "DEVICE": "cpu",
        "MODEL": "tiny_random_a",
        "LIMIT": "16",
        "DM_MODELS": "2",
        "DM_IMAGES": "32",
        "PGD_IMAGES": "8",
        "OUT": str(out),
        "PYTHON": sys.executable,
        "DEVICE_CHECK_DIR": str(prep),
        "REPRO_CACHE_DIR": str(tmp_path / "cache"),
        "BUDGET_S": str(int(100 * HANG_GUARD_S)),
        "CAP_FACTOR": "100",
    }
    got = subprocess.run(
        ["bash", str(SCRIPT)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    assert "passed" in (out / "parity.log").read_text()
    doc = json.loads((out / "throughput-tiny_random_a-cpu.json").read_text())
    stages = {(r["stage"], r["precision"]) for r in doc["runs"]}
    assert {s for s, _ in stages} == {"shape_bias", "spectral", "critical_band", "classify", "pgd"}
    runs = {r["precision"]: r for r in doc["data_major"]}  # merged from step 3's JSON
    assert set(runs) == {"float32", "bfloat16"} and runs["bfloat16"]["channels_last"]
    for r in runs.values():
        assert r["models"] == 2 and r["images"] == 32 and r["passes"] == 2 * 32
        assert r["passes_per_s"] > 0 and r["model_major_passes_per_s"] > 0
        ratio = r["data_major_over_model_major"]  # seconds over seconds, on the same passes
        assert ratio == pytest.approx(r["model_major_passes_per_s"] / r["passes_per_s"], rel=1e-6)
    plan = (out / "plan.txt").read_text()
    assert "rates measured" in plan and str(out / "throughput-tiny_random_a-cpu.json") in plan
    assert "data float32" in plan and "model bfloat16" in plan
    assert "goal: the 48-model study in at most 4 wall hours on one H200" in plan
    pgd = json.loads((out / "pgd-early-stop.json").read_text())  # step 5: both PGD rules
    (row,) = pgd["rows"]
    assert row["n"] == 8 and row["passes_full"] == [8 * 42, 8 * 40]
    assert row["early_successes"] >= row["final_successes"] and 0 < row["pass_ratio"] <= 1
    assert row["seconds_full"] > 0 and row["seconds_early"] > 0
    assert "device_check: " in got.stdout and "exit 0" in got.stdout

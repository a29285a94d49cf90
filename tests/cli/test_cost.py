"""The tests of tests/unit/test_cost.py that start a process (`python -m repro` or another), in the
cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.cli


def test_plan_cli(run_cli):
    res = run_cli("plan", "--device", "h200", "--gpus", "4")
    assert res.returncode == 0, res.stderr
    total = [ln for ln in res.stdout.splitlines() if ln.startswith("total")][0].split()
    assert total[1] == "583.2M" and total[2] == "96.0M"
    ours32, ours16, published = (float(v) for v in total[3:6])
    assert ours16 < ours32 < published
    wall = [ln for ln in res.stdout.splitlines() if ln.startswith("wall")][0].split()
    assert float(wall[-1]) == pytest.approx(published / 4, abs=0.01)
    err = run_cli("plan", "--device", "tpu9")
    assert err.returncode == 2 and err.stderr.startswith("error: unknown device")
    assert run_cli("plan", "--gpus", "0").returncode == 2

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


def test_plan_prints_pgd_under_both_rules_with_the_goal_line(run_cli):
    """python -m repro plan: PGD's passes and hours under the study's rule and the early-stop
    variant, and the orders' totals with it against the goal."""
    res = run_cli("plan")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    final = next(ln for ln in out.splitlines() if "final point (the study's)" in ln)
    early = next(ln for ln in out.splitlines() if "early stop (variant)" in ln)
    assert "42.00 forward + 40.00 backward per image, 20.33 h" in final
    full_h = float(final.rsplit(",", 1)[1].split()[0])
    early_h = float(early.split(" per image, ")[1].split()[0])
    assert 0 < early_h < full_h
    goal = out[out.index("goal: the 48-model study") :]
    es = next(ln for ln in goal.splitlines() if "data-major bf16 PGD-ES" in ln)
    bf16 = next(ln for ln in goal.splitlines() if "data-major bfloat16" in ln)
    es_h, bf16_h = (float(ln.split(":")[1].split()[0]) for ln in (es, bf16))
    assert bf16_h - es_h == pytest.approx(full_h - early_h, abs=0.02)

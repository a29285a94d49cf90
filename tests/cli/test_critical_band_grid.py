"""The tests of tests/unit/test_critical_band_grid.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_critical_band_grid import ABSOLUTE, NORM, decisions

pytestmark = pytest.mark.cli


def test_cli_grid_text_and_json(run_cli, tmp_path):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(decisions()))
    res = run_cli("score", "critical-band", "--grid", str(path), "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["thresholds"] == ABSOLUTE and out["thresholds_norm"] == NORM
    assert out["baseline"]["k"] == 68 and out["baseline"]["n"] == 70
    assert set(out["fit"]) == {
        "bandwidth",
        "center_frequency",
        "peak_noise_sensitivity",
        "params",
        "reason",
    }
    text = run_cli("score", "critical-band", "--grid", str(path)).stdout.splitlines()
    assert text[0] == (
        f"{path}: 35 conditions, 350 trials (SD 0 split over the 7 bands, pooled into "
        "sd=0: 68/70 correct)"
    )
    assert text[1].startswith("thresholds (absolute 50%): 0,1,1,2,3,2,0 -> bandwidth ")
    assert text[2].startswith(
        "thresholds (_norm, 50% of the sd=0 accuracy): 0,0,1,2,3,1,0 -> bandwidth "
    )


def test_cli_needs_exactly_one_input(run_cli, tmp_path):
    res = run_cli("score", "critical-band")
    assert (
        res.returncode == 2
        and "give 7 thresholds (e.g. 0,0,0,0,2,2,0) or --grid FILE" in res.stderr
    )
    res = run_cli("score", "critical-band", "0,0,0,0,2,2,0", "--grid", str(tmp_path / "x.json"))
    assert res.returncode == 2 and "not both" in res.stderr
    res = run_cli("score", "critical-band", "--grid", str(tmp_path / "missing.json"))
    assert (
        res.returncode == 2
        and res.stderr.startswith("error: ")
        and "missing.json: not found (expected a per-trial JSON" in res.stderr
    )
    assert len(res.stderr.strip().splitlines()) == 1

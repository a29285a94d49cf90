"""The tests of tests/unit/test_sixteen_class_probes.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_sixteen_class_probes import write_cbm_train

pytestmark = pytest.mark.cli


def test_cli_detects_a_cbmsplit_folder_and_prints_the_grid(run_cli, tmp_path):
    root = write_cbm_train(tmp_path / "CBMSplit")
    res = run_cli(
        "probe",
        "critical-band",
        "--model",
        "tiny_random_a",
        "--data",
        root,
        "--splits",
        "train",
        "--device",
        "cpu",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert (out["measurement"], out["stimuli"], out["protocol"], out["images"]) == (
        "critical_band_16_premade",
        "cbmsplit",
        "subramanian2023-16class",
        50,
    )
    cells = {c["condition"]: c["n"] for c in out["conditions"]}
    assert len(cells) == 29 and sum(cells.values()) == 50 and cells["sd=0"] == 10
    bad = run_cli(
        "probe",
        "critical-band",
        "--model",
        "tiny_random_a",
        "--data",
        root,
        "--splits",
        "train",
        "--stimuli",
        "graysplit",
        "--device",
        "cpu",
    )
    assert (
        bad.returncode == 2
        and "file name does not match <i>_color_gray_g_<category>.JPEG" in bad.stderr
    )
    nosplit = run_cli(
        "probe", "critical-band", "--model", "tiny_random_a", "--data", root, "--device", "cpu"
    )
    assert nosplit.returncode == 2 and "missing 0/, 1/, 2/, 3/, 4/" in nosplit.stderr
    wrong = run_cli(
        "probe", "shape-bias", "--model", "tiny_random_a", "--data", root, "--device", "cpu"
    )
    assert wrong.returncode == 2 and "does not read 'cbmsplit' stimuli" in wrong.stderr

"""``python -m repro score critical-band``: JSON (null when undefined), text output, and
one-line errors for bad threshold vectors."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.cli


def test_human_reference_json(run_cli):
    res = run_cli("score", "critical-band", "0,0,0,0,2,2,0", "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert set(out) == {"bandwidth", "center_frequency", "peak_noise_sensitivity"}
    assert round(out["bandwidth"], 2) == 1.00
    assert round(out["center_frequency"], 1) == 39.6
    assert round(out["peak_noise_sensitivity"], 2) == 1.00


def test_text_output(run_cli):
    res = run_cli("score", "critical-band", "0,0,0,0,2,2,0")
    assert res.stdout.strip() == (
        "thresholds [0, 0, 0, 0, 2, 2, 0]: bandwidth 1.00 octaves, centre frequency 39.6 "
        "cycles/image, peak noise sensitivity 1.00"
    )


def test_degenerate_fit_is_null(run_cli):
    res = run_cli("score", "critical-band", "4,4,4,4,4,4,4", "--json")
    assert res.returncode == 0
    assert json.loads(res.stdout) == {
        "bandwidth": None,
        "center_frequency": None,
        "peak_noise_sensitivity": None,
    }
    res = run_cli("score", "critical-band", "4,4,4,4,4,4,4")
    assert "undefined (all thresholds equal (4)" in res.stdout


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("0,0,2", "expected 7 comma-separated thresholds (bands 0..6), got 3 in '0,0,2'"),
        ("0,0,0,0,2,2,9", "threshold 6 (band 6) is '9': expected an integer 0..4"),
        ("a,b,c,d,e,f,g", "threshold 0 (band 0) is 'a': expected an integer 0..4"),
    ],
)
def test_bad_thresholds_are_one_line_errors(run_cli, arg, message):
    res = run_cli("score", "critical-band", arg, "--json")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip() == f"error: critical-band thresholds: {message}"

"""``python -m repro score shape-bias``: JSON and text output, and one-line errors for bad
input (exit status 2, file/row/column named, no traceback); torch is never imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.cli

HEADER = "subj,session,trial,rt,object_response,category,condition,imagename"


def _write(tmp_path, lines, name="d.csv"):
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def test_json_output(tmp_path, run_cli):
    path = _write(
        tmp_path,
        [
            "m,1,1,NaN,airplane,airplane,NaN,airplane1-bicycle2.png",
            "m,1,2,NaN,cat,bear,NaN,bear1-cat2.png",
            "m,1,3,NaN,cat,bear,NaN,bear2-cat1.png",
            "m,1,4,NaN,dog,clock,NaN,clock1-knife1.png",
            "m,1,5,NaN,oven,oven,NaN,oven1-oven2.png",
        ],
    )
    res = run_cli("score", "shape-bias", path, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out == {"n": 4, "shape": 1, "texture": 2, "shape_bias": pytest.approx(1 / 3)}
    assert isinstance(out["n"], int) and isinstance(out["shape_bias"], float)


def test_text_output_has_counts_and_interval(tmp_path, run_cli):
    path = _write(
        tmp_path,
        [
            "m,1,1,NaN,airplane,airplane,NaN,airplane1-bicycle2.png",
            "m,1,2,NaN,cat,bear,NaN,bear1-cat2.png",
        ],
    )
    res = run_cli("score", "shape-bias", path)
    assert res.returncode == 0
    assert (
        "shape bias 0.5000 (95% CI 0.0945-0.9055): 1 shape, 1 texture of n=2 conflict trials"
        in res.stdout
    )


def test_undefined_shape_bias_is_null(tmp_path, run_cli):
    path = _write(tmp_path, ["m,1,1,NaN,dog,airplane,NaN,airplane1-bicycle2.png"])
    res = run_cli("score", "shape-bias", path, "--json")
    assert json.loads(res.stdout) == {"n": 1, "shape": 0, "texture": 0, "shape_bias": None}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["m,1,1,NaN,airplane,airplane,NaN"], "row 2: 7 fields, expected 8"),
        (
            [
                "m,1,1,NaN,airplane,airplane,NaN,airplane1-bicycle2.png",
                "m,1,2,NaN,plane,airplane,NaN,airplane1-bicycle2.png",
            ],
            "row 3, column object_response: got 'plane'",
        ),
    ],
)
def test_malformed_csv_is_one_line_error(tmp_path, run_cli, lines, message):
    path = _write(tmp_path, lines)
    res = run_cli("score", "shape-bias", path, "--json")
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith(f"error: {path}: ") and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_missing_file_and_missing_argument(tmp_path, run_cli):
    res = run_cli("score", "shape-bias", tmp_path / "none.csv")
    assert res.returncode == 2 and res.stderr.strip() == (
        f"error: {tmp_path / 'none.csv'}: decisions CSV not found (expected a file with columns "
        "subj,session,trial,rt,object_response,category,condition,imagename; check the path)"
    )
    res = run_cli("score", "shape-bias")
    assert res.returncode == 2 and "DECISIONS.csv" in res.stderr


def test_scoring_commands_do_not_import_torch(tmp_path):
    path = _write(tmp_path, ["m,1,1,NaN,airplane,airplane,NaN,airplane1-bicycle2.png"])
    code = (
        "import sys, contextlib, io\n"
        "from repro.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['score', 'shape-bias', {str(path)!r}, '--json']) == 0\n"
        "    assert main(['score', 'critical-band', '0,0,0,0,2,2,0', '--json']) == 0\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert res.returncode == 0, res.stderr

"""A nox run starts with its session, not with ``nox > uv binary not found.``: every session runs in
the project environment (venv backend "none"), and the noxfile tells nox so before nox looks for
uv (noxfile.py, under the options)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]


def test_a_nox_session_does_not_say_uv_is_missing(tmp_path):
    # a real session, made quick: the data tier's pytest, collecting one file only
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "nox",
            "-f",
            str(ROOT / "noxfile.py"),
            "--envdir",
            str(tmp_path / "nox"),
            "-s",
            "data",
            "--",
            "--collect-only",
            "-q",
            "tests/data/test_accuracy.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    text = res.stdout + res.stderr
    assert res.returncode == 0, text
    lines = [ln for ln in text.splitlines() if ln.startswith("nox > ")]
    assert lines[0] == "nox > Running session data", lines
    assert "uv binary not found" not in text, text
    assert lines[-1].startswith("nox > Session data was successful"), lines

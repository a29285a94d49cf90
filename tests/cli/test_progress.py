"""The tests of tests/unit/test_progress.py that start a process (`python -m repro` or another), in
the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.test_progress import CONTROL

pytestmark = pytest.mark.cli


ROOT = Path(__file__).resolve().parents[2]


def test_measure_in_a_pipe_logs_lines_without_control_characters(tmp_path):
    """The real command with its standard error on a pipe (as under nox, CI or ``| tee``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "TERM": "xterm"}
    env.pop("CI", None)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "repro",
            "measure",
            "--env",
            "tests.fakes:environment",
            "--models",
            "tiny_a",
            "tiny_b",
            "--measurements",
            "fake_a",
            "fake_b",
            "--store",
            str(tmp_path / "s"),
            "--device",
            "cpu",
            "--batch-size",
            "8",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert not CONTROL.search(res.stderr + res.stdout), repr(res.stderr)
    ours = [
        re.sub(r"\(24 images, \d+\.\d s\)", "(24 images, T s)", line)
        for line in res.stderr.splitlines()
    ]
    assert ours == [
        f"job {i}/4: {m} x {d}: measured (24 images, T s)"
        for i, (m, d) in enumerate(
            [
                ("tiny_a", "fake_a"),
                ("tiny_a", "fake_b"),
                ("tiny_b", "fake_a"),
                ("tiny_b", "fake_b"),
            ],
            start=1,
        )
    ]
    assert "4 measured" in res.stdout

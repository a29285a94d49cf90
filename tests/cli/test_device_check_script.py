"""The prepared GPU run (tests/gpu/device_check.sh) cannot run here, but its shell must parse,
and a run that lacks what it needs must stop at once and say what to do, not half-run on a
device whose time is counted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.cli

SCRIPT = Path(__file__).resolve().parents[1] / "gpu" / "device_check.sh"


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("OUT", "DEVICE_CHECK_DIR")}
    return subprocess.run(
        ["bash", str(SCRIPT)],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )


def test_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0


def test_without_out_it_stops_and_names_the_variable():
    got = _run({})
    assert got.returncode != 0 and "set OUT" in got.stderr


def test_without_the_prepared_folder_it_stops_before_any_step(tmp_path):
    got = _run({"OUT": str(tmp_path), "DEVICE_CHECK_DIR": str(tmp_path / "absent")})
    assert got.returncode == 2
    assert "--prepare" in got.stdout and "missing" in got.stdout
    assert list(tmp_path.iterdir()) == []  # nothing ran: no machine.txt, no logs

"""The OpenMP wait policy (repro.base.openmp): ``python -m repro`` makes waiting threads sleep
instead of spinning unless the environment says otherwise, before torch is loaded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repro.base import openmp
from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.cli

ROOT = str(Path(__file__).resolve().parents[2])


def test_passive_unless_already_set():
    env: dict[str, str] = {}
    assert openmp.prefer_passive_waiting(env) == "PASSIVE" and env == {"OMP_WAIT_POLICY": "PASSIVE"}
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert openmp.prefer_passive_waiting(env) == "ACTIVE" and env == {"OMP_WAIT_POLICY": "ACTIVE"}


@pytest.mark.parametrize("given,want", [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_entry_point_sets_it_before_torch_loads(given, want):
    """``repro/__main__`` sets the policy while torch is not yet imported (the runtime reads it
    when it loads), and keeps a value the user gave."""
    code = (
        "import runpy, sys, os\n"
        "import repro.base.openmp as o\n"
        "seen = []\n"
        "real = o.prefer_passive_waiting\n"
        "o.prefer_passive_waiting = lambda *a: seen.append('torch' in sys.modules) or real(*a)\n"
        "sys.argv = ['repro', '--help']\n"
        "try:\n    runpy.run_module('repro', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(seen, os.environ.get('OMP_WAIT_POLICY'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=HANG_GUARD_S,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == f"[False] {want}"

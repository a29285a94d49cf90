"""The tests of tests/unit/test_sessions.py that start a process (`python -m repro` or another), in
the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.cli


def test_measure_session_cli_error_is_one_line(run_cli):
    res = run_cli("measure", "--session", "nope")
    assert res.returncode == 2
    assert res.stderr.strip().startswith("error: --session 'nope': no selected study defines it")
    assert len(res.stderr.strip().splitlines()) == 1

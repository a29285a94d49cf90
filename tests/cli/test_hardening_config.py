"""The tests of tests/unit/test_hardening_config.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import json

import pytest

from tests.unit import malformed
from tests.unit import test_hardening_config as unit_module

isolated = unit_module.isolated  # the fixture of tests/unit/test_hardening_config.py

pytestmark = pytest.mark.cli


def test_config_command_prints_the_config_and_the_resolved_settings(isolated, run_cli):
    (isolated / "repro.toml").write_text(
        f'[paths]\nstore = "{isolated / "st"}"\n[datasets]\ncue_conflict = "/d/cc"\n'
    )
    res = run_cli("config", cwd=isolated, env={"REPRO_WEIGHTS_DIR": "/w/env", "REPRO_CONFIG": ""})
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == f"config: {isolated / 'repro.toml'} (found from the working directory)"
    assert f"store        {isolated / 'st'}  (repro.toml)" in lines
    assert "weights dir  /w/env  ($REPRO_WEIGHTS_DIR)" in lines
    assert (
        "  cue_conflict     /d/cc  (repro.toml)" in lines
        and "  imagenet_val     -  (not configured)" in lines
    )
    info = json.loads(run_cli("config", "--json", cwd=isolated, env={"REPRO_CONFIG": ""}).stdout)
    assert (
        info["config"] == str(isolated / "repro.toml")
        and info["datasets"]["cue_conflict"]["root"] == "/d/cc"
    )
    (isolated / "repro.toml").unlink()
    res = run_cli("config", cwd=isolated, env={"REPRO_CONFIG": ""})
    assert res.stdout.startswith("config: none (no repro.toml from ")


def test_a_bad_config_is_one_line_for_any_command(isolated, run_cli):
    malformed.write_config(isolated, "unknown_dataset_key")
    for argv in (("config",), ("models",), ("data", "check")):
        res = run_cli(*argv, cwd=isolated, env={"REPRO_CONFIG": ""})
        assert res.returncode == 2 and "Traceback" not in res.stderr, (argv, res.stderr)
        assert res.stderr.count("\n") == 1 and "imagenet_vall" in res.stderr

"""The pytest plugin's fixtures and helper (``repro.pytest_plugin``) fail closed, run in a pytest
subprocess on a generated project (the plugin named with ``-p``, as the root conftest names it;
installed, its entry point has the same name, so it is not registered twice):

- ``assert_within`` takes the study's stated margin (shape bias: 0.01) by default, and fails on a
  value that rests on decisions at chance (150 shape-or-texture decisions of 1,200: a uniform
  guess over the 16 categories makes 12.5%) whatever its value;
- ``Placement.value`` fails naming what was placed when the column has no value;
- ``repro_place(..., measure=...)`` fails with the command's own line when ``measure`` fails;
- without ``--store``, ``repro_store`` is a fresh empty store: placing there fails (nothing is
  read from a store kept between runs).

Options are given as ``--opt=value`` (as docs/ci-gate.md says): pytest reads a path given as a
separate word before the plugin's options are known, and would take it for its root directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.small_store import shape_record
from tests.waiting import HANG_GUARD_S

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]

TESTS = """
import pytest

from repro.pytest_plugin import assert_within


def test_within_the_stated_margin(repro_place):
    assert_within(repro_place("my_model").value("shape-bias"), 0.3125 + 0.009)


def test_beyond_the_stated_margin(repro_place):
    assert_within(repro_place("my_model").value("shape-bias"), 0.3125 + 0.011)


def test_a_given_margin(repro_place):
    assert_within(repro_place("my_model").value("shape-bias"), 0.3125 + 0.011, margin=0.02)


def test_at_chance(repro_place):
    assert_within(repro_place("guessing_model").value("shape-bias"), 0.5, margin=1)


def test_no_such_column(repro_place):
    repro_place("my_model").value("top1_acc/imagenet")


def test_measure_fails(repro_place):
    repro_place("no_such_model_xyz", measure=["shape_bias"])
"""

FRESH = """
def test_a_fresh_store_holds_nothing(repro_store, repro_place):
    assert list(repro_store.iterdir()) == []
    repro_place("my_model")
"""


def run(project: Path, *args: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env |= {"PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "repro.pytest_plugin", "-p", "no:cacheprovider"]
        + ["-p", "no:randomly", "-p", "no:xdist", "-rA", "-vv", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        env=env,
    )
    return res.returncode, res.stdout + res.stderr


def outcome(out: str, name: str) -> str:
    """The summary line of test ``name`` (``-rA -vv``: not cut to the terminal's width)."""
    lines = [line for line in out.splitlines() if f"::{name}" in line and " " in line]
    assert lines, f"{name} not in the summary:\n{out}"
    return lines[-1]


def test_the_fixtures_and_assert_within_fail_closed(tmp_path, data_dir):
    from repro.store.files import Store

    store = Store(tmp_path / "store")
    kw = dict(dataset_items=1280, dataset_mini=False, dataset_partial=False)
    store.write(shape_record("my_model", 250, 550, **kw))  # 0.3125
    store.write(shape_record("guessing_model", 75, 75, **kw))  # 150 of 1,200: at chance
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_gate.py").write_text(textwrap.dedent(TESTS))
    rc, out = run(project, f"--store={tmp_path / 'store'}", f"--data-dir={data_dir}")
    assert rc == 1, out
    assert outcome(out, "test_within_the_stated_margin").startswith("PASSED")
    assert outcome(out, "test_a_given_margin").startswith("PASSED")
    assert (
        "shape-bias of gavrikov2024 = 0.3125 (95% interval [0.281, 0.345]) from 250/800: not "
        "within +-0.01 of the expected 0.3235" in outcome(out, "test_beyond_the_stated_margin")
    )
    assert "from 75/150: rests on decisions at chance" in outcome(out, "test_at_chance")
    assert "my_model: no placed value of 'top1_acc/imagenet' (store " in outcome(
        out, "test_no_such_column"
    )
    assert "placed: gavrikov2024:shape-bias)" in out
    assert "`python -m repro measure --models no_such_model_xyz --measurements shape_bias" in out
    assert "(measuring) exited 2" in outcome(out, "test_measure_fails")
    assert "no_such_model_xyz" in out.split("(measuring) exited 2")[1]  # the command's own line

    (project / "test_gate.py").write_text(textwrap.dedent(FRESH))
    rc, out = run(project, f"--data-dir={data_dir}")
    assert rc == 1, out
    line = outcome(out, "test_a_fresh_store_holds_nothing")
    assert line.startswith("FAILED") and "(placing) exited 2" in line, out
    assert "error: --model 'my_model': not a model of the store " in out

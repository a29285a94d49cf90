"""Where the nox sessions that write reports write them: ``reproduce`` the committed REPORT.md
(its default), ``smoke`` (the generated-mini pipeline, NOT evidence) and ``real`` only under
runs/ (never REPORT.md or report_assets/ of the checkout). The sessions are called with a
stand-in ``nox.Session`` that records the commands instead of running them."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.by_path import load_module

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


class _Session:
    posargs: list[str] = []

    def __init__(self):
        self.commands: list[list[str]] = []

    def run(self, *args: str, **kw) -> None:
        self.commands.append([str(a) for a in args])


@functools.cache
def _noxfile():  # loaded once: nox registers each session at import
    pytest.importorskip("nox")
    return load_module("_noxfile_under_test", ROOT / "noxfile.py", register=False)


def _run(name: str, *posargs: str) -> list[list[str]]:
    session = _Session()
    session.posargs = list(posargs)
    getattr(_noxfile(), name)(session)
    return [c[c.index("repro") + 1 :] for c in session.commands if "repro" in c]


def _out(command: list[str]) -> str:
    return command[command.index("--out") + 1] if "--out" in command else "REPORT.md"


def test_smoke_is_the_mini_run_under_runs_only():
    (cmd,) = _run("smoke")
    assert cmd[0] == "reproduce" and "--mini" in cmd
    assert _out(cmd) == "runs/smoke/REPORT.md" and cmd[cmd.index("--work-dir") + 1] == "runs/smoke"


def test_real_writes_its_report_under_runs_and_reproduce_the_committed_one():
    cmds = _run("real")
    assert [c[0] for c in cmds] == ["measure", "measure", "report"] and _out(
        cmds[-1]
    ) == "runs/real/REPORT.md"
    # cheap measurements first, then the rest; measurements the user names: one pass, as named
    assert cmds[0][cmds[0].index("--measurements") + 1 :] == [
        "shape_bias",
        "critical_band_16_premade",
    ]
    assert "--measurements" not in cmds[1]
    named = _run("real", "--models", "efficientnet_lite0", "--measurements", "spectral")
    assert [c[0] for c in named] == ["measure", "report"]
    assert named[0] == [
        "measure",
        "--session",
        "real",
        "--models",
        "efficientnet_lite0",
        "--measurements",
        "spectral",
    ]
    (cmd,) = _run("reproduce")
    assert cmd == ["reproduce"] and _out(cmd) == "REPORT.md"  # no --mini: what ships, measured

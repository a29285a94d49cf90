"""Where ``reproduce`` writes its report without ``--out`` (``repro.cli.report_path``): the
committed REPORT.md only for the plain run on the shipped data; a run of your own in a folder
beside its store, named after its models; a mini run in its work folder; ``--out`` always wins."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repro.cli import build_parser
from repro.cli.report_path import report_path

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def nothing_configured(tmp_path, monkeypatch):
    """No repro.toml, no dataset root, no store variable: a fresh clone's settings."""
    (tmp_path / "repro.toml").write_text("")
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "repro.toml"))
    for name in list(os.environ):
        if (name.startswith("REPRO_") and name.endswith("_ROOT")) or name == "REPRO_STORE_DIR":
            monkeypatch.delenv(name)


def _where(*argv: str) -> tuple[str, list[str]]:
    return report_path(build_parser().parse_args(["reproduce", *argv]))


def test_only_the_plain_run_writes_the_committed_report():
    assert _where() == ("REPORT.md", [])
    assert _where("--no-progress", "--device", "cpu") == ("REPORT.md", [])


def test_a_run_of_your_own_writes_beside_its_store(monkeypatch, tmp_path):
    reports = Path("runs") / "reports"
    assert _where("--models", "my_lite1") == (str(reports / "my_lite1" / "REPORT.md"), ["--models"])
    assert _where("--models", "a,b", "--measurements", "shape_bias") == (
        str(reports / "a+b" / "REPORT.md"),
        ["--models", "--measurements"],
    )
    assert _where("--published-only")[0] == str(reports / "published-only" / "REPORT.md")
    assert _where("--study", "gavrikov2024")[1] == ["--study"]
    assert _where("--models", "file:///data/my r50.pth", "--store", str(tmp_path / "s")) == (
        str(tmp_path / "reports" / "my_r50.pth" / "REPORT.md"),
        ["--models"],
    )
    # a configured dataset makes the run yours, even without --models
    monkeypatch.setenv("REPRO_CUE_CONFLICT_ROOT", str(tmp_path))
    assert _where() == (str(reports / "study-models" / "REPORT.md"), ["a configured dataset"])
    # ... but not a published-only run, which measures nothing
    assert _where("--published-only")[1] == ["--published-only"]


def test_mini_and_an_explicit_out():
    assert _where("--mini", "--work-dir", "w") == (str(Path("w") / "REPORT.md"), ["--mini"])
    assert _where("--models", "my_lite1", "--out", "REPORT.md") == ("REPORT.md", [])
    assert _where("--out", "x/R.md") == ("x/R.md", [])

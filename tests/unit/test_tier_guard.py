"""The unit tier's guard (tests/tier_guard.py): while it is installed, opening or listing anything
under a protected folder and starting a process are refused with pytest's own failure (which
``except Exception`` cannot swallow), anything else goes through, and removing it restores every
function it replaced; a process a module starts while it is being imported goes through."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys

import pytest

from tests.tier_guard import _Guard

pytestmark = pytest.mark.unit


def test_the_guard_refuses_the_data_folder_and_processes_and_nothing_else(tmp_path):
    data, other = tmp_path / "data", tmp_path / "other"
    data.mkdir()
    other.mkdir()
    (data / "published.csv").write_text("x\n")
    (other / "mine.csv").write_text("y\n")
    (tmp_path / "link").symlink_to(data)
    before = (builtins.open, os.listdir, os.scandir, subprocess.Popen.__init__, os.system)
    guard = _Guard("t", (str(data) + os.sep,))
    guard.install()
    try:
        assert (other / "mine.csv").read_text() == "y\n" and os.listdir(other) == ["mine.csv"]
        refused = [
            lambda: (data / "published.csv").read_text(),
            lambda: open(tmp_path / "link" / "published.csv"),
            lambda: list(data.iterdir()),
            lambda: os.scandir(data),
            lambda: os.open(data / "published.csv", 0),
            lambda: subprocess.run(["true"]),
            lambda: os.system("true"),
        ]
        for call in refused:
            with pytest.raises(pytest.fail.Exception, match="published data directory|started a"):
                try:
                    call()
                except Exception:  # what code under test might do: it must not hide the refusal
                    pytest.fail("swallowed")
        assert len(guard.violations) == len(refused)
        assert (
            "published data directory" in guard.violations[0]
            and "started a process" in guard.violations[-1]
        )
        (tmp_path / "probe_on_import.py").write_text(
            "import subprocess\n"
            "OUT = subprocess.run(['echo', 'probed'], capture_output=True).stdout\n"
        )
        sys.path.insert(0, str(tmp_path))
        try:
            import probe_on_import  # a library that starts a process when first imported
        finally:
            sys.path.remove(str(tmp_path))
            sys.modules.pop("probe_on_import", None)
        assert probe_on_import.OUT == b"probed\n" and len(guard.violations) == len(refused)
    finally:
        guard.remove()
    assert (builtins.open, os.listdir, os.scandir, subprocess.Popen.__init__, os.system) == before

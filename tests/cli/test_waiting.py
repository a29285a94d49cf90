"""tests/waiting.py: a wait for a line that never comes says how the writer ended, so that a
process killed from outside (the OOM killer, a broad ``pkill``) reads differently from one that
failed by itself."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tests.waiting import LineReader, wait_exit

pytestmark = pytest.mark.cli


def _child(code: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def test_a_writer_killed_from_outside_is_named_with_its_signal():
    proc = _child("import sys\nprint('ready', flush=True)\nsys.stdin.read()\nprint('never')\n")
    try:
        out = LineReader(proc.stdout, proc)
        assert out.wait_for("^ready") == ["ready\n"]
        proc.send_signal(signal.SIGTERM)  # as another user's pkill would
        with pytest.raises(
            AssertionError,
            match=rf"^the stream ended before 1 line\(s\) matching '\^never' "
            rf"\(pid {proc.pid} was killed by SIGTERM\):\nready\n$",
        ):
            out.wait_for("^never")
    finally:
        proc.kill()
        proc.wait()


def test_a_writer_that_fails_by_itself_is_named_with_its_exit_status():
    proc = _child("print('starting', flush=True)\nraise SystemExit(3)\n")
    out = LineReader(proc.stdout, proc)
    with pytest.raises(
        AssertionError, match=rf"\(pid {proc.pid} exited with status 3\):\nstarting\n$"
    ):
        out.wait_for("^done", count=2)
    assert wait_exit(proc, out) == 3

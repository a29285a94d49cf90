"""SIGTERM (a CI job's timeout, ``kill PID``) stops ``python -m repro measure`` as Ctrl-C does: the
finished jobs are kept, the running one is not recorded, the last line says how to resume, and the
exit status is 143 (128 + SIGTERM); with ``--workers`` the command stops and waits for every
worker, although the signal reached only the command itself. Real subprocesses and real signals:
the test waits for the command's own progress line of the finished job (its standard error is a
pipe), then sends SIGTERM; the next jobs sleep until stopped, so the moment cannot matter."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from repro.store.files import Store
from tests.waiting import LineReader, wait_exit

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]


def _measure(argv: list[str], **env: str) -> subprocess.Popen:
    """``python -m repro <argv>`` in its own process group (so the test can clean up after it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "repro", *argv],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _end(proc: subprocess.Popen) -> None:
    """Kill what is left of the command's process group: nothing when it stopped as it should; a
    failing run leaves no worker behind."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _argv(store: Path, models: str, *extra: str) -> list[str]:
    return [
        "measure",
        "--models",
        models,
        "--measurements",
        "fake_a",
        "--store",
        str(store),
        "--env",
        "tests.fakes:environment",
        "--device",
        "cpu",
        *extra,
    ]


def _resume_line(argv: list[str]) -> str:
    return (
        "terminated (SIGTERM): everything finished so far is kept (stored jobs, verified files); "
        f"re-run `python -m repro {' '.join(argv)}` to resume"
    )


def test_sigterm_keeps_finished_jobs_and_says_how_to_resume(tmp_path):
    store = tmp_path / "store"
    argv = _argv(store, "m1,m2,m3")
    proc = _measure(argv, FAKE_SLEEP_MODELS="m2:1e9,m3:1e9")
    try:
        err = LineReader(proc.stderr, proc)
        err.wait_for(r"^job 1/3: m1 x fake_a: measured")
        proc.send_signal(signal.SIGTERM)  # the process only, as a CI runner's timeout sends it
        assert wait_exit(proc, err) == 143, err.rest()
    finally:
        _end(proc)
    text = err.rest()
    assert "Traceback" not in text, text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert lines[-1] == _resume_line(argv)
    assert Store(store).read("m1", "fake_a").ok
    assert Store(store).read("m2", "fake_a") is None and Store(store).read("m3", "fake_a") is None


def test_sigterm_to_the_command_stops_and_waits_for_its_workers(tmp_path):
    """Only the command gets the signal (not its process group): it terminates its workers,
    waits for them, and says how to resume once, for itself."""
    store, log = tmp_path / "store", tmp_path / "runs.log"
    argv = _argv(store, "m1,m2,m3,m4", "--workers", "2")
    proc = _measure(argv, FAKE_SLEEP_MODELS="m2:1e9,m4:1e9", FAKE_RUN_LOG=str(log))
    try:
        err = LineReader(proc.stderr, proc)
        err.wait_for(r"^\[w\d\] job \d/4: (m1|m3) x fake_a: measured", count=2)
        proc.send_signal(signal.SIGTERM)
        status = wait_exit(proc, err)
        workers = {
            int(line.split()[0]) for line in log.read_text().splitlines() if " <start> " in line
        } - {proc.pid}
        alive = sorted(pid for pid in workers if _alive(pid))  # before the clean-up kills them
    finally:
        _end(proc)
    assert status == 143, err.rest()
    text = err.rest()
    assert "Traceback" not in text, text
    said = [ln for ln in text.splitlines() if ln.startswith(("terminated", "interrupted"))]
    assert said == [_resume_line(argv)]
    assert len(workers) == 2 and alive == []  # every worker has exited and was waited for
    assert Store(store).read("m1", "fake_a").ok and Store(store).read("m3", "fake_a").ok
    assert Store(store).read("m2", "fake_a") is None and Store(store).read("m4", "fake_a") is None

"""Progress that suits its output (repro/runner/progress.py): bars on a terminal; on a pipe, in
a file or in CI one plain line per finished job and one every N images of a long job, with no
carriage return or escape sequence."""

from __future__ import annotations

import io
import re
import sys

import pytest

from repro.runner import progress
from repro.runner.jobs import jobs_for, run_sweep
from repro.store.files import Store
from tests import fakes

pytestmark = pytest.mark.unit

CONTROL = re.compile(r"[\r\x1b\x08]")  # carriage return, escape (ANSI), backspace


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize(
    ("stream", "environ", "mode"),
    [
        (Tty(), {}, "bars"),
        (Tty(), {"TERM": "xterm-256color"}, "bars"),
        (io.StringIO(), {}, "lines"),  # a pipe or a file
        (Tty(), {"CI": "true"}, "lines"),  # CI logs are files, whatever the runner pretends
        (Tty(), {"TERM": "dumb"}, "lines"),
        (Closed(), {}, "lines"),
        (object(), {}, "lines"),  # no isatty at all
    ],
)
def test_the_mode_follows_the_output(stream, environ, mode):
    assert progress.choose_mode(stream, environ) == mode


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_one_per_finished_job_and_one_every_n_images_across_passes():
    out, clock = io.StringIO(), Clock()
    lines = progress.Lines(3, stream=out, every=10, clock=clock)
    lines.done("a x skip", "already in the store")
    report = lines.start("a x c")
    for done, now in [
        (4, 101),
        (8, 102),
        (12, 103),
        (5, 104),
        (25, 105),
        (30, 106),
    ]:  # 5 < 12: a new pass
        clock.now = now
        report(done)
    clock.now = 108.0
    lines.done("a x c", "measured")
    report = lines.start("b x c")
    clock.now = 110.0
    report(3)
    lines.done("b x c", "FAILED")
    assert out.getvalue().splitlines() == [
        "job 1/3: a x skip: already in the store",
        "job 2/3: a x c: 12 images so far (4 img/s)",  # 12 images in 3 s
        "job 2/3: a x c: 37 images so far (7 img/s)",  # 12 + 5 + 20: past 20 and 30, one line
        "job 2/3: a x c: 42 images so far (7 img/s)",
        "job 2/3: a x c: measured (42 images, 8.0 s)",
        "job 3/3: b x c: FAILED (3 images, 2.0 s)",
    ]


def test_lines_name_the_worker_of_several():
    out = io.StringIO()
    lines = progress.Lines(2, label="w1", stream=out)
    lines.done("m x d", "another worker has it")
    assert out.getvalue() == "[w1] job 1/2: m x d: another worker has it\n"


class Writes(io.StringIO):
    """A stream that keeps each ``write`` call apart (each one is a system call on the
    write-through standard error)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return super().write(text)


def test_each_line_is_one_write_so_workers_sharing_stderr_never_interleave():
    """Two workers of ``measure --workers 2`` write to one standard error: a line written in two
    calls (text, then newline, as ``print`` does) can be split by the other worker's line, which
    then starts mid-line. Each line, whether from a worker's progress or its warnings, is one
    call."""
    out = Writes()
    lines = progress.Lines(
        4, label="w0", stream=out, every=10, clock=iter([0.0, 2.0, 4.0]).__next__
    )
    report = lines.start("m1 x fake_a")
    report(10)
    lines.done("m2 x fake_a", "measured")
    progress.write_line("warning: m3 has no weights", out)
    assert out.calls == [
        "[w0] job 1/4: m1 x fake_a: 10 images so far (5 img/s)\n",
        "[w0] job 1/4: m2 x fake_a: measured (10 images, 4.0 s)\n",
        "warning: m3 has no weights\n",
    ]


def _sweep(store, monkeypatch, stream):
    """A sweep of two jobs with progress on, its standard error being ``stream``."""
    monkeypatch.setattr(sys, "stderr", stream)
    summary = run_sweep(
        jobs_for(["tiny_a", "tiny_b"], ["fake_a"]),
        store,
        env=fakes.environment(),
        batch_size=8,
        progress=True,
    )
    return summary, stream.getvalue()


def test_a_sweep_on_a_pipe_prints_plain_lines(tmp_path, monkeypatch, torch_threads):
    monkeypatch.setenv("FAKE_FAIL_MODELS", "tiny_b")
    monkeypatch.delenv("CI", raising=False)
    store = Store(tmp_path)
    summary, err = _sweep(store, monkeypatch, io.StringIO())
    assert len(summary.ran) == 2 and len(summary.failed) == 1
    assert not CONTROL.search(err), repr(err)
    ours = [line for line in err.splitlines() if line.startswith("job ")]
    assert re.fullmatch(r"job 1/2: tiny_a x fake_a: measured \(24 images, \d+\.\d s\)", ours[0]), (
        ours
    )
    assert re.fullmatch(r"job 2/2: tiny_b x fake_a: FAILED \(0 images, \d+\.\d s\)", ours[1]), ours
    assert len(ours) == 2
    monkeypatch.delenv("FAKE_FAIL_MODELS")
    _, err = _sweep(store, monkeypatch, io.StringIO())
    assert [line for line in err.splitlines() if line.startswith("job ")] == [
        "job 1/2: tiny_a x fake_a: already in the store",
        "job 2/2: tiny_b x fake_a: failed before, kept (--retry-failed reruns it)",
    ]


def test_a_sweep_on_a_terminal_draws_bars(tmp_path, monkeypatch, torch_threads):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    tty = Tty()
    summary, err = _sweep(Store(tmp_path), monkeypatch, tty)
    assert len(summary.ran) == 2 and not summary.failed
    assert "\r" in err and "job 1/2" not in err  # tqdm redraws in place; no plain lines
    assert re.search(r"jobs: 100%\|[^|]*\| 2/2", err), err[-400:]


def test_no_progress_prints_nothing(tmp_path, capsys, torch_threads):
    run_sweep(
        jobs_for(["tiny_a"], ["fake_a"]), Store(tmp_path), env=fakes.environment(), progress=False
    )
    assert capsys.readouterr().err == ""


def test_a_multi_condition_job_counts_its_images_across_conditions(torch_threads):
    """ImageNet-C style: the probe loop reads one condition after another; the job's running count
    is one number over all conditions, so equal-sized conditions (2 images each on mini data) add
    up instead of looking like one pass."""
    import numpy as np

    from repro.datasets.base import ArraySource
    from repro.measurements.loop import run

    class Parts:
        name = "multi"

        def __init__(self) -> None:
            rng = np.random.default_rng(0)
            self.parts = {
                c: ArraySource(
                    c,
                    rng.integers(0, 256, (n, 3, 8, 8), dtype=np.uint8),
                    np.zeros(n, int),
                    [f"{c}{i}.png" for i in range(n)],
                )
                for c, n in [("a/1", 2), ("a/2", 2), ("b/1", 3)]
            }

    seen: list[int] = []
    result = run(
        "imagenet_c", fakes.make_model("tiny_a"), Parts(), batch_size=2, progress=seen.append
    )
    assert seen == [2, 4, 6, 7]  # batches of 2: a/1 (2), a/2 (2), b/1 (2 + 1)
    assert [(c.condition, c.n) for c in result.conditions] == [("a/1", 2), ("a/2", 2), ("b/1", 3)]
    out = io.StringIO()
    lines = progress.Lines(1, stream=out, clock=Clock())
    report = lines.start("m x multi")
    for n in seen:
        report(n)
    lines.done("m x multi", "measured")
    assert out.getvalue() == "job 1/1: m x multi: measured (7 images, 0.0 s)\n"

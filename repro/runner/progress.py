"""Progress of a sweep, in the form that suits where it goes.

- On a terminal: two bars (tqdm), the jobs and the images of the current job.
- Anywhere else (a pipe, a file, nox's or CI's log; or ``CI`` set, or ``TERM=dumb``): plain
  lines, one per finished job and one every ``LINE_EVERY_IMAGES`` images of a long job, with no
  carriage return and no escape sequence, so that a log reads line by line::

      job 3/12: tiny_random_a x imagenet_c: 10,000 images so far (412 img/s)
      job 3/12: tiny_random_a x imagenet_c: measured (19,000 images, 46.1 s)
      job 4/12: tiny_random_b x imagenet: already in the store

``--no-progress`` prints neither. Both go to standard error, as the warnings do; the results
(standard output) are the same in every mode.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from tqdm.auto import tqdm

LINE_EVERY_IMAGES = 10_000  # a "so far" line every this many images of one job (lines mode)


def write_line(text: str, stream: TextIO | None = None) -> None:
    """``text`` and its newline in one write, flushed (``stream``: standard error by default).

    The workers of ``measure --workers N`` share one standard error. ``print`` writes the text and
    the newline in two calls, each its own system call on the write-through standard error, so two
    workers' lines could interleave (``[w0] ...[w1] ...`` on one line, then an empty one); one write
    of a line to a pipe (at most ``PIPE_BUF``, 4096 bytes) is atomic.
    """
    out = sys.stderr if stream is None else stream
    out.write(text + "\n")
    out.flush()


def choose_mode(stream: Any = None, environ: Mapping[str, str] | None = None) -> str:
    """``"bars"`` on a terminal outside CI, ``"lines"`` otherwise.

    Bars when ``stream`` (default: standard error) is a terminal and the environment is not CI's
    (``CI`` unset, ``TERM`` not ``dumb``).
    """
    stream = sys.stderr if stream is None else stream
    environ = os.environ if environ is None else environ
    if environ.get("CI") or environ.get("TERM") == "dumb":
        return "lines"
    try:
        return "bars" if stream.isatty() else "lines"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return "lines"


class _Counter:
    """The images of the current job from the probes' running counts.

    A smaller count than the last one starts a new pass, e.g. the next ImageNet-C condition.
    """

    def __init__(self) -> None:
        self.total = 0
        self._last = 0

    def add(self, done: int) -> int:
        """The images added by the report ``done``."""
        new = done - self._last if done >= self._last else done
        self._last = done
        self.total += new
        return new


class NoProgress:
    """``--no-progress``: nothing shown."""

    def start(self, job: Any) -> Callable[[int], None] | None:
        return None

    def done(self, job: Any, outcome: str) -> None:
        pass

    def close(self) -> None:
        pass


class Bars:
    """A jobs bar and an images bar (tqdm) on a terminal."""

    def __init__(
        self, total_jobs: int, label: str = "jobs", position: int = 0, stream: TextIO | None = None
    ):
        out = sys.stderr if stream is None else stream
        self.jobs = tqdm(
            total=total_jobs, desc=label, unit="job", position=2 * position, leave=True, file=out
        )
        self.images = tqdm(
            total=None,
            desc="images",
            unit="img",
            position=2 * position + 1,
            leave=False,
            file=out,
            bar_format="{desc}: {n_fmt} images [{elapsed}, {rate_fmt}]",
        )

    def start(self, job: Any) -> Callable[[int], None]:
        self.images.reset(total=None)
        self.images.set_description(str(job))
        counter, bar = _Counter(), self.images

        def report(done: int) -> None:
            bar.update(counter.add(done))

        return report

    def done(self, job: Any, outcome: str) -> None:
        self.jobs.update(1)

    def close(self) -> None:
        self.images.close()
        self.jobs.close()


class Lines:
    """One plain line per finished job, and one every ``every`` images of the current job."""

    def __init__(
        self,
        total_jobs: int,
        label: str = "",
        stream: TextIO | None = None,
        every: int = LINE_EVERY_IMAGES,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total, self.finished = total_jobs, 0
        self.prefix = f"[{label}] " if label else ""
        self.stream, self.every, self.clock = stream, every, clock
        self._counter: _Counter | None = None
        self._started = 0.0

    def _say(self, text: str) -> None:
        write_line(f"{self.prefix}job {self.finished + 1}/{self.total}: {text}", self.stream)

    def start(self, job: Any) -> Callable[[int], None]:
        counter = self._counter = _Counter()
        self._started = self.clock()
        mark = [self.every]

        def report(done: int) -> None:
            counter.add(done)
            if counter.total >= mark[0]:
                seconds = self.clock() - self._started
                rate = f" ({counter.total / seconds:,.0f} img/s)" if seconds > 0 else ""
                self._say(f"{job}: {counter.total:,} images so far{rate}")
                mark[0] = (counter.total // self.every + 1) * self.every

        return report

    def done(self, job: Any, outcome: str) -> None:
        detail = ""
        if self._counter is not None:  # it ran here
            seconds = self.clock() - self._started
            detail = f" ({self._counter.total:,} images, {seconds:.1f} s)"
        self._say(f"{job}: {outcome}{detail}")
        self.finished += 1
        self._counter = None

    def close(self) -> None:
        pass


def progress_for(
    total_jobs: int, enabled: bool, *, worker: int = 0, n_workers: int = 1, mode: str | None = None
) -> NoProgress | Bars | Lines:
    """The progress display of a sweep of ``total_jobs`` jobs.

    ``mode``: ``choose_mode()`` unless given. A worker of several is named in it (``jobs[w1]`` bars,
    ``[w1]`` lines).
    """
    if not enabled:
        return NoProgress()
    mode = mode or choose_mode()
    if mode == "bars":
        return Bars(
            total_jobs, label=f"jobs[w{worker}]" if n_workers > 1 else "jobs", position=worker
        )
    return Lines(total_jobs, label=f"w{worker}" if n_workers > 1 else "")

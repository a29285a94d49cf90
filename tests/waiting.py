"""Waiting on events from a subprocess (a line on its pipe, its exit), never on a sleep or on a
time budget that a loaded machine could exceed.

``HANG_GUARD_S`` bounds each wait only so that a broken program fails its test instead of
hanging the whole run; a working program never comes near it, however loaded the machine (the
events waited for take seconds).
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
from typing import IO

HANG_GUARD_S = float(
    os.environ.get("REPRO_TEST_HANG_GUARD_S", "1800")
)  # shorter to find a hang sooner


class LineReader:
    """The lines of a text stream (a subprocess's pipe), read by a thread as they come."""

    def __init__(self, stream: IO[str], proc: subprocess.Popen | None = None):
        self.proc = (
            proc  # the writer, named with where it is blocked when the hang guard ends a wait
        )
        self.lines: list[str] = []  # every line read so far
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._ended = False
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def _next(self, waiting_for: str) -> str | None:
        try:
            line = self._queue.get(timeout=HANG_GUARD_S)
        except queue.Empty:
            where = f" ({_where(self.proc.pid)})" if self.proc is not None else ""
            raise AssertionError(
                f"nothing for {HANG_GUARD_S:.0f} s (the hang guard) while waiting for "
                f"{waiting_for}{where}; so far:\n{self.text()}"
            ) from None
        if line is None:
            self._ended = True
        else:
            self.lines.append(line)
        return line

    def wait_for(self, pattern: str, count: int = 1) -> list[str]:
        """Block until ``count`` lines matching ``pattern`` (``re.search``) have been read and
        return them; an AssertionError with everything read when the stream ends first
        (the process exited)."""
        rx = re.compile(pattern)
        found = [line for line in self.lines if rx.search(line)]
        while len(found) < count:
            if self._ended or self._next(f"{count} line(s) matching {pattern!r}") is None:
                raise AssertionError(
                    f"the stream ended before {count} line(s) matching {pattern!r}"
                    f"{self._exit_status()}:\n{self.text()}"
                )
            if rx.search(self.lines[-1]):
                found.append(self.lines[-1])
        return found

    def _exit_status(self) -> str:
        """How the writer ended, for a message: a signal it did not send itself (SIGKILL from the
        kernel's OOM killer, SIGTERM from a broad ``pkill``) reads
        differently from an error exit."""
        if self.proc is None:
            return ""
        try:
            code = self.proc.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            return f" (pid {self.proc.pid} closed it but still runs: {_where(self.proc.pid)})"
        if code < 0:
            return f" (pid {self.proc.pid} was killed by {signal.Signals(-code).name})"
        return f" (pid {self.proc.pid} exited with status {code})"

    def rest(self) -> str:
        """Everything, once the stream has ended (call after the process exited)."""
        while not self._ended:
            self._next("the end of the stream")
        return self.text()

    def text(self) -> str:
        return "".join(self.lines)


def wait_exit(proc: subprocess.Popen, output: LineReader | None = None) -> int:
    """The exit status of ``proc``; past the hang guard an AssertionError with what ``output`` read
    and where each of the process's threads is blocked (``/proc``)."""
    try:
        return proc.wait(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"pid {proc.pid} did not exit within {HANG_GUARD_S:.0f} s (the hang guard); "
            f"{_where(proc.pid)}; its output:\n{output.text() if output else '(not read)'}"
        ) from None


def _where(pid: int) -> str:
    """State and kernel wait channel of each thread of ``pid`` (Linux), for a hang's message."""
    out = []
    try:
        for tid in sorted(os.listdir(f"/proc/{pid}/task")):
            base = f"/proc/{pid}/task/{tid}"
            with open(f"{base}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            with open(f"{base}/wchan") as fh:
                wchan = fh.read().strip()
            with open(f"{base}/comm") as fh:
                comm = fh.read().strip()
            out.append(f"thread {tid} ({comm}) state {state} in {wchan or '-'}")
    except OSError as exc:
        out.append(f"/proc unreadable ({exc})")
    return "; ".join(out)

"""What the command line says after Ctrl-C or SIGTERM: nothing finished is lost; how to resume.

SIGTERM (a CI job's timeout, ``kill``) is handled as SIGINT is: ``terminate_as_interrupt`` makes it
raise ``Terminated`` (a ``KeyboardInterrupt``) in the main thread, so every path that stops cleanly
on Ctrl-C (a running job is not recorded, locks are released, ``measure --workers`` stops and waits
for its workers) does the same on SIGTERM; the command then exits 143 (128 + SIGTERM) instead of
130.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import threading
from collections.abc import Iterator, Sequence

EXIT_SIGINT, EXIT_SIGTERM = 130, 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM received: stop as on Ctrl-C."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises ``Terminated`` while the block runs; the previous handler is restored after.

    Main thread only: a signal handler can only be installed there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_status(exc: KeyboardInterrupt) -> int:
    """130 after Ctrl-C, 143 after SIGTERM."""
    return EXIT_SIGTERM if isinstance(exc, Terminated) else EXIT_SIGINT


def interrupted_message(argv: Sequence[str], terminated: bool = False) -> str:
    """One line: what is kept and the command that resumes.

    Finished jobs and verified files are skipped."""
    command = "python -m repro " + " ".join(shlex.quote(a) for a in argv)
    what = "terminated (SIGTERM)" if terminated else "interrupted"
    return (
        f"{what}: everything finished so far is kept (stored jobs, verified files); "
        f"re-run `{command.strip()}` to resume"
    )

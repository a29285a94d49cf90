"""What the command line says after Ctrl-C: nothing finished is lost, and how to resume."""

from __future__ import annotations

import shlex
from collections.abc import Sequence


def interrupted_message(argv: Sequence[str]) -> str:
    """One line: what is kept and the command that resumes (finished jobs and verified files are
    skipped)."""
    command = "python -m repro " + " ".join(shlex.quote(a) for a in argv)
    return (
        f"interrupted: everything finished so far is kept (stored jobs, verified files); "
        f"re-run `{command.strip()}` to resume"
    )

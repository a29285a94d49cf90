"""Command line: ``python -m repro <command>``.

Each command lives in its own module with ``register(subparsers)``; modules are imported
only to build the parser, and they import torch lazily inside their handlers, so that
``python -m repro models`` or ``claims`` never imports torch. A ``ReproError`` is printed
as one line (``error: ...``) with exit status 2 (the traceback only with ``--debug``), and so is
a command line argparse cannot parse (``UsageError``, with the ``--help`` to read); Ctrl-C and
SIGTERM print how to resume (``repro.cli.interrupt``).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from repro import __version__
from repro.base.allocator import keep_freed_memory
from repro.base.errors import ConfigError, ReproError

# command modules, in the order shown by --help
COMMAND_MODULES = [
    "repro.cli.claims",  # claims: recompute the published claims
    "repro.cli.report",  # report: write REPORT.md
    "repro.cli.data",  # data fetch / make-mini
    "repro.cli.score",  # score <what>: pure scoring of stored decisions/predictions
    "repro.cli.probe",  # probe <name>: run a bias probe on a model
    "repro.cli.models",  # models: the model zoo
    "repro.cli.measure",  # measure: the resumable (model x measurement) runner
    "repro.cli.compare",  # compare: our measurements next to the published tables
    "repro.cli.place",  # place: a model among each study's population, on the study's scale
    "repro.cli.store",  # store import: bring your own measurements
    "repro.cli.reproduce",  # reproduce: measure -> claims -> report
    "repro.cli.config",  # config: the repro.toml in use and the resolved settings
    # throughput: images/s per probe in float32 and bfloat16, with agreement
    "repro.cli.throughput",
    "repro.cli.plan",  # plan: projected GPU-hours of the study from measured throughput
]


class UsageError(ConfigError):
    """A command line that does not parse: an unknown option, a missing or malformed value."""


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line instead of the usage block.

    An error is a ``UsageError``, printed by ``main`` like every other user error, with the
    command's ``--help`` as the hint. The subcommand parsers inherit the class (``add_subparsers``
    uses ``type(self)``)."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


#: the longest error line printed: a message quoting a multi-MB key or value keeps its start and end
MAX_MESSAGE = 1000


def one_line(exc: BaseException | str) -> str:
    """``error: <message>`` on one line, at most ``MAX_MESSAGE`` characters.

    Whitespace, newlines included, is collapsed; a longer message keeps its start and its end (the
    hint)."""
    text = "error: " + " ".join(str(exc).split())
    if len(text) <= MAX_MESSAGE:
        return text
    head, tail = MAX_MESSAGE // 2, MAX_MESSAGE // 2 - 60
    return f"{text[:head]} [... {len(text) - head - tail:,} characters left out ...] {text[-tail:]}"


def _os_error(exc: OSError) -> str:
    path = exc.filename if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
    return (
        f"{path}: {exc.strerror or exc} (check the path, that its folders are folders, and the "
        "permissions)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m repro", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"repro {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the full traceback of an error (default: one line, exit status 2)",
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    for name in COMMAND_MODULES:  # a missing command module is an error, never skipped
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    keep_freed_memory()  # NumPy's and torch's large temporaries reused, not mapped afresh
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        if "--debug" in argv:
            raise
        print(one_line(exc), file=sys.stderr)
        return 2
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from repro.cli.interrupt import terminate_as_interrupt

    try:
        from repro.base.settings import activated, load
        from repro.cli.common import check_config

        # repro.toml read once, for the whole command (settings.current()); SIGTERM (a CI
        # timeout) stops the command as Ctrl-C does
        with terminate_as_interrupt(), activated(load()):
            check_config()
            return int(args.handler(args) or 0)
    except ReproError as exc:
        if args.debug:
            raise
        print(one_line(exc), file=sys.stderr)
        return 2
    except OSError as exc:
        # a file the user named that the system refused (an output path under a file, a full disk,
        # no permission): one line naming it; an OSError with no file is a bug, and shown as one
        if args.debug or not exc.filename:
            raise
        print(one_line(_os_error(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (repro.cli.interrupt.Terminated)
        if args.debug:
            raise
        from repro.cli.interrupt import Terminated, exit_status, interrupted_message

        if getattr(
            args, "worker", None
        ):  # a worker of `measure --workers N`: its parent says how to resume
            return exit_status(exc)
        print(interrupted_message(argv, isinstance(exc, Terminated)), file=sys.stderr)
        return exit_status(exc)
    except BrokenPipeError:
        return 0

"""Helper for command groups whose subcommands live in several modules."""

from __future__ import annotations

import argparse
import importlib

from repro.cli import UsageError


def register_group(subparsers, name: str, help: str, modules: list[str]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help, description=help)
    sub = parser.add_subparsers(dest=f"{name}_command", metavar="<what>")
    for mod in modules:  # a missing subcommand module is an error, never skipped
        importlib.import_module(mod).register(sub)
    parser.set_defaults(handler=lambda args: _missing(parser, sub))
    return parser


def _missing(parser: argparse.ArgumentParser, sub: argparse._SubParsersAction) -> int:
    """The group named without a subcommand: one error line naming the choices."""
    raise UsageError(
        f"{parser.prog}: name what to do, one of {', '.join(sub.choices)} (see {parser.prog} --help)"
    )

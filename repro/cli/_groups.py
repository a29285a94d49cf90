"""Helper for command groups whose subcommands live in several modules."""

from __future__ import annotations

import argparse
import importlib


def register_group(subparsers, name: str, help: str, modules: list[str]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help, description=help)
    sub = parser.add_subparsers(dest=f"{name}_command", metavar="<what>")
    for mod in modules:
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name == mod:
                continue
            raise
        module.register(sub)
    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])
    return parser

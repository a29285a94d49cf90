"""Argument helpers shared by the commands (parsing only)."""

from __future__ import annotations

import argparse


def split_names(values: list[str] | None) -> list[str]:
    """``--models a,b c`` -> ``[a, b, c]``."""
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def add_study_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--study", nargs="+", metavar="NAME",
                        help="studies (comma or space separated; default: every discovered study, "
                             "see REPRO_STUDY_PATH)")

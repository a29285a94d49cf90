"""Helpers shared by the commands: argument parsing, and the config check run before any command."""

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


def check_config() -> None:
    """The whole repro.toml checked before a command runs, so that a config mistake is one error
    line for every command (issue 11): the base tables and keys (``load_config``), the dataset
    names of ``[datasets]`` (``repro.datasets.roots``; imported only when the file has that table:
    it imports numpy, which listing models must not). ``[models]`` is checked by the zoo when read."""
    from repro.base.settings import load_config

    config = load_config()
    if "datasets" in config:
        from repro.datasets.roots import check_dataset_keys

        check_dataset_keys(config)

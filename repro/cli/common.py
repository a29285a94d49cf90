"""Helpers shared by the commands: argument parsing, and the config check run before any command."""

from __future__ import annotations

import argparse


def split_names(values: list[str] | None) -> list[str]:
    """``--models a,b c`` -> ``[a, b, c]``; the option left out -> ``[]`` (the default). An option
    given with no name at all (``--study ""``, ``--models ,,``) is a ConfigError: it would
    otherwise silently mean every study or model."""
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    if values is not None and not out:
        from repro.base.errors import ConfigError

        raise ConfigError(f"no name given ({' '.join(repr(v) for v in values)[:80]}); expected comma or space "
                          "separated names, or leave the option out for the default")
    return out


#: the largest batch a command accepts (images per forward pass; 16,384 224x224 float32 images are 9.9 GB)
MAX_BATCH = 16_384


def int_range(low: int, high: int | None = None):
    """An argparse ``type``: an integer in ``low..high``, else the one-line usage error naming the
    range (``repro.cli.OneLineParser``)."""

    def parse(text: str) -> int:
        span = f"{low}..{high}" if high is not None else f">= {low}"
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {value}")
        return value

    parse.__name__ = "integer"  # argparse names the type in some messages
    return parse


def add_study_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--study", nargs="+", metavar="NAME",
                        help="studies (comma or space separated; default: every discovered study, "
                             "see REPRO_STUDY_PATH)")


def check_config() -> None:
    """The whole repro.toml checked before a command runs, so that a config mistake is one error
    line for every command (issue 11): the base tables and keys (``load_config``), the dataset
    names of ``[datasets]`` (``repro.datasets.roots``; imported only when the file has that table:
    it imports numpy, which listing models must not), and the ``[models]`` table (parsed as the zoo
    parses it, no torch: a bad model entry, or a ``pickle_globals`` outside the allowlist, is an
    error for every command, not only for those that load a model)."""
    from repro.base.settings import load_config

    config = load_config()
    if "datasets" in config:
        from repro.datasets.roots import check_dataset_keys

        check_dataset_keys(config)
    if "models" in config:
        from repro.zoo.specs import registry

        registry()

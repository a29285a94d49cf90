"""Helpers shared by the commands: argument parsing, and the config check run before any command."""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from repro.base.config_check import (
    MAX_TIMEOUT_MIN as MAX_TIMEOUT_MIN,  # the longest --timeout-min (30 days)
)
from repro.base.errors import ConfigError
from repro.cli.paths import output_dir, output_file

if TYPE_CHECKING:
    from repro.base.config_check import Settings


def split_names(values: list[str] | None) -> list[str]:
    """``--models a,b c`` -> ``[a, b, c]``; the option left out -> ``[]`` (the default).

    An option given with no name at all (``--study ""``, ``--models ,,``) is a ConfigError: it would
    otherwise silently mean every study or model."""
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    if values is not None and not out:
        raise ConfigError(
            f"no name given ({' '.join(repr(v) for v in values)[:80]}); expected comma or space "
            "separated names, or leave the option out for the default"
        )
    return out


#: the largest batch a command accepts (images per forward pass; 16,384 224x224 float32 images are
#: 9.9 GB)
MAX_BATCH = 16_384
#: the largest seed a command takes (the noise generators take 64-bit seeds)
MAX_SEED = 2**64 - 1
#: the largest ``--limit`` of images: more than every dataset holds (ImageNet-C: 3.75 million)
MAX_IMAGES = 100_000_000
#: the largest count ``plan`` takes (devices, models, CPU workers): a larger one is a typo, not a
#: plan
MAX_COUNT = 1_000_000
#: the largest SLURM request per job ``measure`` takes (CPUs, GB of memory, GPUs): a larger one is
#: a typo; what the partition can hold is checked against it (``repro.runner.slurm_resources``)
MAX_SLURM_CPUS, MAX_SLURM_MEM_GB, MAX_SLURM_GPUS = 100_000, 1_000_000.0, 1_000


def int_range(low: int, high: int | None = None):
    """An argparse ``type``: an integer in ``low..high``.

    Anything else is the one-line usage error naming the range (``repro.cli.OneLineParser``)."""

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


def float_range(low: float, high: float):
    """An argparse ``type``: a finite number in ``low..high``.

    Anything else is the one-line usage error naming the range (``repro.cli.OneLineParser``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number {low:g}..{high:g}, got {text!r}"
            ) from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a number {low:g}..{high:g}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def command(sub, name: str, help: str, doc: str | None) -> argparse.ArgumentParser:
    """A subcommand's parser, with its line in the command list and its own description.

    ``help`` is its line in ``python -m repro --help``, ``doc`` (its module's docstring) the
    description its own ``--help`` starts with."""
    return sub.add_parser(name, help=help, description=doc)


def add_device_option(
    parser: argparse.ArgumentParser,
    help: str,
    default: str | None = None,
) -> None:
    """``--device``: a device name (``device_name`` checks it)."""
    parser.add_argument("--device", type=device_name, default=default, help=help)


def add_model_file_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--model`` (a zoo name or a model file), ``--allow-torchscript`` and ``--weights-dir``.

    For the commands that load one model (``repro.zoo.load_model_file`` reads them)."""
    parser.add_argument(
        "--model",
        required=True,
        metavar="NAME_OR_PATH",
        help="a zoo name (python -m repro models) or a ResNet-50 state dict file",
    )
    parser.add_argument(
        "--allow-torchscript",
        action="store_true",
        help="accept a TorchScript file as --model: TorchScript is code that runs on load, so use "
        "this only for a file you made yourself (other model files are read as data only)",
    )
    parser.add_argument(
        "--weights-dir", default=None, help="weights folder for zoo models (default: settings)"
    )


def add_input_options(parser: argparse.ArgumentParser, **options: str | bool) -> None:
    """Add the options naming what a command reads, worded alike in every command.

    They are added in the order given: ``study=True`` adds ``--study``; ``data_dir=HELP`` adds
    ``--data-dir`` (the published data directory, resolved by ``repro.base.settings``) and
    ``store=HELP`` adds ``--store`` (the measurement store, ``repro.base.settings.store_dir``),
    each HELP saying what this command reads there."""
    for name, help in options.items():
        if name == "study":
            parser.add_argument(
                "--study",
                nargs="+",
                metavar="NAME",
                help="studies (comma or space separated; default: every discovered study, "
                "see REPRO_STUDY_PATH)",
            )
        elif name in ("data_dir", "store"):
            parser.add_argument("--" + name.replace("_", "-"), help=str(help))
        else:
            raise TypeError(f"add_input_options: unknown option {name!r}")


def add_seed_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--seed``: an integer 0..``MAX_SEED``, default 0; ``help`` says what it seeds."""
    kind = int_range(0, MAX_SEED)
    parser.add_argument("--seed", type=kind, default=0, help=f"{help} (default 0)")


def reject_options(given: dict[str, object], mode: str, why: str) -> None:
    """A ConfigError for the first option of ``given`` ({flag: its value}) that was given.

    It says the option ``has no meaning with {mode} ({why})``."""
    for flag, value in given.items():
        if value:
            raise ConfigError(f"{flag}: has no meaning with {mode} ({why})")


def add_wide_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wide",
        action="store_true",
        help="the full claims table (every column, one line per claim, the explanations "
        "unwrapped) instead of the one fitted to the terminal (COLUMNS, else 100 columns)",
    )


def check_config(settings: Settings | None = None) -> None:
    """The whole repro.toml checked before a command runs.

    So a config mistake is one error line for every command: the base tables and keys
    (``repro.base.settings.load``), the dataset names of ``[datasets]`` (``repro.datasets.roots``;
    imported only when the file has that table: it imports numpy, which listing models must not),
    and the ``[models]`` table (parsed as the zoo parses it, no torch: a bad model entry, or a
    ``pickle_globals`` outside the allowlist, is an error for every command, not only for those that
    load a model), and the externally known values (``[models.NAME.external]``, ``[paths]
    external``: ``repro.zoo.external``)."""
    from repro.base.settings import current

    settings = settings if settings is not None else current()
    if settings.datasets:
        from repro.datasets.roots import check_dataset_keys

        check_dataset_keys(settings)
    if settings.models:
        from repro.zoo.specs import registry

        registry(settings=settings)
    if settings.paths.external or any(
        isinstance(v, dict) and "external" in v for v in settings.models.values()
    ):
        from repro.zoo.external import external_values

        external_values(
            settings
        )  # externally known values: model names, numbers, protocol and source


def check_reproduce_args(args: argparse.Namespace) -> None:
    """``reproduce``'s arguments checked before it measures.

    The output paths (the report and its figures folder, and, when it measures, the store and the
    mini work folder) and the model names (a misspelt one would otherwise be a failed job, with the
    mini run's exit status 0)."""
    if args.models and not args.published_only:
        from repro.zoo import get_spec

        for name in split_names(args.models):
            if not name.startswith("file:"):
                get_spec(name)
    output_file(args.out, "--out")
    output_dir(Path(args.out).parent / "report_assets", "--out (its figures folder)")
    if not args.published_only:
        if args.store:
            output_dir(args.store, "--store")
        output_dir(args.work_dir, "--work-dir")


#: the device names a command takes (``repro.base.device.resolve_device`` checks that CUDA is there)
DEVICE_NAMES = "cpu, cuda, cuda:N, mps or auto"


def device_name(text: str) -> str:
    """An argparse ``type`` for ``--device``: ``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto``.

    Anything else is the one-line usage error, so that an empty or misspelt name never means the
    default nor fails deep in torch."""
    if not re.fullmatch(r"auto|cpu|mps|cuda(:[0-9]{1,3})?", text):
        raise argparse.ArgumentTypeError(f"expected {DEVICE_NAMES}, got {text[:80]!r}")
    return text

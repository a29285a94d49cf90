"""Settings: where ``repro.toml`` is found, and what it may contain (its schema).

The config in use is ``REPRO_CONFIG`` when set (a missing file is an error, never silently no
config), else the first ``repro.toml`` found walking up from the working directory, stopping
at the directory that holds ``.git`` (the repository root) or at the filesystem root. Every
table and key is declared in :class:`Settings` (``repro.base.schema``): an unknown table or key
(``[dataset]``, ``[paths] weight``) is a ConfigError naming the key and the file, with the
closest known key. The names below the base layer are checked by the layer that knows them:
``[datasets]`` keys by ``repro.datasets.roots`` (the dataset names), ``[models]`` entries by the
zoo (``repro.zoo.specs``, the model names); the command line checks the whole file before any
command runs (``repro.cli.common.check_config``). A new setting is one field of a table here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import Field, Strict

from repro.base.errors import ConfigError
from repro.base.schema import INTERNAL, Expect, Int, did_you_mean, rule, table

CONFIG_NAME = "repro.toml"
#: the longest per-job time limit of ``measure --executor slurm``: 30 days in minutes
MAX_TIMEOUT_MIN = 30 * 24 * 60
ENV = "REPRO_CONFIG"

__all__ = [
    "CONFIG_NAME",
    "ENV",
    "MAX_TIMEOUT_MIN",
    "Paths",
    "Runner",
    "Settings",
    "Slurm",
    "Studies",
    "did_you_mean",
    "find_config",
    "unknown_key_error",
]


def unknown_key_error(where: str, key: str, known: Iterable[str]) -> ConfigError:
    known = list(known)
    return ConfigError(
        f"{where}: unknown key {key!r}{did_you_mean(key, known)} (known: {', '.join(known)})"
    )


def find_config(start: str | os.PathLike[str] | None = None) -> tuple[Path | None, str]:
    """(the config file in use or None, how it was found)."""
    env = os.environ.get(ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"{ENV}={env}: {'is a folder' if path.is_dir() else 'file not found'} "
                f"(point it at a {CONFIG_NAME}, or unset it)"
            )
        return path, f"${ENV}"
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate, "found from the working directory"
        if (folder / ".git").exists():
            break
    return None, f"no {CONFIG_NAME} from {here} up to the repository root, and ${ENV} not set"


# --------------------------------------------------------------------------- the schema
PathText = Annotated[str, Expect("{where} {key}: expected a path (a string), got {value!r}")]
TABLE = Expect(top="{where}: {key!r} must be a table ([{key}]), got {value!r}")


@table
class Paths:
    """``[paths]``: the published-data directory, the weights and the measurement store."""

    WHERE: ClassVar[str] = "{parent} [paths]"
    data: PathText | None = None
    weights: PathText | None = None
    store: PathText | None = None
    external: PathText | None = None  # a CSV of externally known values (repro.zoo.external)


Names = Annotated[tuple[str, ...], Expect("{where} {key}: expected a list of names, got {value!r}")]


def _positive(what: str) -> Expect:
    return Expect(f"{{where}} {{key}}: expected {what}, got {{value!r}}")


@table
class Slurm:
    """``[runner.slurm]``: the resources of each ``measure --executor slurm`` job.

    The matching ``--slurm-*`` flags override them; each absent one defaults to what the
    partition offers (``repro.runner.slurm_resources``)."""

    WHERE: ClassVar[str] = "{origin} [runner.slurm]"
    partition: (
        Annotated[
            str,
            Expect("{where} {key}: expected a partition name (a string), got {value!r}"),
            rule(bool, "{where} {key}: expected a partition name, got an empty string"),
        ]
        | None
    ) = None
    cpus_per_task: Annotated[Int, Field(ge=1), _positive("a whole number of CPUs >= 1")] | None = (
        None
    )
    mem_gb: (
        Annotated[float, Strict(), Field(gt=0), _positive("a memory size in GB > 0 (a number)")]
        | None
    ) = None
    gpus: Annotated[Int, Field(ge=0), _positive("a whole number of GPUs >= 0")] | None = None
    timeout_min: (
        Annotated[
            Int,
            Field(ge=1, le=MAX_TIMEOUT_MIN),
            _positive(f"a time limit in minutes, 1..{MAX_TIMEOUT_MIN}"),
        ]
        | None
    ) = None


@table
class Runner:
    """``[runner]``: the models and measurements a run takes when the command line names none.

    It also holds (``[runner.slurm]``) the resources of a SLURM job."""

    WHERE: ClassVar[str] = "{parent} [runner]"
    models: Names = ()
    measurements: Names = ()
    slurm: Annotated[
        Slurm,
        Expect(top="{origin}: [runner] slurm must be a table ([runner.slurm]), got {value!r}"),
    ] = Field(default_factory=Slurm)


@table
class Studies:
    """``[studies]``: extra study folders (``repro.base.study.study_paths``)."""

    WHERE: ClassVar[str] = "{parent} [studies]"
    paths: Annotated[
        tuple[str, ...], Expect("{where} {key}: expected a list of folders, got {value!r}")
    ] = ()
    # independent-source declarations (files or folders of *.toml; repro.published.independent)
    independent: Annotated[
        tuple[str, ...],
        Expect("{where} {key}: expected a list of declaration files or folders, got {value!r}"),
    ] = ()


@table
class Settings:
    """A ``repro.toml`` (or none: every default), as read once per command.

    Read by ``repro.base.settings.current``. ``path``: the file (None: there is none); ``found``:
    how it was found."""

    WHERE: ClassVar[str] = "{parent}"
    paths: Annotated[Paths, TABLE] = Field(default_factory=Paths)
    # dataset name -> its root folder (the names are checked by repro.datasets.roots)
    datasets: Annotated[
        dict[str, str],
        Expect(
            "{where} [datasets] {entry}: expected a path (a string), got {item!r}", top=TABLE.top
        ),
    ] = Field(default_factory=dict)
    runner: Annotated[Runner, TABLE] = Field(default_factory=Runner)
    # model name -> a local file, or a table (checked by repro.zoo.specs, which knows the models)
    models: Annotated[dict[str, Any], TABLE] = Field(default_factory=dict)
    studies: Annotated[Studies, TABLE] = Field(default_factory=Studies)
    path: Annotated[Path | None, INTERNAL] = None
    found: Annotated[str, INTERNAL] = ""

    @property
    def origin(self) -> str:
        """How messages name the file (``repro.toml`` when there is none)."""
        return str(self.path) if self.path is not None else CONFIG_NAME

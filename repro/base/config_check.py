"""Settings: where ``repro.toml`` is found, and what it may contain.

The config in use is ``REPRO_CONFIG`` when set (a missing file is an error, never silently no
config), else the first ``repro.toml`` found walking up from the working directory, stopping
at the directory that holds ``.git`` (the repository root) or at the filesystem root. Every
table and key this layer knows is checked: an unknown table or key (``[dataset]``,
``[paths] weight``) is a ConfigError naming the key and the file, with the closest known key.
The names below the base layer are checked by the layer that knows them: ``[datasets]`` keys by
``repro.datasets.roots`` (the dataset names), ``[models]`` entries by the zoo
(``repro.zoo.specs``, the model names); the command line checks the whole file before any
command runs (``repro.cli.common.check_config``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError

CONFIG_NAME = "repro.toml"
ENV = "REPRO_CONFIG"

PATH_KEYS = ("data", "weights", "store", "external")  # external: a CSV of externally known values (repro.zoo.external)
RUNNER_KEYS = ("models", "measurements")
STUDIES_KEYS = ("paths",)  # extra study folders (repro.base.study.study_paths)
# the fields a [models.<name>] table that adds a model may set (repro/zoo/models.toml fields)
MODEL_FIELDS = ("source", "reference", "file", "sha256", "hash_prefix", "revision", "arch", "normalization",
                "remap", "head", "citation", "note", "pickle_globals", "seed", "url", "category",
                "extra", "native")  # extra, native: package sources (repro.zoo.package) and a model's own transform


def did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def unknown_key_error(where: str, key: str, known: Iterable[str]) -> ConfigError:
    known = list(known)
    return ConfigError(f"{where}: unknown key {key!r}{did_you_mean(key, known)} (known: {', '.join(known)})")


def find_config(start: str | os.PathLike[str] | None = None) -> tuple[Path | None, str]:
    """(the config file in use or None, how it was found)."""
    env = os.environ.get(ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_file():
            raise ConfigError(f"{ENV}={env}: {'is a folder' if path.is_dir() else 'file not found'} "
                              f"(point it at a {CONFIG_NAME}, or unset it)")
        return path, f"${ENV}"
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate, "found from the working directory"
        if (folder / ".git").exists():
            break
    return None, f"no {CONFIG_NAME} from {here} up to the repository root, and ${ENV} not set"


def validate(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    """``doc`` unchanged when every table, and every key of the tables this layer knows, is
    known and of the right type; else a ConfigError naming it. ``[datasets]`` keys (dataset
    names) and ``[models]`` entries are left to ``repro.datasets.roots`` and ``repro.zoo.specs``."""
    tables: dict[str, tuple[str, ...] | None] = {"paths": PATH_KEYS, "datasets": None, "runner": RUNNER_KEYS,
                                                 "models": None, "studies": STUDIES_KEYS}
    for table, value in doc.items():
        if table not in tables:
            raise unknown_key_error(str(path), table, tables)
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: {table!r} must be a table ([{table}]), got {value!r}")
        keys = tables[table]
        for key, item in value.items():
            if keys is not None and key not in keys:
                raise unknown_key_error(f"{path} [{table}]", key, keys)
            if table in ("paths", "datasets") and not isinstance(item, str):
                raise ConfigError(f"{path} [{table}] {key}: expected a path (a string), got {item!r}")
            if table == "runner" and not (isinstance(item, list) and all(isinstance(x, str) for x in item)):
                raise ConfigError(f"{path} [runner] {key}: expected a list of names, got {item!r}")
            if table == "studies" and not (isinstance(item, list) and all(isinstance(x, str) for x in item)):
                raise ConfigError(f"{path} [studies] {key}: expected a list of folders, got {item!r}")
    return doc

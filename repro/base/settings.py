"""Paths and per-dataset roots, resolved at call time (never at import).

Order of precedence for every setting: explicit argument (CLI flag) > environment variable
> ``repro.toml`` (the file named by ``REPRO_CONFIG``, else the first one found walking up from
the working directory to the repository root; see ``repro.base.config_check``) > default.

- published data directory: ``--data-dir`` > ``REPRO_DATA_DIR`` > ``../shared/data`` next
  to the checkout, when it exists > ``<user cache>/data`` (filled by ``python -m repro data
  fetch``).
- weights: ``REPRO_WEIGHTS_DIR`` > ``[paths] weights`` > ``<user cache>/weights``.
- dataset roots: ``REPRO_<NAME>_ROOT`` (``REPRO_IMAGENET_VAL_ROOT``) > ``[datasets] <name>``
  (``repro.datasets.roots.dataset_root``: the dataset layer knows the dataset names).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

APP_NAME = "repro"


def checkout_dir() -> Path:
    """The directory holding the ``repro`` package (the repository root in a checkout)."""
    return Path(__file__).resolve().parents[2]


def user_cache_dir() -> Path:
    env = os.environ.get("REPRO_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir as _ucd

    return Path(_ucd(APP_NAME))


def config_path() -> Path:
    """The repro.toml in use (``repro.base.config_check.find_config``), or ``repro.toml`` when none is."""
    from repro.base.config_check import CONFIG_NAME, find_config

    path, _ = find_config()
    return path if path is not None else Path(CONFIG_NAME)


def load_config() -> dict[str, Any]:
    """The parsed and key-checked ``repro.toml`` (empty when there is none)."""
    from repro.base.config_check import find_config, validate

    path, _ = find_config()
    if path is None:
        return {}
    from repro.base.textfile import read_toml

    return validate(read_toml(path, "a repro.toml config"), path)


def shared_data_dir() -> Path:
    """``../shared/data`` beside the checkout (where CI and developers keep the reference data)."""
    return checkout_dir().parent / "shared" / "data"


def data_dir(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """The published-data directory, by the precedence in the module docstring.

    Only resolves the path; whether the files are there is checked by their readers.
    """
    if cli_value:
        return Path(cli_value).expanduser()
    env = os.environ.get("REPRO_DATA_DIR")
    if env:
        return Path(env).expanduser()
    cfg = load_config().get("paths", {}).get("data")
    if cfg:
        return Path(cfg).expanduser()
    shared = shared_data_dir()
    if shared.is_dir():
        return shared
    return user_cache_dir() / "data"


def weights_dir() -> Path:
    env = os.environ.get("REPRO_WEIGHTS_DIR")
    if env:
        return Path(env).expanduser()
    cfg = load_config().get("paths", {}).get("weights")
    if cfg:
        return Path(cfg).expanduser()
    return user_cache_dir() / "weights"


def store_dir(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """Where measurements are stored: ``--store`` > ``REPRO_STORE_DIR`` > ``[paths] store`` > ``runs/store``."""
    if cli_value:
        return Path(cli_value).expanduser()
    env = os.environ.get("REPRO_STORE_DIR")
    if env:
        return Path(env).expanduser()
    cfg = load_config().get("paths", {}).get("store")
    return Path(cfg).expanduser() if cfg else Path("runs") / "store"

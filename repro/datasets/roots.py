"""Datasets: where each dataset's root folder is configured, and the check of those settings.

A root comes from ``REPRO_<NAME>_ROOT`` > ``[datasets] <name>`` in repro.toml, with the
``[datasets]`` table checked against the dataset names (``repro.datasets.specs.SPECS``): a
misspelt name (``imagenet_vall``) is a ConfigError naming the key and the file, with the
closest known name, never a dataset silently left unconfigured. The base layer
(``repro.base.config_check``) checks the rest of the file; it does not know the dataset names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro.base.config_check import unknown_key_error
from repro.base.settings import current, data_dir, store_dir, weights_dir
from repro.datasets.specs import SPECS

if TYPE_CHECKING:
    from repro.base.config_check import Settings


def check_dataset_keys(settings: Settings | None = None) -> dict[str, str]:
    """The ``[datasets]`` table of ``settings``, every key checked to be a dataset name.

    ``settings`` defaults to the command's."""
    settings = settings if settings is not None else current()
    for key in settings.datasets:
        if key not in SPECS:
            raise unknown_key_error(f"{settings.origin} [datasets]", key, SPECS)
    return settings.datasets


def dataset_root(name: str, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The root folder of dataset ``name`` (e.g. ``imagenet_val``), or None.

    ``REPRO_<NAME>_ROOT``, else ``[datasets] <name>`` of repro.toml, else -- for a dataset that
    lies in the data directory (``spec.data_folder``, e.g. ``graysplit``) and when the caller
    passes that directory -- ``<data_dir>/<data_folder>`` if it exists; else None. The data
    directory is never looked up here: whoever resolved it passes it down."""
    env = os.environ.get(f"REPRO_{name.upper().replace('-', '_')}_ROOT")
    if env:
        return Path(env).expanduser()
    cfg = check_dataset_keys().get(name)
    if cfg:
        return Path(cfg).expanduser()
    spec = SPECS[name] if name in SPECS else None
    if data_dir is not None and spec is not None and spec.data_folder:
        path = Path(data_dir).expanduser() / spec.data_folder
        return path if path.is_dir() else None
    return None


def _origin(env: str, configured: Any) -> str:
    if os.environ.get(env):
        return f"${env}"
    if configured:
        return "repro.toml"
    return "default"


def resolved_settings() -> dict[str, Any]:
    """The config in use and every resolved setting with where it came from.

    The config is given by its path and how it was found; each setting's source is ``$VAR``,
    ``repro.toml`` or ``default``: data dir, weights dir, store, each dataset root
    (``python -m repro config``)."""
    settings = current()
    data = data_dir()
    datasets = {}
    for name in SPECS:
        root = dataset_root(name, data)
        origin = _origin(f"REPRO_{name.upper()}_ROOT", settings.datasets.get(name))
        if root is not None and origin == "default":
            origin = "data directory"
        datasets[name] = {
            "root": str(root) if root else None,
            "from": origin if root else "not configured",
        }
    return {
        "config": str(settings.path) if settings.path else None,
        "config_found": settings.found,
        "data_dir": {"path": str(data), "from": _origin("REPRO_DATA_DIR", settings.paths.data)},
        "weights_dir": {
            "path": str(weights_dir()),
            "from": _origin("REPRO_WEIGHTS_DIR", settings.paths.weights),
        },
        "store": {
            "path": str(store_dir()),
            "from": _origin("REPRO_STORE_DIR", settings.paths.store),
        },
        "datasets": datasets,
    }

"""The settings of a command, and the paths and per-dataset roots they resolve.

They are resolved at call time, never at import.

``repro.toml`` is read once per command: ``python -m repro`` loads it (``load``) before the
command runs, checks it whole and makes it the command's settings (``activated``); everything
below reads that one object (``current``). Outside a command (a library call, a test),
``current`` loads the file in use, and the parse of each file content is kept, so it is parsed
once there too.

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
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from repro.base.config_check import Settings, find_config
from repro.base.errors import ConfigError
from repro.base.schema import check
from repro.base.textfile import parse_toml, read_text

if TYPE_CHECKING:
    from repro.base.config_check import Settings

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


def load() -> Settings:
    """The settings of the ``repro.toml`` in use (``repro.base.config_check.find_config``).

    Parsed and checked once per file content (every default when there is no file)."""
    path, how = find_config()
    if path is None:
        return _no_config(how)

    text = read_text(path, WHAT, ConfigError)
    key = (str(path), how, text)
    settings = _PARSED.get(key)
    if settings is None:
        settings = _parse(text, path, how)
        while len(_PARSED) >= 8:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = settings
    return settings


WHAT = "a repro.toml config"
_PARSED: dict[tuple[str, str, str], Settings] = {}


@lru_cache(maxsize=8)
def _no_config(how: str) -> Settings:
    return Settings(found=how)


def _parse(text: str, path: Path, how: str) -> Settings:
    """The one place repro.toml is parsed and checked.

    ``tests/unit/test_settings.py`` counts it."""
    return check(
        Settings, parse_toml(text, path, WHAT), str(path), inject={"path": path, "found": how}
    )


def read_settings(path: str | os.PathLike[str], how: str = "given") -> Settings:
    """The settings of the repro.toml at ``path`` (not cached: ``load`` is the command's)."""
    return _parse(read_text(path, WHAT, ConfigError), Path(path), how)


_ACTIVE: ContextVar[Settings | None] = ContextVar("repro_settings", default=None)


def current() -> Settings:
    """The settings of the command running (``activated``), else those of the repro.toml in use."""
    active = _ACTIVE.get()
    return active if active is not None else load()


@contextmanager
def activated(settings: Settings) -> Iterator[Settings]:
    """Make ``settings`` the command's: ``current()`` returns them until the block ends."""
    token = _ACTIVE.set(settings)
    try:
        yield settings
    finally:
        _ACTIVE.reset(token)


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
    cfg = current().paths.data
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
    cfg = current().paths.weights
    if cfg:
        return Path(cfg).expanduser()
    return user_cache_dir() / "weights"


def store_dir(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """Where measurements are stored.

    ``--store`` > ``REPRO_STORE_DIR`` > ``[paths] store`` > ``runs/store``."""
    if cli_value:
        return Path(cli_value).expanduser()
    env = os.environ.get("REPRO_STORE_DIR")
    if env:
        return Path(env).expanduser()
    cfg = current().paths.store
    return Path(cfg).expanduser() if cfg else Path("runs") / "store"

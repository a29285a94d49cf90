"""Published data reader: model categories, a JSON object ``{category: [model, ...]}``.

An example is Gavrikov & Keuper's r50_categories.json. The categories are validated against the
models of the study's table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from repro.base.errors import DataError
from repro.published.fetch import require_file


def read_categories(
    path: str | os.PathLike[str], known_models: Iterable[str] | None = None
) -> dict[str, list[str]]:
    """Parse ``path``: ``{category: [model, ...]}``.

    Every model must be in ``known_models`` (when given) and in exactly one category.
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(raw, dict):
        raise DataError(
            f"{path}: expected an object {{category: [model names]}}, got {type(raw).__name__}"
        )
    known = set(known_models) if known_models is not None else None
    out: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for category, models in raw.items():
        if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise DataError(f"{path}: category {category!r} must be a list of model names")
        for m in models:
            if known is not None and m not in known:
                raise DataError(
                    f"{path}: category {category!r} names unknown model {m!r} (not a row of the "
                    "study's table)"
                )
            if m in where:
                raise DataError(
                    f"{path}: model {m!r} is listed in both {where[m]!r} and {category!r}"
                )
            where[m] = category
        out[category] = list(models)
    return out


def load_categories(
    relpath: str,
    data_dir: str | os.PathLike[str] | None = None,
    known_models: Iterable[str] | None = None,
    *,
    check_sha256: bool = True,
) -> dict[str, list[str]]:
    """The categories file ``relpath`` of the data directory, sha256-verified against its pin."""
    path = require_file(relpath, data_dir, check_sha256=check_sha256)
    return read_categories(path, known_models)

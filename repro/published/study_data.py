"""Published data of a study: its per-model table and its model categories.

They are read the way its ``study.toml`` says (a pinned file of the data directory, a file of the
study folder, or the study's own loader). The one way the core reads a study's table.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from repro.base.registry import resolve_lazy
from repro.base.settings import data_dir as resolve_data_dir
from repro.base.study import Study
from repro.base.table import ModelTable
from repro.published.categories import load_categories, read_categories
from repro.published.table import load_table, read_table_csv


def study_table(study: Study, data_dir: str | os.PathLike[str] | None = None) -> ModelTable:
    """The study's per-model table (``[table]`` of its study.toml)."""
    root = resolve_data_dir(data_dir)
    if "published" in study.table:
        return load_table(study.table["published"], root)
    if "file" in study.table:
        return read_table_csv(study.folder / study.table["file"])
    table = resolve_lazy(study.table["loader"])(root)  # type: ignore[operator]
    if not isinstance(table, ModelTable):
        raise TypeError(
            f"{study.origin}: [table] loader returned {type(table).__name__}, expected a ModelTable"
        )
    return table


def study_categories(
    study: Study,
    data_dir: str | os.PathLike[str] | None = None,
    known_models: Iterable[str] | None = None,
) -> dict[str, list[str]]:
    """The study's model categories (``[categories]``; empty when it has none)."""
    root = resolve_data_dir(data_dir)
    if "published" in study.categories:
        return load_categories(study.categories["published"], root, known_models)
    if "file" in study.categories:
        return read_categories(study.folder / study.categories["file"], known_models)
    if "loader" in study.categories:
        return resolve_lazy(study.categories["loader"])(root, known_models)  # type: ignore[operator]
    return {}


def study_models(study: Study, data_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """The models the study needs, in order.

    Its ``models`` list, else every model of its categories.
    """
    if study.models is not None:
        return list(study.models)
    return [m for group in study_categories(study, data_dir).values() for m in group]

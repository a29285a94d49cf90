"""Placement: a study's population, per placement column, from its ``[placement]`` declaration.

The declaration is ``"table"`` (the study's table over the population of its analysis
definition, or every row without one) or a study's loader
``(study, data_dir) -> {name: {column: value}}``, read once per process and study."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError
from repro.base.registry import resolve_lazy
from repro.base.study import PlacementColumn, Study

TABLE = "table"


@dataclass(frozen=True)
class Population:
    """The population's values of one column.

    ``values`` maps each member to its value (None: undefined there, e.g. a degenerate fit)."""

    label: str
    values: Mapping[str, float | None]
    source: str  # "table" or the loader's reference


_CACHE: dict[tuple[str, str, str], Mapping[str, Mapping[str, Any]]] = {}


def _rows(
    study: Study, ref: str, data_dir: Path, context: Any = None
) -> Mapping[str, Mapping[str, Any]]:
    key = (str(study.origin), ref, str(data_dir))
    if key not in _CACHE:
        if ref == TABLE:
            ctx = context if context is not None else _published(study, data_dir)
            members = ctx.population
            _CACHE[key] = {m: ctx.table.values[m] for m in members}
        else:
            rows = resolve_lazy(ref)(study, data_dir)  # type: ignore[operator]
            if not isinstance(rows, Mapping) or not all(
                isinstance(r, Mapping) for r in rows.values()
            ):
                raise ConfigError(
                    f"{study.origin}: [placement] population {ref!r} returned "
                    f"{type(rows).__name__}, expected {{name: {{column: value}}}}"
                )
            _CACHE[key] = rows
    return _CACHE[key]


def _published(study: Study, data_dir: Path) -> Any:
    from repro.claims.context import published_context

    return published_context(study, data_dir)


def _number(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def population(
    study: Study, column: PlacementColumn, data_dir: str | os.PathLike[str], *, context: Any = None
) -> Population:
    """The population of ``column`` (its own ``population``, else the study's).

    ``context``: the study's published claim context when the caller has one (the ``table``
    population reuses it)."""
    placement = study.placement
    if placement is None:
        raise ConfigError(f"{study.origin}: study {study.name!r} declares no [placement]")
    ref = column.population or placement.population
    rows = _rows(study, ref, Path(data_dir), context)
    values = {}
    for name, row in rows.items():
        if column.column not in row:
            if ref == TABLE:
                raise ConfigError(
                    f"{study.origin}: [[placement.columns]] {column.column!r} is not a column of "
                    f"the study's table (model {name!r} has no such value)"
                )
            values[name] = None
            continue
        values[name] = _number(row[column.column])
    label = placement.population_label or f"{len(values)} models of {study.name}"
    return Population(label, values, ref)

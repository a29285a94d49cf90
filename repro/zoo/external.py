"""Zoo: values of a model known from outside the suite (a paper, a model card), without counts.

Two ways to give them, both in ``repro.toml``:

- a table per model and column::

      [models.efficientnet_lite0.external]
      "top1_acc/imagenet" = { value = 75.1, protocol = "224 px, crop 0.875, bicubic", source =
      "https://..." }

- a CSV named by ``[paths] external`` (relative to the repro.toml's folder), header
  ``model,column,value,protocol,source`` (or with a sixth field ``unit``), one row per value.

Every value needs its ``protocol`` (how it was measured: crop, resolution, image set) and its
``source`` (where it is published), and it has a unit (``unit = "percent"``, ``"fraction"``,
...): stated, or that of its column (``repro.zoo.external_units``: accuracies in percent, shape
bias a fraction); a unit that does not fit the column, or a value outside its unit's range (a
shape bias of 21 meant as 21%), is an error. An external value has no counts and no record: it is
labelled ``external`` with its protocol wherever it appears (``python -m repro place``, the
report's placement section and scatter plots) and never counts as measured evidence. The
model must be a zoo model (built in, or added by the same repro.toml); the column is checked
by the layer that uses it (``repro.placement``). A malformed entry is a ConfigError naming the
file, the row or key, and what was expected.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field

from repro.base.config_check import did_you_mean
from repro.base.errors import ConfigError
from repro.base.schema import Expect, check, invalid, table
from repro.base.settings import current
from repro.base.textfile import read_text
from repro.zoo.external_units import UNITS, check_unit
from repro.zoo.specs import registry

if TYPE_CHECKING:
    from repro.base.config_check import Settings

EXTERNAL = "external"  # the label of these values, wherever they appear
CSV_FIELDS = ("model", "column", "value", "protocol", "source")
CSV_UNIT = "unit"  # an optional sixth CSV field
VALUE_FIELDS = ("value", "protocol", "source")


@dataclass(frozen=True)
class ExternalValue:
    model: str
    column: str
    value: float
    protocol: str
    source: str
    origin: str  # the file (and row or key) it was read from
    unit: str = ""  # repro.zoo.external_units.UNITS: stated, or the column's

    def label(self) -> str:
        """``external (PROTOCOL)``: how the value is shown next to a measured one."""
        return f"{EXTERNAL} ({self.protocol})"


def _number(value: Any) -> float:
    """A number, or the text of one (a CSV cell); finite."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise invalid("{where}: field 'value' must be a number, got {given!r}", given=value)
    try:
        v = float(value)
    except ValueError:
        raise invalid(
            "{where}: field 'value' must be a number, got {given!r}", given=value
        ) from None
    if not math.isfinite(v):
        raise invalid("{where}: field 'value' must be a finite number, got {given!r}", given=value)
    return v


def _described(what: str) -> Any:
    """A non-empty string (surrounding blanks dropped); the message says what it is for."""
    text = "{where}: field {key!r} must be a non-empty string: " + what
    return Annotated[
        str,
        BeforeValidator(lambda v: v.strip() if isinstance(v, str) else v),
        Field(min_length=1),
        Expect(text),
    ]


@table
class ExternalEntry:
    """One externally known value: ``{ value = ..., protocol = "...", source = "..." }``.

    A ``[models.NAME.external]`` key, or a row of the ``[paths] external`` CSV."""

    INVALID: ClassVar[str] = (
        '{where}: expected a table {{ value = ..., protocol = "...", source = "..." }}, '
        "got {value!r}"
    )
    UNKNOWN: ClassVar[str] = "{where}: unknown field(s) {unknown} (known: {known})"
    value: Annotated[
        float,
        BeforeValidator(_number),
        Expect(missing="{where}: field 'value' must be a number, got None"),
    ]
    protocol: _described("how the value was measured (crop, resolution, image set)")
    source: _described("where it is published (a URL or a citation)")
    unit: _described(f"one of {', '.join(UNITS)}") | None = None


def _value(model: str, column: str, raw: object, where: str, origin: str) -> ExternalValue:
    if isinstance(raw, dict) and not column.strip():
        raise ConfigError(f"{where}: the column name is empty")
    entry = check(ExternalEntry, raw, origin, where=where)
    unit, problem = check_unit(column, entry.value, entry.unit)
    if unit is None:
        raise ConfigError(f"{where}: {problem}")
    return ExternalValue(model, column, entry.value, entry.protocol, entry.source, where, unit)


def _known_models(settings: Settings) -> set[str]:
    return set(registry(settings=settings))


def _check_model(model: str, where: str, known: set[str]) -> None:
    if model not in known:
        raise ConfigError(
            f"{where}: unknown model {model!r}{did_you_mean(model, known)} (external values are "
            "for zoo models: `python -m repro models`, or a model added in repro.toml)"
        )


def from_tables(models: dict, origin: str, known: set[str]) -> list[ExternalValue]:
    """The ``[models.NAME.external]`` tables of a parsed repro.toml ``[models]`` table."""
    out = []
    for model, entry in models.items():
        if not isinstance(entry, dict) or "external" not in entry:
            continue
        where = f"{origin} [models.{model}.external]"
        table = entry["external"]
        if not isinstance(table, dict) or not table:
            raise ConfigError(
                f'{where}: expected a table of columns, e.g. "top1_acc/imagenet" = '
                '{ value = 75.1, protocol = "224 px, crop 0.875", source = "https://..." }'
            )
        _check_model(model, where, known)
        out += [
            _value(model, column, raw, f"{where} {column!r}", origin)
            for column, raw in table.items()
        ]
    return out


def from_csv(path: Path, known: set[str]) -> list[ExternalValue]:
    """The rows of an external-values CSV (see the module docstring)."""
    text = read_text(path, "an external-values CSV ([paths] external in repro.toml)", ConfigError)
    reader = csv.DictReader(io.StringIO(text))
    header = [f.strip() for f in reader.fieldnames or []]
    if header not in (list(CSV_FIELDS), [*CSV_FIELDS, CSV_UNIT]):
        raise ConfigError(
            f"{path}: header must be {','.join(CSV_FIELDS)} (and optionally ,{CSV_UNIT}), got "
            f"{','.join(reader.fieldnames or [])!r}"
        )
    reader.fieldnames = header
    fields = VALUE_FIELDS + ((CSV_UNIT,) if CSV_UNIT in header else ())
    out = []
    for i, row in enumerate(reader, start=2):
        where = f"{path}:{i}"
        if None in row or any(v is None for v in row.values()):
            raise ConfigError(f"{where}: expected {len(header)} fields ({','.join(header)})")
        model = row["model"].strip()
        _check_model(model, where, known)
        out.append(
            _value(
                model,
                row["column"].strip(),
                {k: row[k] for k in fields if k != CSV_UNIT or row[k].strip()},
                where,
                str(path),
            )
        )
    return out


def external_values(settings: Settings | None = None) -> dict[str, dict[str, ExternalValue]]:
    """``{model: {column: ExternalValue}}`` from ``settings``.

    Default: the command's settings; empty without a repro.toml. The same (model, column) given
    twice is a ConfigError naming both places."""
    settings = settings if settings is not None else current()
    if settings.path is None:
        return {}
    origin = settings.path
    known = _known_models(settings)
    values = from_tables(settings.models, str(origin), known)
    csv_path = settings.paths.external
    if csv_path:
        path = Path(csv_path).expanduser()
        values += from_csv(path if path.is_absolute() else origin.resolve().parent / path, known)
    out: dict[str, dict[str, ExternalValue]] = {}
    for v in values:
        seen = out.setdefault(v.model, {}).get(v.column)
        if seen is not None:
            raise ConfigError(
                f"{v.origin}: {v.model} {v.column!r} is given twice (also {seen.origin}); keep one"
            )
        out[v.model][v.column] = v
    return out

"""Placement: a model's values, each with what it rests on.

``measured``: a current record of the measurement store that is evidence (the full dataset, not
mini, the current measurement version), with its count and 95% interval; ``external``: a value
known from outside (``repro.zoo.external``), with its protocol and source and no count. A
record that is not usable is reported with the reason, never used.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro.base.errors import DataError
from repro.claims.verdict import LABEL_MEASURED as MEASURED  # the evidence vocabulary
from repro.measurements.registry import MEASUREMENTS, get
from repro.store.files import Store
from repro.store.validate import evidence_problem
from repro.zoo.external import EXTERNAL  # never measured evidence


@dataclass(frozen=True)
class Value:
    column: str
    value: float
    kind: str  # measured | external
    interval: tuple[float, float] | None = None
    k: int | None = None
    n: int | None = None
    measurement: str | None = None  # measured: the store measurement
    record: Any = None  # measured: the JobRecord (for a study's interval hook)
    column_value: Any = None  # measured: its ColumnValue
    protocol: str | None = None  # external: how it was measured
    source: str | None = None  # external: where it is published
    unit: str | None = None  # external: its unit (repro.zoo.external_units)

    @property
    def label(self) -> str:
        """``measured`` or ``external (PROTOCOL)``: shown wherever the value is."""
        return MEASURED if self.kind == MEASURED else f"{EXTERNAL} ({self.protocol})"

    def basis(self) -> str:
        """What the value rests on, in words: its count, or its protocol and source."""
        if self.kind == EXTERNAL:
            unit = f"; unit {self.unit}" if self.unit else ""
            return f"{EXTERNAL}: {self.protocol}{unit}; source {self.source}; no count"
        kn = f"{self.k:,}/{self.n:,}, " if self.k is not None and self.n is not None else ""
        return f"{MEASURED}: {kn}`{self.measurement}`"


@dataclass
class ModelValues:
    model: str
    values: dict[str, list[Value]] = field(
        default_factory=dict
    )  # column -> its values (measured first)
    unusable: dict[str, str] = field(
        default_factory=dict
    )  # measurement -> why its record is not used

    def of(self, columns: tuple[str, ...] | list[str]) -> list[Value]:
        return [v for c in columns for v in self.values.get(c, [])]

    def first(self, column: str) -> Value | None:
        got = self.values.get(column, [])
        return got[0] if got else None

    def row(self, *, external: bool = True) -> dict[str, float]:
        """{column: value}: the measured value of each column, else the external one.

        The external value counts only when ``external`` is true."""
        return {
            c: vs[0].value
            for c, vs in self.values.items()
            if vs and (external or vs[0].kind == MEASURED)
        }

    def kinds(self) -> dict[str, str]:
        return {c: vs[0].kind for c, vs in self.values.items() if vs}

    @property
    def empty(self) -> bool:
        return not self.values

    def corrupt(self) -> dict[str, str]:
        return {m: why for m, why in self.unusable.items() if why.startswith("corrupt")}


def usable_record(store: Any, model: str, measurement: str) -> tuple[Any, str | None]:
    """The store's record of (model, measurement) if it is current evidence, else why not.

    (the record, None) when the record is current evidence; (None, why not) otherwise;
    (None, None) when there is no record."""
    try:
        rec = store.read(model, measurement)
    except DataError as exc:
        return None, f"{CORRUPT} record ({exc})"
    if rec is None:
        return None, None
    if measurement not in MEASUREMENTS:
        return None, "a measurement this version of repro does not know"
    if not rec.ok:
        err = rec.error or {}
        return None, f"failed ({err.get('type', '?')}: {err.get('message', '')})"
    try:
        current = get(measurement).version()
    except (ImportError, AttributeError) as exc:
        return None, f"its measurement's code does not import here ({exc})"
    if rec.version != current:
        return None, f"stale (measured with version {rec.version}, current {current}): re-measure"
    problem = evidence_problem(rec.provenance)
    if problem:
        return None, f"not evidence ({problem}): re-measure on the full set"
    return rec, None


CORRUPT = "corrupt"
SUFFIX = ".json"


def _unescape(name: str) -> str:
    """The inverse of the store's file-name escaping (``repro.store.files``)."""
    return name.replace("%2F", "/").replace("%5C", "\\").replace("%00", "\0").replace("%25", "%")


def _stored_measurements(store: Any, model: str) -> list[str]:
    """The measurements of the record files in ``model``'s folder of the store (none is parsed)."""
    folder = store.record_path(model, "x").parent
    if not folder.is_dir():
        return []
    return sorted(
        _unescape(p.name[: -len(SUFFIX)])
        for p in folder.glob(f"*{SUFFIX}")
        if not p.name.startswith(".")
    )


def model_values(
    model: str,
    store_dir: str | os.PathLike[str] | None,
    external: Mapping[str, Mapping[str, Any]] | None = None,
) -> ModelValues:
    """Every value the store (when given) and the external values hold for ``model``.

    Per column the measured value first (the published variant of a quirk column, as the study
    tables hold it), then the external one. Only ``model``'s own records are read; each that is
    not usable (corrupt, failed, stale, not evidence, an unknown measurement) is in ``unusable``."""
    out = ModelValues(model)
    if store_dir is not None and Path(store_dir).is_dir():
        store = Store(store_dir)
        for measurement in _stored_measurements(store, model):
            rec, why = usable_record(store, model, measurement)
            if rec is None:
                if why:
                    out.unusable[measurement] = why
                continue
            for name in dict.fromkeys(c.column for c in rec.columns):
                cv = rec.column(name, "published")
                if cv is None or cv.value is None:
                    continue
                out.values.setdefault(name, []).append(
                    Value(
                        name,
                        float(cv.value),
                        MEASURED,
                        tuple(cv.interval) if cv.interval else None,
                        cv.k,
                        cv.n,
                        measurement,
                        rec,
                        cv,
                    )
                )
    for column, ev in (external or {}).get(model, {}).items():
        out.values.setdefault(column, []).append(
            Value(
                column,
                float(ev.value),
                EXTERNAL,
                protocol=ev.protocol,
                source=ev.source,
                unit=ev.unit or None,
            )
        )
    return out


def store_models(store_dir: str | os.PathLike[str]) -> list[str]:
    """The models the store holds a record file of, sorted by name.

    No record is parsed: a corrupt record of one model never stops the placement of another."""
    root = Path(store_dir)
    if not root.is_dir():
        return []
    return sorted(
        _unescape(d.name)
        for d in root.iterdir()
        if d.is_dir() and not d.name.startswith(".") and any(d.glob(f"*{SUFFIX}"))
    )

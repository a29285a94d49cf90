"""Measurement store, imported: bring your own measurements from a tidy CSV file.

``python -m repro store import TIDY.csv`` reads what ``python -m repro compare --tidy`` writes
(``repro.store.export``) and turns each model x measurement back into a job record, so that a
store exported and imported into an empty store gives the same ``compare``, ``claims --json`` and
report (only the provenance label differs: an imported value is ``imported``, counted as measured
evidence).

Every row is checked before anything is written (``read_tidy``); one bad row refuses the whole
file with one line naming the file, the row and what was expected (a ``DataError``), and
nothing is written:

- a row without the provenance that says whether its record was measured on generated mini
  data or on part of a dataset (``dataset_mini``, ``dataset_partial``: ``true`` or ``false``);
- an unknown model, measurement or column (the caller says which are known);
- counts that are not integers, negative, NaN, or k > n; a value that is not a finite number or
  disagrees with k/n (value = k/n for a condition; k/n or 100 k/n for a column);
- a duplicate row (the same model, measurement, kind, condition and variant twice), rows of one
  job that disagree on its version or provenance, a job already in the target store;
- a job with no count at all (values without counts are not imports: a published or external
  value is not a measurement of this suite).

Rows of a failed job or of another measurement version (``kind = job``: the export's marker of
a record with no current values) carry nothing to import: they are skipped, and said so.
Per-item records (predictions, decisions) are not part of the tidy table: an imported record
has none. Each imported record's provenance keeps the file's name, its sha256 and the rows it
came from (``repro.store.record.IMPORTED_KEY``).
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.base.textfile import decode_utf8, read_bytes
from repro.store.export import PROVENANCE_FIELDS, ROW_FIELDS, TIDY_FIELDS
from repro.store.files import Store
from repro.store.record import IMPORTED_KEY, STATUS_OK, ColumnValue, JobRecord

REQUIRED_FIELDS = (*ROW_FIELDS, "dataset_mini", "dataset_partial")
KINDS = ("condition", "column", "value", "headline", "job")
JOB_FIELDS = ("version", "status", *PROVENANCE_FIELDS)  # the same for every row of one job
REL_TOLERANCE = (
    1e-9  # value vs k/n (the CSV holds repr() floats: the same number, up to the division)
)


@dataclass
class _Job:
    model: str
    measurement: str
    first_row: int
    fields: dict[str, str]
    conditions: list[dict[str, Any]] = field(default_factory=list)
    columns: list[ColumnValue] = field(default_factory=list)
    values: dict[str, float | None] = field(default_factory=dict)
    value: float | None = None
    interval: tuple[float, float] | None = None
    rows: list[int] = field(default_factory=list)
    skipped: str = ""


@dataclass(frozen=True)
class Imported:
    """What ``read_tidy`` found: the records to write and the jobs skipped (with why)."""

    records: list[JobRecord]
    skipped: list[str]
    sha256: str


TIDY_FILE = "the CSV `python -m repro compare --tidy` writes"


def _fail(path: Path, row: int, job: str, problem: str) -> DataError:
    hint = "" if "expected" in problem else f" (expected {TIDY_FILE}; fix or remove the row)"
    return DataError(f"{path}: row {row}{f' ({job})' if job else ''}: {problem}{hint}")


def _number(text: str, what: str) -> float | None:
    if text == "" or text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not math.isfinite(v):
        raise ValueError(f"{what} is {text} (expected a finite number)")
    return v


def _count(text: str, what: str) -> int | None:
    v = _number(text, what)
    if v is None:
        return None
    if not v.is_integer():
        raise ValueError(f"{what} {text!r} is not an integer count")
    if v < 0:
        raise ValueError(f"{what} = {text} is negative (expected a count >= 0)")
    return int(v)


def _flag(text: str, what: str) -> bool:
    t = (text or "").strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise ValueError(
        f"no {what} (expected true or false: the provenance that says whether the record was "
        "measured on generated mini data or on part of its dataset; export it with this "
        "version's `python -m repro compare --tidy`)"
    )


def _interval(row: Mapping[str, str]) -> tuple[float, float] | None:
    lo, hi = (
        _number(row.get("interval_low", ""), "interval_low"),
        _number(row.get("interval_high", ""), "interval_high"),
    )
    if lo is None and hi is None:
        return None
    if lo is None or hi is None or lo > hi:
        raise ValueError(
            f"interval [{row.get('interval_low')!r}, {row.get('interval_high')!r}] is not a pair "
            "low <= high"
        )
    return (lo, hi)


def _agrees(value: float, k: int, n: int, scales: tuple[float, ...]) -> bool:
    return any(math.isclose(value, s * k / n, rel_tol=REL_TOLERANCE, abs_tol=1e-12) for s in scales)


def _provenance(fields: Mapping[str, str]) -> dict[str, Any]:
    prov: dict[str, Any] = {}
    for key in PROVENANCE_FIELDS:
        text = fields.get(key, "")
        if text == "":
            continue
        if key in ("dataset_mini", "dataset_partial"):
            prov[key] = _flag(text, key)
        elif key in ("seed", "dataset_items", "batch_size"):
            prov[key] = int(float(text))
        elif key == "duration_s":
            prov[key] = float(text)
        else:
            prov[key] = text
    return prov


def _add_row(job: _Job, row: Mapping[str, str], line: int) -> None:
    """One row's content into its job (ValueError with the problem)."""
    kind = row["kind"]
    name, variant = row.get("condition", ""), row.get("variant", "") or "standard"
    value = _number(row.get("value", ""), "value")
    k, n = _count(row.get("k", ""), "k"), _count(row.get("n", ""), "n")
    if (k is None) != (n is None):
        raise ValueError(f"k = {row.get('k')!r}, n = {row.get('n')!r}: a count needs both")
    if k is not None and n is not None and k > n:
        raise ValueError(f"k = {k} > n = {n}")
    iv = _interval(row)
    if kind == "condition":
        if not name or k is None or n is None:
            raise ValueError("a condition row needs its condition name and its counts k and n")
        if value is not None and (n == 0 or not _agrees(value, k, n, (1.0,))):
            raise ValueError(f"value {value} disagrees with k/n = {k}/{n}")
        job.conditions.append({"condition": name, **Count(k, n).as_json()})
    elif kind == "column":
        if not name:
            raise ValueError("a column row needs its column name (field condition)")
        if (
            value is not None
            and k is not None
            and n is not None
            and (n == 0 or not _agrees(value, k, n, (1.0, 100.0)))
        ):
            raise ValueError(
                f"value {value} disagrees with k/n = {k}/{n} (expected k/n or 100 k/n)"
            )
        job.columns.append(ColumnValue(name, value, k, n, iv, variant, row.get("note", "") or ""))
    elif kind == "value":
        if not name:
            raise ValueError("a value row needs its name (field condition)")
        job.values[name] = value
    elif kind == "headline":
        job.value, job.interval = value, iv
    job.rows.append(line)


def read_tidy(
    path: str | os.PathLike[str],
    *,
    measurements: Mapping[str, Callable[[str], bool]],
    known_model: Callable[[str], bool],
) -> Imported:
    """The job records of a tidy CSV, every row checked (see the module docstring).

    measurements: {measurement name: is this one of its columns?} of the known measurements
    known_model: is this a model the suite knows (a zoo model)?"""
    path = Path(path)
    raw = read_bytes(path, TIDY_FILE)
    sha = hashlib.sha256(raw).hexdigest()
    text = decode_utf8(raw, path, TIDY_FILE)
    try:
        return _read_rows(path, text, sha, measurements=measurements, known_model=known_model)
    except csv.Error as exc:
        raise DataError(
            f"{path}: malformed CSV ({exc}); expected {TIDY_FILE}, one row per line"
        ) from None


def _read_rows(
    path: Path,
    text: str,
    sha: str,
    *,
    measurements: Mapping[str, Callable[[str], bool]],
    known_model: Callable[[str], bool],
) -> Imported:
    reader = csv.DictReader(text.splitlines())
    header = reader.fieldnames or []
    missing = [f for f in REQUIRED_FIELDS if f not in header]
    if missing:
        raise DataError(
            f"{path}: header lacks field(s) {', '.join(missing)} (expected the columns of "
            f"`python -m repro compare --tidy`: {', '.join(TIDY_FIELDS)})"
        )
    jobs: dict[tuple[str, str], _Job] = {}
    seen: dict[tuple[str, ...], int] = {}
    line = 1
    for line, row in enumerate(reader, start=2):
        if None in row or any(v is None for v in row.values()):
            raise _fail(path, line, "", f"has {len(header)} fields expected, not as many found")
        model, measurement, kind = row["model"], row["measurement"], row["kind"]
        label = f"{model} x {measurement}"
        if not model or not known_model(model):
            raise _fail(
                path,
                line,
                label,
                f"unknown model {model!r} (expected a name of `python -m repro models`)",
            )
        if measurement not in measurements:
            raise _fail(
                path,
                line,
                label,
                f"unknown measurement {measurement!r} (expected one of "
                f"{', '.join(sorted(measurements))})",
            )
        if kind not in KINDS:
            raise _fail(path, line, label, f"kind {kind!r} (expected one of {', '.join(KINDS)})")
        if kind == "column" and not measurements[measurement](row.get("condition", "")):
            raise _fail(
                path,
                line,
                label,
                f"unknown column {row.get('condition')!r} of measurement {measurement!r}",
            )
        key = (model, measurement, kind, row.get("condition", ""), row.get("variant", ""))
        if key in seen:
            raise _fail(
                path,
                line,
                label,
                f"duplicate of row {seen[key]} (the same {kind} "
                f"{row.get('condition', '')!r} {row.get('variant', '')!r})".rstrip(),
            )
        seen[key] = line
        job = jobs.get((model, measurement))
        fields = {f: row.get(f, "") for f in JOB_FIELDS}
        if job is None:
            job = jobs[model, measurement] = _Job(model, measurement, line, fields)
        else:
            differ = [f for f in JOB_FIELDS if fields[f] != job.fields[f]]
            if differ:
                raise _fail(
                    path,
                    line,
                    label,
                    f"disagrees with row {job.first_row} of the same job on "
                    f"{', '.join(differ)} (one job is one record)",
                )
        try:
            for flag in ("dataset_mini", "dataset_partial"):
                _flag(row.get(flag, ""), flag)
            if kind == "job":
                job.skipped = (
                    f"{label}: status {row['status'] or '?'}, version {row['version'] or '?'} "
                    "(a failed job or another measurement version: nothing measured to import)"
                )
            else:
                if row["status"] != STATUS_OK:
                    raise ValueError(f"status {row['status']!r} on a {kind} row (expected ok)")
                _add_row(job, row, line)
        except ValueError as exc:
            raise _fail(path, line, label, str(exc)) from None
    if not jobs:
        raise DataError(
            f"{path}: no rows (expected the CSV `python -m repro compare --tidy` writes)"
        )
    records, skipped = [], []
    for job in jobs.values():
        label = f"{job.model} x {job.measurement}"
        if job.skipped:
            if job.rows:
                raise _fail(
                    path,
                    job.rows[0],
                    label,
                    "has values next to a row that says the job has none (kind job)",
                )
            skipped.append(job.skipped)
            continue
        counted = job.conditions or any(c.k is not None for c in job.columns)
        if not counted:
            raise _fail(
                path,
                job.first_row,
                label,
                "has no count (k, n) at all: values without counts are not "
                "imports (a published or external value is not a measurement)",
            )
        version = job.fields["version"]
        if not version:
            raise _fail(
                path,
                job.first_row,
                label,
                "has no version (the measurement version it was measured with)",
            )
        prov = _provenance(job.fields)
        prov[IMPORTED_KEY] = {
            "file": path.name,
            "sha256": sha,
            "rows": [min(job.rows), max(job.rows)],
        }
        records.append(
            JobRecord(
                job.model,
                job.measurement,
                version,
                STATUS_OK,
                conditions=job.conditions,
                value=job.value,
                interval=job.interval,
                values=job.values,
                columns=job.columns,
                provenance=prov,
            )
        )
    return Imported(records, skipped, sha)


def import_tidy(
    path: str | os.PathLike[str],
    store_dir: str | os.PathLike[str],
    *,
    measurements: Mapping[str, Callable[[str], bool]],
    known_model: Callable[[str], bool],
) -> Imported:
    """Check every row and every target, then write the records.

    Rows are checked by ``read_tidy``; a job already in the store is refused. Nothing is written
    when anything is refused.
    """
    found = read_tidy(path, measurements=measurements, known_model=known_model)
    store = Store(store_dir)
    for rec in found.records:
        target = store.record_path(rec.model, rec.measurement)
        if target.exists():
            rows = rec.provenance[IMPORTED_KEY]["rows"]
            raise DataError(
                f"{path}: row {rows[0]} ({rec.model} x {rec.measurement}): already in the store "
                f"({target}); import into another store, or remove that record first"
            )
    for rec in found.records:
        store.write(rec)
    return found

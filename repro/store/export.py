"""Measurement store, exported: the tidy table and the paper's wide layout.

The tidy table has one row per model x measurement x condition or column; the wide layout has
one row per model, with benchmark.csv column names.

Only finished jobs (``status = "ok"``) are exported; a caller that knows the current
measurement versions passes them so that records made by an older version are left out
(they need re-measuring, not comparing).
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from repro.store.files import RECORD_SUFFIX, Store
from repro.store.record import JobRecord, imported_from
from repro.store.validate import evidence_problem


def warn(message: str) -> None:
    """Default reporter of records left out (never silently): one ``warning:`` line on stderr."""
    print(f"warning: {message}", file=sys.stderr)


#: the provenance of a record that the tidy table keeps (one value per job, on each of its rows)
PROVENANCE_FIELDS = [
    "seed",
    "device",
    "dataset",
    "dataset_fingerprint",
    "repro_version",
    "git_commit",
    "torch",
    "finished_utc",
    "dataset_items",
    "dataset_mini",
    "dataset_partial",
    "batch_size",
    "host",
    "duration_s",
    "model_weights_sha256",
]
#: the fields of a tidy row before its job's provenance (what a row says)
ROW_FIELDS = [
    "model",
    "measurement",
    "kind",
    "condition",
    "variant",
    "value",
    "k",
    "n",
    "interval_low",
    "interval_high",
    "version",
    "status",
]
_NOTE_AFTER = PROVENANCE_FIELDS.index("finished_utc") + 1
#: the tidy table's columns: the row's fields, then its job's provenance with the row's note
TIDY_FIELDS = [
    *ROW_FIELDS,
    *PROVENANCE_FIELDS[:_NOTE_AFTER],
    "note",
    *PROVENANCE_FIELDS[_NOTE_AFTER:],
]


# the state of one stored job, for the provenance of the values a claim reads
JOB_OK, JOB_FAILED, JOB_STALE, JOB_NOT_EVIDENCE, JOB_CORRUPT = (
    "ok",
    "failed",
    "stale",
    "not evidence",
    "corrupt",
)


def _current(record: JobRecord, versions: Mapping[str, str] | None) -> bool:
    return versions is None or versions.get(record.measurement) == record.version


@dataclass(frozen=True)
class RecordState:
    """What a stored record is worth: the one decision shared by every reader of the store.

    The readers are the tidy and wide tables, the job states and ``compare``. ``status`` is
    ``failed`` (the job's error is stored: ``error``), ``stale`` (made by another measurement
    version than ``wanted``) or ``ok``; ``evidence`` says why an ``ok`` record is not evidence
    (mini or partial data), None when it is. The callers word their notes and apply their own mini
    rule.
    """

    status: str
    error: Mapping[str, Any]
    wanted: str | None = None
    evidence: str | None = None
    stored: str | None = None  # the record's measurement version

    @property
    def why(self) -> str:
        """Why a failed or stale record holds no value, in one line ("" for an ok one)."""
        if self.status == JOB_FAILED:
            err = self.error
            return f"{err.get('type', 'error')}: {err.get('message', '')}".strip()
        if self.status == JOB_STALE:
            return f"stored with version {self.stored}, current {self.wanted or 'unknown'}"
        return ""


def record_state(record: JobRecord, versions: Mapping[str, str] | None) -> RecordState:
    """``record``'s state against ``versions``.

    ``versions`` is the current version per measurement; None takes every version.
    """
    if not record.ok:
        return RecordState(JOB_FAILED, record.error or {}, stored=record.version)
    if not _current(record, versions):
        wanted = None if versions is None else versions.get(record.measurement)
        return RecordState(JOB_STALE, {}, wanted, stored=record.version)
    return RecordState(JOB_OK, {}, evidence=evidence_problem(record.provenance))


def tidy_rows(
    store_dir: str | os.PathLike[str],
    *,
    versions: Mapping[str, str] | None = None,
    report: Callable[[str], None] | None = warn,
) -> list[dict[str, Any]]:
    """The store as a tidy table, one row per value, each with its job's version and provenance.

    Rows: condition counts (``kind = condition``, value = rate in 0..1), benchmark.csv columns
    (``kind = column``, value in the column's unit, with its note), the record's further named
    values (``kind = value``) and its headline value with its interval (``kind = headline``); a
    failed job or one of another measurement version is one ``kind = job`` row without values.
    Every row carries its job's version, status and provenance (``PROVENANCE_FIELDS``), so that
    ``repro.store.importer`` can rebuild the record. Corrupt records are left out and reported.
    """
    rows: list[dict[str, Any]] = []
    store = Store(store_dir)
    none = {
        "condition": None,
        "variant": None,
        "value": None,
        "k": None,
        "n": None,
        "interval_low": None,
        "interval_high": None,
        "note": None,
    }
    for rec in store:
        prov = rec.provenance
        common = {
            "model": rec.model,
            "measurement": rec.measurement,
            "version": rec.version,
            "status": rec.status,
            **{key: prov.get(key) for key in PROVENANCE_FIELDS},
        }
        if record_state(rec, versions).status != JOB_OK:
            rows.append({**common, **none, "kind": "job"})
            continue
        for c in rec.conditions:
            k, n = int(c["k"]), int(c["n"])
            iv = c.get("interval") or [None, None]
            rows.append(
                {
                    **common,
                    **none,
                    "kind": "condition",
                    "condition": c["condition"],
                    "variant": "standard",
                    "value": k / n if n else None,
                    "k": k,
                    "n": n,
                    "interval_low": iv[0],
                    "interval_high": iv[1],
                }
            )
        for col in rec.columns:
            iv2 = col.interval or (None, None)
            rows.append(
                {
                    **common,
                    "kind": "column",
                    "condition": col.column,
                    "variant": col.variant,
                    "value": col.value,
                    "k": col.k,
                    "n": col.n,
                    "interval_low": iv2[0],
                    "interval_high": iv2[1],
                    "note": col.note or None,
                }
            )
        for name, value in rec.values.items():
            rows.append({**common, **none, "kind": "value", "condition": name, "value": value})
        if rec.value is not None or rec.interval is not None:
            iv3 = rec.interval or (None, None)
            rows.append(
                {
                    **common,
                    **none,
                    "kind": "headline",
                    "value": rec.value,
                    "interval_low": iv3[0],
                    "interval_high": iv3[1],
                }
            )
    for _, message in store.problems:
        if report is not None:
            report(message)
    return rows


def write_tidy_csv(
    store_dir: str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    versions: Mapping[str, str] | None = None,
    report: Callable[[str], None] | None = warn,
) -> int:
    """Write the tidy table as CSV; returns the number of rows."""
    rows = tidy_rows(store_dir, versions=versions, report=report)
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=TIDY_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def wide_columns(
    store_dir: str | os.PathLike[str],
    *,
    variant: str = "published",
    versions: Mapping[str, str] | None,
    allow_mini: bool = False,
    report: Callable[[str], None] | None = warn,
) -> dict[str, dict[str, Any]]:
    """Like ``wide_table`` but each cell is ``(ColumnValue, measurement name)``."""
    out: dict[str, dict[str, Any]] = {}
    store = Store(store_dir)
    for rec in store:
        state = record_state(rec, versions)
        if state.status != JOB_OK:
            continue
        problem = state.evidence
        if problem and not allow_mini:
            if report is not None:
                report(
                    f"{store.record_path(rec.model, rec.measurement)}: left out: {problem}, not "
                    "evidence (re-measure on the full dataset)"
                )
            continue
        names = dict.fromkeys(c.column for c in rec.columns)
        for name in names:
            col = rec.column(name, variant)
            if col is not None and col.value is None and col.variant != "standard":
                col = rec.column(
                    name, "standard"
                )  # e.g. ReaL last batch undefined on a partial val set
            if col is not None and col.value is not None:
                out.setdefault(rec.model, {})[name] = (col, rec.measurement)
    for _, message in store.problems:
        if report is not None:
            report(message)
    return out


@dataclass(frozen=True)
class JobState:
    """What the store holds for one (model x measurement) job.

    status: ``ok`` (a current record whose values ``wide_table`` overlays), ``failed`` (the job's
    error is stored), ``stale`` (made by another measurement version), ``not evidence`` (measured on
    mini or partial data, in a run that does not allow it) or ``corrupt`` (unreadable)
    note: why, for every status but ``ok`` (the error, the version, the evidence problem)
    mini: the record was measured on mini or partial data (kept because ``allow_mini``)
    imported: the record came in by ``python -m repro store import``
    (``repro.store.record.imported_from``) values: for ``ok``, each benchmark.csv column of the
    record in the caller's ``variant``
        (None where the value is undefined, e.g. a degenerate critical-band fit)
    """

    model: str
    measurement: str
    status: str
    note: str = ""
    mini: bool = False
    values: dict[str, float | None] = field(default_factory=dict)
    imported: bool = False


def _values(rec: JobRecord, variant: str) -> dict[str, float | None]:
    """Each column of ``rec`` in ``variant``, falling back to ``standard``.

    The fallback applies where the variant is undefined, as ``wide_columns`` does.
    """
    out: dict[str, float | None] = {}
    for name in dict.fromkeys(c.column for c in rec.columns):
        col = rec.column(name, variant)
        if col is not None and col.value is None and col.variant != "standard":
            col = rec.column(name, "standard")
        out[name] = None if col is None or col.value is None else float(col.value)
    return out


def job_states(
    store_dir: str | os.PathLike[str],
    *,
    variant: str = "published",
    versions: Mapping[str, str] | None,
    allow_mini: bool = False,
) -> dict[tuple[str, str], JobState]:
    """``{(model, measurement): JobState}`` for every record in the store, corrupt ones included.

    Corrupt records are keyed by their file's folder and name. The values of an ``ok`` state are
    exactly those ``wide_table`` overlays (same variant, versions and mini rule).
    """
    out: dict[tuple[str, str], JobState] = {}
    store = Store(store_dir)
    for rec in store:
        key = (rec.model, rec.measurement)
        state = record_state(rec, versions)
        if state.status in (JOB_FAILED, JOB_STALE):
            out[key] = JobState(*key, state.status, state.why)
        else:
            problem = state.evidence
            if problem and not allow_mini:
                out[key] = JobState(*key, JOB_NOT_EVIDENCE, f"{problem}, not evidence")
            else:
                out[key] = JobState(
                    *key,
                    JOB_OK,
                    mini=bool(problem),
                    values=_values(rec, variant),
                    imported=imported_from(rec.provenance) is not None,
                )
    for path, message in store.problems:
        key = (path.parent.name, path.name[: -len(RECORD_SUFFIX)])
        out[key] = JobState(*key, JOB_CORRUPT, message.splitlines()[0])
    return out


def wide_table(
    store_dir: str | os.PathLike[str],
    *,
    variant: str = "published",
    versions: Mapping[str, str] | None,
    allow_mini: bool = False,
    report: Callable[[str], None] | None = warn,
) -> dict[str, dict[str, float]]:
    """Our measurements in the paper's wide layout: ``{model: {benchmark.csv column: value}}``.

    Units as in benchmark.csv: ``top1_acc/*`` in %, ``shape-bias`` in 0..1,
    ``metric/bandpass/{LFC,HFC}/c`` as ratios to clean accuracy, ``metric/criticalband/*``.
    ``variant="published"`` (default) gives each quirk's published computation (ReaL last
    batch, PGD denominator 50,048, ImageNet-C over 19 corruptions) so the numbers are
    comparable with benchmark.csv; ``variant="standard"`` gives the corrected ones.
    Undefined values (e.g. a degenerate critical-band fit) are left out, and so are failed
    jobs and records made by another measurement version than the caller's ``versions``
    (``repro.measurements.registry.current_versions()`` for this checkout's; None takes every
    record). The store does not know the measurement registry: the caller passes the versions.
    Values measured on mini or partial data are left out (``allow_mini=True``: a mini run keeps
    them) and so are corrupt records; each is reported (``report``, default a stderr warning).
    """
    return {
        model: {name: float(cell[0].value) for name, cell in cols.items()}
        for model, cols in wide_columns(
            store_dir, variant=variant, versions=versions, allow_mini=allow_mini, report=report
        ).items()
    }

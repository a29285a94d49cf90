"""Measurement store vs the published numbers, per model and published column.

For each model and published column: our value (with its count and 95% binomial interval), the
published value, the difference, and whether the published value lies inside our interval
(``status``: a view of the store, not the verdict of reproduction: whether a measured value
reproduces its published one is per-model agreement, ``repro.claims.agreement``, which
``python -m repro compare`` shows beside it).

Each quirk's published computation is the one compared (ReaL last batch, PGD denominator
50,048, ImageNet-C over 19 corruptions), because that is what benchmark.csv holds. The
published numbers come in as ``{model: {column: value}}`` (a study's table, read by its
reader); the store reads no published file itself. A record made by another measurement
version is reported as "re-measure", never as a numeric diff.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from repro.base.numbers import fmt_num
from repro.store.export import JOB_FAILED, JOB_STALE, record_state
from repro.store.files import Store
from repro.store.record import JobRecord


@dataclass(frozen=True)
class ComparisonRow:
    model: str
    measurement: str
    column: str
    ours: float | None
    k: int | None
    n: int | None
    interval: tuple[float, float] | None
    published: float | None
    status: str  # inside | OUTSIDE | no interval | not published | re-measure | failed | corrupt
    variant: str = ""
    note: str = ""
    mini: bool = False  # measured on generated mini data (reported, never gated)
    chance: str = ""  # "AT CHANCE (...)": the value rests on decisions at chance (``chance=``)

    @classmethod
    def without_value(cls, model: str, measurement: str, status: str, note: str) -> ComparisonRow:
        """The one row of a job that holds no value (failed, stale or corrupt), with why."""
        return cls(model, measurement, "-", None, None, None, None, None, status, note=note)

    @property
    def diff(self) -> float | None:
        if self.ours is None or self.published is None:
            return None
        return self.ours - self.published


def compare(
    store_dir: str | os.PathLike[str],
    published: Mapping[str, Mapping[str, float]],
    *,
    versions: Mapping[str, str] | None = None,
    headline: Mapping[str, Sequence[str]] | None = None,
    models: Sequence[str] | None = None,
    chance: Callable[[JobRecord, str, int | None, int | None], str] | None = None,
) -> list[ComparisonRow]:
    """Rows for every stored job (see the module docstring).

    versions: current version per measurement; records of another version -> ``re-measure``
    headline: measurement -> the columns to show (default: every column the record holds)
    chance: (record, column, k, n) -> "AT CHANCE (...)" or "" for a value resting on decisions at
    chance (``repro.analysis.chance.column_flag``, which the store cannot import: a layer above)
    """
    rows: list[ComparisonRow] = []
    store = Store(store_dir)
    for rec in store:
        if models and rec.model not in models:
            continue
        state = record_state(rec, versions)
        if state.status in (JOB_FAILED, JOB_STALE):
            status = "failed" if state.status == JOB_FAILED else "re-measure"
            note = state.why[:200]  # a failed job's stored error can run to a traceback's length
            rows.append(ComparisonRow.without_value(rec.model, rec.measurement, status, note))
            continue
        names = list(dict.fromkeys(c.column for c in rec.columns))
        if headline and headline.get(rec.measurement):
            names = [n for n in names if n in headline[rec.measurement]]
        pub_row = published.get(rec.model, {})
        not_evidence = state.evidence  # mini or partial data: reported, never gated
        mini = not_evidence is not None
        for name in names:
            col = rec.column(name, "published")
            if col is not None and col.value is None and col.variant != "standard":
                col = rec.column(
                    name, "standard"
                )  # published variant undefined here (e.g. ReaL on a partial set)
            if col is None:
                continue
            pub = pub_row.get(name)
            if pub is not None and isinstance(pub, float) and math.isnan(pub):
                pub = None
            if pub is None:
                status = "not published"
            elif col.value is None:
                status = "undefined"
            elif col.interval is None:
                status = "no interval"
            else:
                status = "inside" if col.interval[0] <= pub <= col.interval[1] else "OUTSIDE"
            note = (
                col.note + ("; " if col.note else "") + f"{not_evidence}: not evidence"
                if mini
                else col.note
            )
            rows.append(
                ComparisonRow(
                    rec.model,
                    rec.measurement,
                    name,
                    col.value,
                    col.k,
                    col.n,
                    col.interval,
                    pub,
                    status,
                    col.variant,
                    note,
                    mini,
                    "" if chance is None else chance(rec, name, col.k, col.n),
                )
            )
    for path, message in store.problems:  # reported next to the rest, never a reason to stop
        model, measurement = path.parent.name, path.name.removesuffix(".json")
        if not models or model in models:
            rows.append(ComparisonRow.without_value(model, measurement, "corrupt", message))
    return rows


def _fmt(v: float | None) -> str:
    """Four decimals without trailing zeros; below 0.001 four significant digits."""
    return fmt_num(v, 4, small=1e-3, strip=True)


def as_json(row: ComparisonRow) -> dict[str, object]:
    """One row of ``python -m repro compare --json``."""
    return {
        "model": row.model,
        "measurement": row.measurement,
        "column": row.column,
        "ours": row.ours,
        "k": row.k,
        "n": row.n,
        "interval": None if row.interval is None else list(row.interval),
        "published": row.published,
        "diff": row.diff,
        "status": row.status,
        "variant": row.variant,
        "note": row.note,
        "mini": row.mini,
        "chance": row.chance or None,
    }


def format_rows(
    rows: Sequence[ComparisonRow], agreement: Mapping[tuple[str, str], str] | None = None
) -> str:
    """A plain-text table of the comparison, grouped by model.

    ``agreement``: {(model, column): text} shown as a column of its own (e.g. the per-model
    agreement of ``repro.claims.agreement``).
    """
    header = [
        "model",
        "column",
        "ours",
        "k/n",
        "95% interval",
        "published",
        "diff",
        "status",
        "variant",
    ]
    if agreement is not None:
        header.insert(7, "agreement")
    table = [header]
    for r in rows:
        iv = "-" if r.interval is None else f"[{_fmt(r.interval[0])}, {_fmt(r.interval[1])}]"
        kn = "-" if r.k is None or r.n is None else f"{r.k}/{r.n}"
        col = r.column if r.column != "-" else r.measurement
        status = (
            r.status
            if not r.note or r.status not in ("failed", "re-measure", "corrupt")
            else f"{r.status}: {r.note}"
        )
        if r.chance:
            status += f"; {r.chance}"
        cells = [
            r.model,
            col,
            _fmt(r.ours),
            kn,
            iv,
            _fmt(r.published),
            _fmt(r.diff),
            status,
            r.variant if r.variant != "standard" else "",
        ]
        if agreement is not None:
            cells.insert(7, agreement.get((r.model, r.column), "-"))
        table.append(cells)
    widths = [
        max(len(row[i]) for row in table) for i in range(len(header) - 2)
    ]  # status (with its note), variant: not padded
    lines = []
    for row in table:
        lines.append(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False))
            + "  "
            + "  ".join(row[len(widths) :])
        )
    return "\n".join(line.rstrip() for line in lines)

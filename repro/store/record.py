"""Measurement store, the record format: what one (model x measurement) job leaves behind.

A job record is one JSON document (schema ``SCHEMA``) holding the counts per condition, the
headline value(s) with their interval, the benchmark.csv columns the measurement produces
(with the published variant of a quirk next to the standard one), a pointer to the per-item
records (a sibling ``.records.csv.gz``) and the provenance of the run. A failed job is a
record too (``status = "failed"``, with the error), so a sweep can go on and report it.
"""

from __future__ import annotations

import functools
import os
import platform
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from repro import __version__
from repro.base.settings import checkout_dir
from repro.base.stats import binomial_interval

SCHEMA = 1

STATUS_OK = "ok"
STATUS_FAILED = "failed"


@dataclass(frozen=True)
class ColumnValue:
    """One value in the paper's wide layout (a benchmark.csv column) with what it rests on.

    value: in the column's own unit (accuracies in %, shape bias in 0..1, ratios)
    k, n: the count behind it where there is one (value = scale * k / n)
    interval: 95% interval of ``value`` in the same unit, or None where no binomial interval applies
    variant: ``standard`` (our definition) or ``published`` (the paper's computation, quirk
    included);
        a column with a single definition is stored once as ``standard``
    note: how the value was computed (e.g. ``ReaL: last batch of 336 images (Q1)``)
    """

    column: str
    value: float | None
    k: int | None = None
    n: int | None = None
    interval: tuple[float, float] | None = None
    variant: str = "standard"
    note: str = ""

    @classmethod
    def from_count(
        cls,
        column: str,
        k: int,
        n: int,
        *,
        scale: float = 100.0,
        variant: str = "standard",
        note: str = "",
    ) -> ColumnValue:
        if n <= 0:
            return cls(column, None, k, n, None, variant, note or "no items")
        lo, hi = binomial_interval(k, n)
        return cls(column, scale * k / n, k, n, (scale * lo, scale * hi), variant, note)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ColumnValue:
        iv = d.get("interval")
        return cls(
            d["column"],
            d.get("value"),
            d.get("k"),
            d.get("n"),
            tuple(iv) if iv else None,  # type: ignore[arg-type]
            d.get("variant", "standard"),
            d.get("note", ""),
        )


@dataclass
class JobRecord:
    """The stored outcome of one job (see the module docstring)."""

    model: str
    measurement: str
    version: str
    status: str
    conditions: list[dict[str, Any]] = field(default_factory=list)
    value: float | None = None
    interval: tuple[float, float] | None = None
    values: dict[str, float | None] = field(default_factory=dict)
    columns: list[ColumnValue] = field(default_factory=list)
    records_file: str | None = None
    n_records: int = 0
    records_sha256: str | None = None
    error: dict[str, str] | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK

    def column(self, name: str, variant: str = "published") -> ColumnValue | None:
        """The value of benchmark.csv column ``name``.

        The requested variant when stored, else standard.
        """
        matches = [c for c in self.columns if c.column == name]
        for c in matches:
            if c.variant == variant:
                return c
        for c in matches:
            if c.variant == "standard":
                return c
        return matches[0] if matches else None

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["columns"] = [asdict(c) for c in self.columns]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JobRecord:
        known = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in d.items() if k in known}
        kw["columns"] = [ColumnValue.from_dict(c) for c in d.get("columns", [])]
        if kw.get("interval") is not None:
            kw["interval"] = tuple(kw["interval"])
        return cls(**kw)


#: the provenance key of a record brought in by ``python -m repro store import``: {"file": the
#: imported file's name, "sha256": its sha256, "row": its first CSV row}
IMPORTED_KEY = "imported"


def imported_from(provenance: dict[str, Any]) -> dict[str, Any] | None:
    """The import facts of a record's provenance (file, sha256).

    None for a record measured here.
    """
    value = provenance.get(IMPORTED_KEY)
    return value if isinstance(value, dict) else None


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@functools.lru_cache(maxsize=1)
def git_describe() -> dict[str, Any]:
    """The checkout's git commit (and whether the tree is dirty), when it is a git checkout."""
    root = checkout_dir()
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return {}
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return {"git_commit": head.stdout.strip(), "git_dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {}


def base_provenance() -> dict[str, Any]:
    """Code and environment facts shared by every job of this process (no torch import)."""
    prov: dict[str, Any] = {
        "repro_version": __version__,
        **git_describe(),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        prov["torch"] = torch.__version__
    return prov

"""Measurement store: what a job record must hold before it is believed.

A record read from disk is checked here (``check_record``): the fields every record has, the
status, the counts behind every rate (integers with 0 <= k <= n, and n > 0 wherever a rate is
formed), the column entries and the interval. A record that fails is reported with its path
and how to remove it (``corrupt_message``); whether it also belongs in the folder it was found
in is checked by ``Store`` (a record copied into another model's folder never counts there).
``evidence_problem``: what a reader checks before overlaying a stored value on the published
table (values measured on generated mini data or on an ad-hoc part of a dataset are never evidence;
a declared subset is, with its own n).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from repro.base.errors import DataError
from repro.datasets.subset import is_declared

REQUIRED = ("model", "measurement", "version", "status")
STATUSES = ("ok", "failed")


def remove_hint(path: Path) -> str:
    return f"remove it (rm '{path}') and run the measurement again to re-measure this job"


def corrupt_message(path: Path, problem: str) -> str:
    return f"{path}: job record {problem}; {remove_hint(path)}"


def _is_number(v: Any) -> bool:
    """A finite JSON number (an undefined value is stored as null, never NaN or Infinity)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _check_count(
    where: str, item: dict[str, Any], rate_key: str | None, required: bool
) -> str | None:
    k, n = item.get("k"), item.get("n")
    if k is None and n is None and not required:
        return None
    if (
        not (isinstance(k, int) and isinstance(n, int))
        or isinstance(k, bool)
        or isinstance(n, bool)
    ):
        return f"has {where} with k={k!r}, n={n!r} (expected integer counts)"
    if not 0 <= k <= n:
        return f"has {where} with k={k} of n={n} (expected 0 <= k <= n)"
    rate = item.get(rate_key) if rate_key else None
    if n == 0 and isinstance(rate, int | float) and math.isfinite(rate):
        return f"has {where} with a rate ({rate_key} = {rate}) formed from n = 0 items"
    return None


def problems(data: Any) -> str | None:
    """The first problem of a parsed record, or None when it is well-formed."""
    if not isinstance(data, dict):
        return f"is a JSON {type(data).__name__}, expected an object"
    for key in REQUIRED:
        if key not in data:
            return f"lacks field {key!r} (expected a repro store record)"
        if not isinstance(data[key], str) or not data[key]:
            return f"has field {key!r} = {data[key]!r}, expected a non-empty string"
    if data["status"] not in STATUSES:
        return f"has field 'status' = {data['status']!r}, expected one of {', '.join(STATUSES)}"
    conditions = data.get("conditions", [])
    if not isinstance(conditions, list):
        return "has a field 'conditions' that is not a list"
    for i, c in enumerate(conditions):
        if not isinstance(c, dict) or "condition" not in c:
            return f"has conditions[{i}] without a 'condition' name"
        bad = _check_count(f"condition {c['condition']!r}", c, "rate", required=True)
        if bad:
            return bad
    columns = data.get("columns", [])
    if not isinstance(columns, list):
        return "has a field 'columns' that is not a list"
    for i, c in enumerate(columns):
        if not isinstance(c, dict) or not isinstance(c.get("column"), str):
            return f"has columns[{i}] without a 'column' name"
        if c.get("value") is not None and not _is_number(c["value"]):
            return (
                f"has column {c['column']!r} with value {c['value']!r}, expected a finite number "
                "or null"
            )
        bad = _check_count(f"column {c['column']!r}", c, "value", required=False)
        if bad:
            return bad
        iv = c.get("interval")
        if iv is not None and not (
            isinstance(iv, list | tuple) and len(iv) == 2 and all(map(_is_number, iv))
        ):
            return (
                f"has column {c['column']!r} with interval {iv!r}, expected a pair of finite "
                "numbers"
            )
    iv = data.get("interval")
    if iv is not None and not (
        isinstance(iv, list | tuple) and len(iv) == 2 and all(map(_is_number, iv))
    ):
        return f"has field 'interval' = {iv!r}, expected a pair of finite numbers"
    rf = data.get("records_file")
    if rf is not None and (
        not isinstance(rf, str) or Path(rf).name != rf or rf in ("", ".", "..") or "\\" in rf
    ):
        return (
            f"has field 'records_file' = {str(rf)[:200]!r}, expected a file name in the record's "
            "own folder"
        )
    for key, kind in (("provenance", dict), ("values", dict)):
        if key in data and not isinstance(data[key], kind):
            return f"has a field {key!r} that is not an object"
    return None


def check_record(data: Any, path: Path) -> dict[str, Any]:
    """``data`` unchanged when well-formed.

    Otherwise a DataError naming the file, the problem and the fix.
    """
    bad = problems(data)
    if bad:
        raise DataError(corrupt_message(path, bad))
    return data


def evidence_problem(provenance: dict[str, Any]) -> str | None:
    """Why a stored value is not evidence about the real dataset (None: nothing known against it).

    A declared, seeded, class-stratified subset (``dataset_subset``: ``repro.datasets.subset``) is
    evidence with its own n; any other part of a dataset is not.
    """
    if provenance.get("dataset_mini"):
        return "measured on generated mini data"
    subset = provenance.get("dataset_subset")
    if subset is not None:
        if not is_declared(subset):
            return (
                "measured on a subset whose declaration (size, seed, stratification, digest) is "
                "incomplete"
            )
        return None
    if provenance.get("dataset_partial"):
        items = provenance.get("dataset_items")
        return (
            f"measured on part of the dataset ({items} items)"
            if items is not None
            else "measured on partial data"
        )
    return None

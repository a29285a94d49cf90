"""Regression snapshots of claim results: a syrupy extension that stores one human-readable
JSON file per claim under ``expected/claims/<claim id>.json`` and compares floats with named
tolerances instead of string equality:

- every float: ``REGRESSION_FLOAT_TOLERANCE`` (relative 1e-7, absolute floor 1e-18): a relative
  change of 1e-6 of any float of magnitude above about 1e-11 is a difference;
- p-values (fields named ``p``): ``P_VALUE_LOG10_TOLERANCE``, |log10 p - log10 p'| <= 4.3e-8 (a
  relative change of 1e-7 at ANY magnitude, so p = 3e-66 is gated like p = 0.3); an underflowed
  p (0.0) matches only another p below the smallest normal double.

A field present on one side only is a difference. ``tests/unit/test_snapshot_comparator.py``
proves each of these on the real snapshots.

Update every snapshot (after a deliberate change, bump the claim's ``version``):
``pytest -m claims --snapshot-update``.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

EXPECTED_DIR = Path(__file__).resolve().parent.parent / "expected" / "claims"


@dataclass(frozen=True)
class FloatTolerance:
    """|a - b| <= abs + rel * |b|: room for BLAS/platform rounding, nothing more."""

    name: str
    rel: float
    abs: float

    def close(self, a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= self.abs + self.rel * abs(b)

    def __str__(self) -> str:
        return f"{self.name} (rel {self.rel:g}, abs {self.abs:g})"


@dataclass(frozen=True)
class LogTolerance:
    """For p-values: |log10 a - log10 b| <= log10_abs. Values below ``underflow`` (0.0 from an
    underflowed p, or a subnormal) are all equal to each other and to nothing else."""

    name: str
    log10_abs: float
    underflow: float = sys.float_info.min

    def close(self, a: float, b: float) -> bool:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if a < 0 or b < 0:
            return False  # not a p-value: never silently equal
        tiny_a, tiny_b = a < self.underflow, b < self.underflow
        if tiny_a or tiny_b:
            return tiny_a and tiny_b
        return abs(math.log10(a) - math.log10(b)) <= self.log10_abs

    def __str__(self) -> str:
        return f"{self.name} (|log10 p difference| <= {self.log10_abs:g})"


REGRESSION_FLOAT_TOLERANCE = FloatTolerance("REGRESSION_FLOAT_TOLERANCE", rel=1e-7, abs=1e-18)
# log10(1 + 1e-7) = 4.34e-8: the same room as REGRESSION_FLOAT_TOLERANCE's rel, at every magnitude
P_VALUE_LOG10_TOLERANCE = LogTolerance("P_VALUE_LOG10_TOLERANCE", log10_abs=4.3e-8)
P_VALUE_FIELDS = frozenset({"p"})


def is_p_value(path: str) -> bool:
    """A field path whose last key names a p-value (``details.at.p``, ``p``)."""
    last = re.split(r"[.\[]", path)[-1]
    return last in P_VALUE_FIELDS


def tolerance_for(
    path: str, tol: FloatTolerance = REGRESSION_FLOAT_TOLERANCE
) -> FloatTolerance | LogTolerance:
    """The tolerance a float field is compared with."""
    return P_VALUE_LOG10_TOLERANCE if is_p_value(path) else tol


def to_json(data: Any) -> str:
    """Stable, human-readable JSON (sorted keys, floats printed exactly, one value per line)."""
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=True) + "\n"


def _flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for k, v in data.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or {prefix: {}}
    if isinstance(data, list):
        out = {}
        for i, v in enumerate(data):
            out.update(_flatten(v, f"{prefix}[{i}]"))
        return out or {prefix: []}
    return {prefix: data}


def _fmt(v: Any) -> str:
    return repr(v) if not isinstance(v, float) else f"{v:.10g}"


def diff(expected: Any, actual: Any, tol: FloatTolerance = REGRESSION_FLOAT_TOLERANCE) -> list[str]:
    """Readable differences, one line per field path (e.g. ``per_model.tv_resnet50.shape_bias``)."""
    a, b = _flatten(expected), _flatten(actual)
    lines = []
    for path in sorted(set(a) | set(b)):
        if path not in b:
            lines.append(f"{path}: in the snapshot ({_fmt(a[path])}) but no longer computed")
            continue
        if path not in a:
            lines.append(f"{path}: new field ({_fmt(b[path])}), not in the snapshot")
            continue
        x, y = a[path], b[path]
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (x, y))
        if numeric and (isinstance(x, float) or isinstance(y, float)):
            t = tolerance_for(path, tol)
            if not t.close(float(y), float(x)):
                lines.append(
                    f"{path}: snapshot {_fmt(x)}, recomputed {_fmt(y)} "
                    f"(difference {float(y) - float(x):+.3g}; outside {t})"
                )
        elif x != y or isinstance(x, bool) != isinstance(y, bool):  # True == 1 in Python
            lines.append(f"{path}: snapshot {_fmt(x)}, recomputed {_fmt(y)}")
    return lines


def _claim_id(snapshot_name: str) -> str:
    m = re.search(r"\[(.+)\]$", snapshot_name)
    return m.group(1) if m else snapshot_name


class ClaimSnapshotExtension(SingleFileSnapshotExtension):
    """``expected/claims/<claim id>.json``, compared field by field with a float tolerance."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    @classmethod
    def dirname(cls, *, test_location) -> str:
        return str(EXPECTED_DIR)

    @classmethod
    def discovery_dirname(cls, *, test_location) -> str:
        return str(EXPECTED_DIR)

    @classmethod
    def get_snapshot_name(cls, *, test_location, index=0) -> str:
        return _claim_id(test_location.snapshot_name_parametrized)

    @classmethod
    def get_file_basename(cls, *, test_location, index) -> str:
        return cls.get_snapshot_name(test_location=test_location, index=index)

    @classmethod
    def matches_test_location(cls, *, test_location, snapshot_location: str) -> bool:
        return Path(snapshot_location).stem == cls.get_snapshot_name(test_location=test_location)

    def serialize(self, data, *, exclude=None, include=None, matcher=None) -> str:
        return to_json(data)

    def matches(self, *, serialized_data, snapshot_data) -> bool:
        try:
            return not diff(json.loads(snapshot_data), json.loads(serialized_data))
        except (TypeError, json.JSONDecodeError):
            return False

    def diff_lines(self, serialized_data, snapshot_data):
        try:
            lines = diff(json.loads(snapshot_data), json.loads(serialized_data))
        except (TypeError, json.JSONDecodeError):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        yield (
            f"claim result differs from its snapshot in expected/claims/ ({len(lines)} field(s)); "
        )
        yield (
            "if the change is intended: bump the claim's version and run `pytest -m claims "
            "--snapshot-update`"
        )
        yield from lines

"""Regression snapshots of claim results: a syrupy extension that stores one human-readable
JSON file per claim under ``expected/claims/<claim id>.json`` and compares floats with named
tolerances instead of string equality:

- every float: ``REGRESSION_FLOAT_TOLERANCE`` (relative 1e-7, absolute floor 1e-18): a relative
  change of 1e-6 of any float of magnitude above about 1e-11 is a difference;
- p-values (fields named ``p``): ``P_VALUE_LOG10_TOLERANCE``, |log10 p - log10 p'| <= 4.3e-8 (a
  relative change of 1e-7 at ANY magnitude, so p = 3e-66 is gated like p = 0.3); an underflowed
  p (0.0) matches only another p below the smallest normal double.

- a float field listed in the payload's ``_compare`` section: the relative tolerance stated
  there, measured from the field's own conditioning (``measured_rules``: 10 times its spread
  when every critical-band fit starts from slightly moved points, ``repro.scoring.
  fit_conditioning``), where that is wider than the default. The ill-conditioned fits (alexnet's
  centre frequency moves by 1e-5 with the CPU's kernels) and what is computed from them are
  compared at the precision they have; everything else at 1e-7. The section is a rule, not
  data: it is not compared, and the wider of the stored and the recomputed rule applies.

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


RULES = "_compare"  # the payload's section of per-field comparison rules (not compared itself)
MEASURED_RULE = (
    "10 x its relative spread over the fit starts of repro.scoring.fit_conditioning.STARTS"
)


def measured_rules(payload: dict, moved: list[dict], margin: float = 10.0) -> dict[str, dict]:
    """``{field path: {"rel": tolerance, "rule": ...}}`` for the float fields of ``payload`` that
    move, under the moved fit starts (``moved``: the same payload computed under each), by more
    than the default tolerance allows; the tolerance is ``margin`` times the largest relative
    move, printed to two significant digits."""
    base = _flatten({k: v for k, v in payload.items() if k != RULES})
    rules: dict[str, dict] = {}
    for other in moved:
        flat = _flatten({k: v for k, v in other.items() if k != RULES})
        for path, x in base.items():
            y = flat.get(path)
            if not (isinstance(x, float) and isinstance(y, float)):
                continue
            if math.isnan(x) or math.isnan(y) or x == y:
                continue
            if is_p_value(path):  # p-values: the move of log10 p (both positive and normal)
                if min(x, y) < sys.float_info.min:
                    continue
                key, move, floor = (
                    "log10",
                    abs(math.log10(x) - math.log10(y)),
                    P_VALUE_LOG10_TOLERANCE,
                )
            else:
                key, move, floor = (
                    "rel",
                    abs(x - y) / max(abs(x), abs(y)),
                    REGRESSION_FLOAT_TOLERANCE,
                )
            room = margin * move
            bound = floor.log10_abs if key == "log10" else floor.rel  # type: ignore[union-attr]
            if room > bound and room > rules.get(path, {}).get(key, 0):
                rules[path] = {key: float(f"{room:.2g}"), "rule": MEASURED_RULE}
    return dict(sorted(rules.items()))


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
    stored, recomputed = _rules(expected), _rules(actual)
    rules = {p: _wider(stored.get(p), recomputed.get(p)) for p in set(stored) | set(recomputed)}
    a = _flatten({k: v for k, v in expected.items() if k != RULES})
    b = _flatten({k: v for k, v in actual.items() if k != RULES})
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
            t = _measured(t, rules.get(path))
            if not t.close(float(y), float(x)):
                lines.append(
                    f"{path}: snapshot {_fmt(x)}, recomputed {_fmt(y)} "
                    f"(difference {float(y) - float(x):+.3g}; outside {t})"
                )
        elif x != y or isinstance(x, bool) != isinstance(y, bool):  # True == 1 in Python
            lines.append(f"{path}: snapshot {_fmt(x)}, recomputed {_fmt(y)}")
    return lines


def _rules(doc: Any) -> dict[str, dict]:
    raw = doc.get(RULES, {}) if isinstance(doc, dict) else {}
    return {
        p: r
        for p, r in raw.items()
        if isinstance(r, dict) and any(isinstance(r.get(k), (int, float)) for k in ("rel", "log10"))
    }


def _wider(a: dict | None, b: dict | None) -> dict:
    """The wider of two rules of one field (either may be missing)."""
    if a is None or b is None:
        return a or b or {}
    key = "log10" if "log10" in a else "rel"
    return a if a.get(key, 0) >= b.get(key, 0) else b


def _measured(t: FloatTolerance | LogTolerance, rule: dict | None) -> FloatTolerance | LogTolerance:
    """``t``, or the field's measured rule where that is wider."""
    if not rule:
        return t
    name = f"its measured conditioning ({rule.get('rule', MEASURED_RULE)})"
    if isinstance(t, LogTolerance) and rule.get("log10", 0) > t.log10_abs:
        return LogTolerance(name, log10_abs=rule["log10"], underflow=t.underflow)
    if isinstance(t, FloatTolerance) and rule.get("rel", 0) > t.rel:
        return FloatTolerance(name, rel=rule["rel"], abs=t.abs)
    return t


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

"""Zoo: the units of externally known values (``repro.zoo.external``) and their ranges.

A study table's column has one unit: accuracies in percent (``top1_acc/imagenet`` = 75.1, not
0.751), shape bias a fraction of 0..1, critical-band bandwidths in octaves, centre frequencies in
cycles per image, peak noise sensitivity a fraction, the spectral LFC/HFC columns ratios. An
external value may state its ``unit``; for a column whose unit is known here a stated unit must
be that one, and one left out is that one; a column whose unit is not known here needs its unit
stated. Either way the value must lie in its unit's range: a 0.751 in percent is allowed (it is
a number in the range), but a 75.1 as a fraction, or a negative bandwidth, is an error naming the
entry, the unit and the range.
"""

from __future__ import annotations

import math
import re

#: unit -> (lowest, highest) value allowed
UNITS: dict[str, tuple[float, float]] = {
    "percent": (0.0, 100.0),
    "fraction": (0.0, 1.0),
    "octaves": (0.0, math.inf),
    "cycles/image": (0.0, math.inf),
    "ratio": (0.0, math.inf),
}

#: (pattern of a column, its unit), the first match decides
COLUMN_UNITS: tuple[tuple[str, str], ...] = (
    (r"top1_acc/.*|.*accuracy.*", "percent"),
    (r"shape-bias|shape_bias", "fraction"),
    (r"metric/.*/(LFC|HFC)/.*", "ratio"),
    (r"metric/criticalband[^/]*/bw(_norm)?", "octaves"),
    (r"metric/criticalband[^/]*/cf(_norm)?", "cycles/image"),
    (r"metric/criticalband[^/]*/pns(_norm)?", "fraction"),
)


def column_unit(column: str) -> str | None:
    """The unit of a study table's column, None when not known here."""
    for pattern, unit in COLUMN_UNITS:
        if re.fullmatch(pattern, column):
            return unit
    return None


def range_text(unit: str) -> str:
    lo, hi = UNITS[unit]
    return f"{lo:g} to {hi:g}" if math.isfinite(hi) else f"at least {lo:g}"


def check_unit(column: str, value: float, stated: str | None) -> tuple[str | None, str]:
    """The unit of a value checked against its column, and the value against the unit's range.

    Returns (the value's unit, "") when the stated unit fits the column and the value its range;
    else (None, what is wrong: one sentence for the error line)."""
    known = ", ".join(UNITS)
    if stated is not None and stated not in UNITS:
        return None, f"unit {stated!r} is not one of {known}"
    expected = column_unit(column)
    if expected is not None and stated is not None and stated != expected:
        return None, f"column {column!r} is in {expected}, not {stated}"
    unit = stated or expected
    if unit is None:
        return None, f"column {column!r} has no known unit: state it (unit = one of {known})"
    lo, hi = UNITS[unit]
    if not lo <= value <= hi:
        hint = " (a fraction: 0.21, not 21)" if unit == "fraction" else ""
        return None, f"value {value:g} is outside {range_text(unit)}, the range of {unit}{hint}"
    return unit, ""

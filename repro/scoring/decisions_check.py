"""Scoring stage, shape bias: checks across the rows of a per-trial decisions CSV.

A decisions file scored without these checks gives a wrong shape bias silently: a trial
written twice counts twice, an image shown twice weighs double, and a ``category`` (the shape
class) that disagrees with the image name moves a decision between S and T. Each problem is a
DataError naming the file and the lines (1-based, the header is line 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repro.base.errors import DataError
from repro.scoring.cue_conflict_names import image_stem, shape_class

_SHOWN = 5


def _lines(lines: Sequence[int]) -> str:
    shown = ", ".join(map(str, lines[:_SHOWN]))
    return shown + (f" (and {len(lines) - _SHOWN} more)" if len(lines) > _SHOWN else "")


def check_trials(path: Path, rows: Sequence[dict[str, Any]], lines: Sequence[int]) -> None:
    """Checks across the rows of a decisions file.

    Duplicate trials, duplicate images and shape-class disagreements, each a one-line DataError."""
    wrong = [
        (ln, r)
        for ln, r in zip(lines, rows, strict=True)
        if shape_class(str(r["imagename"])) != r["category"]
    ]
    if wrong:
        ln, r = wrong[0]
        raise DataError(
            f"{path}: line(s) {_lines([w[0] for w in wrong])}: column category disagrees with the "
            f"shape class of the image name (line {ln}: category {r['category']!r}, imagename "
            f"{r['imagename']!r} has shape class {shape_class(str(r['imagename']))!r}; expected "
            "category to be that shape class: fix those rows)"
        )
    for what, key in (
        ("trial", lambda r: (r["subj"], r["session"], r["trial"])),
        ("image", lambda r: (r["subj"], r["session"], image_stem(str(r["imagename"])))),
    ):
        seen: dict[tuple, int] = {}
        dups: list[tuple[int, int, tuple]] = []
        for ln, r in zip(lines, rows, strict=True):
            k = key(r)
            if k in seen:
                dups.append((seen[k], ln, k))
            else:
                seen[k] = ln
        if dups:
            first, again, k = dups[0]
            label = f"trial {k[2]}" if what == "trial" else f"image {k[2]!r}"
            raise DataError(
                f"{path}: duplicate {what}s on line(s) {_lines([d[1] for d in dups])}: {label} of "
                f"subject {k[0]!r}, session {k[1]} is on lines {first} and {again} (expected each "
                f"{what} once)"
            )

"""Scoring stage, shape bias: from per-trial cue-conflict decisions to S / (S + T) with its counts.

After Geirhos et al. 2019 and model-vs-human's ``plotting/analyses.py`` ``ShapeBias``.

Decisions live in model-vs-human's per-trial CSV schema
(``subj,session,trial,rt,object_response,category,condition,imagename``), so human and
model decisions are interchangeable and every score can be recomputed offline. Pure NumPy;
the probe (``repro.probes.shape_bias``) produces the decisions.

Rules (METHODS.md section 3): the shape class is the ``category`` column (for model rows,
the first ``-`` token of the image name without digits); the texture class is the last
``-`` token of the image name without digits and extension; trials whose shape and texture
class agree are dropped; S and T count the remaining decisions equal to the shape and the
texture class; other decisions (and a human's ``na``) count in n but in neither S nor T.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repro.base.errors import DataError
from repro.base.results import ConditionCount, ProbeResult
from repro.base.stats import binomial_interval
from repro.datasets.categories16 import CategoryMapping, get_mapping
from repro.published.fetch import verify_if_pinned
from repro.scoring.cue_conflict_names import shape_class, texture_class
from repro.scoring.decisions_check import check_trials

COLUMNS: tuple[str, ...] = (
    "subj",
    "session",
    "trial",
    "rt",
    "object_response",
    "category",
    "condition",
    "imagename",
)
NO_RESPONSE = "na"  # a human subject's missing answer in model-vs-human's files
MISSING = "NaN"  # how model-vs-human writes rt and condition for model rows


@dataclass(frozen=True)
class ShapeBiasScore:
    """Shape bias with its counts.

    n: cue-conflict trials after dropping those whose shape and texture class agree
    shape, texture: decisions equal to the shape class / the texture class
    shape_bias: shape / (shape + texture); None when no decision hit either class
    """

    n: int
    shape: int
    texture: int
    shape_bias: float | None

    def interval(
        self, confidence: float = 0.95, method: str = "wilson"
    ) -> tuple[float, float] | None:
        """Binomial interval of the shape fraction among the shape-or-texture decisions."""
        decided = self.shape + self.texture
        if decided == 0:
            return None
        return binomial_interval(self.shape, decided, confidence, method)

    def as_json(self) -> dict[str, int | float | None]:
        return {
            "n": self.n,
            "shape": self.shape,
            "texture": self.texture,
            "shape_bias": self.shape_bias,
        }


# ------------------------------------------------------------------------ names and decisions


def decision_from_probabilities(
    probs: np.ndarray, mapping: CategoryMapping | str | None = None
) -> list[str]:
    """16-class decisions from (N, 1000) softmax probabilities (mean per category, argmax)."""
    m = (
        get_mapping()
        if mapping is None
        else (get_mapping(mapping) if isinstance(mapping, str) else mapping)
    )
    return m.decisions(probs)


def decision_rows(
    decisions: Sequence[str], imagenames: Sequence[str], subj: str, session: int = 1
) -> list[dict[str, Any]]:
    """Per-trial rows in model-vs-human's schema for one model's decisions (trials from 1)."""
    if len(decisions) != len(imagenames):
        raise ValueError(f"{len(decisions)} decisions for {len(imagenames)} images")
    return [
        {
            "subj": subj,
            "session": session,
            "trial": i + 1,
            "rt": MISSING,
            "object_response": d,
            "category": shape_class(name),
            "condition": MISSING,
            "imagename": os.path.basename(name),
        }
        for i, (d, name) in enumerate(zip(decisions, imagenames, strict=True))
    ]


# ------------------------------------------------------------------------ score


def _iter_rows(decisions: Any) -> Iterable[Mapping[str, Any]]:
    if hasattr(decisions, "to_dict") and hasattr(decisions, "columns"):  # a pandas DataFrame
        return decisions.to_dict("records")
    return decisions


def shape_bias(decisions: Any) -> ShapeBiasScore:
    """Shape bias of per-trial rows (a DataFrame or an iterable of dicts in the CSV schema)."""
    n = shape = texture = 0
    for row in _iter_rows(decisions):
        shape_cls = str(row["category"])
        texture_cls = texture_class(str(row["imagename"]))
        if shape_cls == texture_cls:
            continue
        n += 1
        response = str(row["object_response"])
        if response == shape_cls:
            shape += 1
        elif response == texture_cls:
            texture += 1
    decided = shape + texture
    return ShapeBiasScore(n, shape, texture, shape / decided if decided else None)


def score(result: ProbeResult, params: Mapping[str, Any] | None = None) -> ProbeResult:
    """The shape-bias measurement's scorer: from its per-trial rows to the counts.

    The counts ``shape_bias`` (k = shape decisions of n = shape + texture decisions; its rate is the
    shape bias), ``shape`` and ``texture`` (k of the n conflict trials)."""
    s = shape_bias(result.records)
    decided = s.shape + s.texture
    result.conditions = [
        ConditionCount("shape_bias", s.shape, decided),
        ConditionCount("shape", s.shape, s.n),
        ConditionCount("texture", s.texture, s.n),
    ]
    result.value = s.shape_bias
    result.values = {"n": float(s.n), "shape": float(s.shape), "texture": float(s.texture)}
    return result


# ------------------------------------------------------------------------ CSV


def read_decisions_csv(
    path: str | os.PathLike[str],
    mapping: CategoryMapping | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """Read and validate a per-trial decisions CSV; DataError names file, row and column.

    Across rows (``repro.scoring.decisions_check``): no trial or image twice, and every ``category``
    equal to the shape class of its image name. A pinned published file (a model-vs-human CSV in the
    data directory ``data_dir``, default the configured one) is verified against its sha256 first.
    """
    path = Path(path)
    cats = set((mapping or get_mapping()).categories)
    if not path.is_file():
        raise DataError(
            f"{path}: decisions CSV not found (expected a file with columns {','.join(COLUMNS)}; "
            "check the path)"
        )

    verify_if_pinned(path, data_dir)
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    try:
        with path.open(newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise DataError(f"{path}: empty file; expected the header {','.join(COLUMNS)}")
            header = [h.strip() for h in header]
            missing = [c for c in COLUMNS if c not in header]
            if missing:
                raise DataError(
                    f"{path}: row 1 (header): missing column(s) {', '.join(missing)}; expected "
                    f"{','.join(COLUMNS)}"
                )
            pos = {c: header.index(c) for c in COLUMNS}
            for line, fields in enumerate(reader, start=2):
                if not fields or all(not f.strip() for f in fields):
                    continue
                if len(fields) != len(header):
                    raise DataError(
                        f"{path}: row {line}: {len(fields)} fields, expected {len(header)} "
                        f"({','.join(header)})"
                    )
                row = {c: fields[pos[c]].strip() for c in COLUMNS}
                _check_row(path, line, row, cats)
                rows.append(row)
                lines.append(line)
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: not a UTF-8 text CSV ({exc.reason} at byte {exc.start}); expected a "
            "decisions CSV saved as UTF-8"
        ) from None
    except csv.Error as exc:
        raise DataError(
            f"{path}: malformed CSV ({exc}); expected one trial per line, quotes closed on the "
            "same line"
        ) from None
    if not rows:
        raise DataError(
            f"{path}: no trials after the header; expected at least one row of {','.join(COLUMNS)}"
        )
    check_trials(path, rows, lines)
    return rows


def _check_row(path: Path, line: int, row: dict[str, Any], cats: set[str]) -> None:
    def bad(column: str, expected: str) -> DataError:
        return DataError(
            f"{path}: row {line}, column {column}: got {row[column]!r}, expected {expected}"
        )

    for column in ("session", "trial"):
        try:
            row[column] = int(row[column])
        except ValueError:
            raise bad(column, "an integer") from None
    try:
        rt = float(row["rt"])
    except ValueError:
        raise bad("rt", "a number or NaN") from None
    row["rt"] = rt if math.isfinite(rt) else MISSING
    if row["category"] not in cats:
        raise bad("category", "one of the 16 categories (the shape class)")
    if row["object_response"] not in cats and row["object_response"] != NO_RESPONSE:
        raise bad("object_response", f"one of the 16 categories or {NO_RESPONSE!r}")
    if not row["imagename"] or texture_class(row["imagename"]) not in cats:
        raise bad(
            "imagename",
            "a cue-conflict name like airplane1-bicycle2.png (texture class after the last '-')",
        )


def write_decisions_csv(rows: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write per-trial rows in model-vs-human's schema (atomically)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([_cell(row.get(c, MISSING)) for c in COLUMNS])
    tmp.replace(path)
    return path


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return str(value)

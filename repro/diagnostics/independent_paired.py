"""Claims: a stored measurement and another lab's predictions of the same images, image by image.

Where an independent source publishes per-image predictions of a study model (a ``kind =
"predictions"`` file of its declaration: ImageNet-X's of torchvision's ResNet-50 V1, Gavrikov's
``tv_resnet50``) and the store holds a current measurement of that model with per-image records of
the same column, the two are compared on the images both count (``repro.scoring.per_image``: the
benchmark the column map names, e.g. the ReaL last batch's 326 images):

- the 2x2 table: both correct, ours only, theirs only, neither;
- the difference of the two rates (ours - theirs, in the column's unit) with Newcombe's paired
  interval and the exact McNemar test of the discordant images
  (``repro.claims.agreement.paired_table``), Holm-adjusted over the rows of each column;
- the label by the per-model agreement rule (``repro.claims.agreement.decide``) with the margin of
  the column map entry, else the study's implementation margin for the column: ``agrees`` when the
  interval lies inside it, ``differs`` when the test excludes 0 and the difference lies outside it,
  else ``inconclusive``.

The study's own published values carry no per-image decisions (benchmark.csv prints rates; the
ReaL last batch's 282 of 326 is inferred from a rounded percentage), so they are compared with the
source binomially (``repro.diagnostics.independent``); this pairing is the comparison on the same
images that the data allows once a user has measured a covered model. Each (model, column) the
sources cover without such a record gets a note saying what is missing.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from repro.base.settings import data_dir as resolve_data_dir
from repro.base.study import Study
from repro.claims.agreement import (
    ALPHA,
    decide,
    holm_by_column,
    paired_table,
    study_margins,
)
from repro.published.independent import source_path, study_declarations

NOT_SAME = "not_same"
SCALE = {"percent": 100.0, "fraction": 1.0}


@dataclass(frozen=True)
class PairedRow:
    """One study model x source x column compared image by image."""

    study_model: str
    source: str
    source_model: str
    identity: str
    column: str
    benchmark: str
    measurement: str
    ours: tuple[int, int]  # k of n over the shared images
    theirs: tuple[int, int]
    both: int
    ours_only: int
    theirs_only: int
    neither: int
    difference: float  # ours - theirs, in the column's unit
    interval: tuple[float, float] | None
    confidence: float
    p: float | None
    p_holm: float | None
    margin: float | None
    label: str
    why: str
    unshared: tuple[int, int] = (0, 0)  # images only our side / only theirs counts

    def cells(self) -> dict[str, str]:
        """The row's numbers as text, one format for the command line and the report.

        ``ours``/``theirs`` k/n, ``difference`` and its ``interval`` (3 significant digits, signed;
        "-" without one), McNemar's ``p`` and its Holm-adjusted ``p_holm`` (2 significant digits,
        the label rests on ``p_holm``; "-" without one)."""
        interval = (
            "-" if self.interval is None else f"[{self.interval[0]:+.3g}, {self.interval[1]:+.3g}]"
        )
        return {
            "ours": f"{self.ours[0]}/{self.ours[1]}",
            "theirs": f"{self.theirs[0]}/{self.theirs[1]}",
            "difference": f"{self.difference:+.3g}",
            "interval": interval,
            "p": "-" if self.p is None else f"{self.p:.2g}",
            "p_holm": "-" if self.p_holm is None else f"{self.p_holm:.2g}",
        }

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Candidate:
    """A study model paired with another lab's per-image column of its checkpoint.

    With the identity level, the benchmark the column scores, the margin and the file."""

    study_model: str
    source: str
    source_model: str
    identity: str
    column: str
    benchmark: str
    unit: str
    margin: float | None
    path: Path


def _candidates(study: Study, data_dir: Path) -> list[_Candidate]:
    """Every (study model, per-image source column) the declarations map, not_same left out."""
    margins = study_margins(study)
    out = []
    for decl in study_declarations(study):
        for n, entry in enumerate(decl.columns, start=1):
            f = decl.file(entry, n)
            if f.kind != "predictions":
                continue
            family = margins.family(entry.column)
            margin = (
                entry.margin if entry.margin is not None else (family.margin if family else None)
            )
            for ident in decl.identity:
                if ident.source_model != f.model or ident.level == NOT_SAME:
                    continue
                out.append(
                    _Candidate(
                        ident.study_model,
                        decl.name,
                        f.model,
                        ident.level,
                        entry.column,
                        entry.value,
                        entry.unit,
                        margin,
                        source_path(decl, f, data_dir),
                    )
                )
    return out


def _measurement_of(column: str) -> str | None:
    """The measurement whose stored per-image records give ``column``."""
    from repro.measurements.registry import MEASUREMENTS

    names = [name for name, m in MEASUREMENTS.items() if column in m.columns]
    return names[0] if names else None


def paired_rows(
    study: Study,
    store_dir: str | os.PathLike[str],
    *,
    versions: dict[str, str] | None,
    data_dir: str | os.PathLike[str] | None = None,
    alpha: float = ALPHA,
    models: set[str] | None = None,
) -> tuple[list[PairedRow], list[str]]:
    """The paired comparisons the store allows, and one note per covered pair it does not.

    ``models``: only these study models (None: all)."""
    from repro.scoring.per_image import paired_counts, per_image
    from repro.scoring.predictions import from_records, read_predictions
    from repro.store.export import JOB_OK, record_state
    from repro.store.files import Store

    root = resolve_data_dir(data_dir)
    store = Store(store_dir)
    confidence = 1 - 2 * alpha
    theirs_cache: dict[tuple[Path, str], Any] = {}
    staged: list[tuple[_Candidate, str, Any, Any, Any]] = []
    notes: list[str] = []
    for c in _candidates(study, root):
        if models is not None and c.study_model not in models:
            continue
        what = f"{c.study_model} x {c.column} ({c.source}: {c.source_model})"
        measurement = _measurement_of(c.column)
        record = None if measurement is None else store.read(c.study_model, measurement)
        if record is None:
            notes.append(f"{what}: no stored {measurement or 'measurement'} record")
            continue
        where = store.record_path(c.study_model, measurement)  # type: ignore[arg-type]
        state = record_state(record, versions)
        if state.status != JOB_OK or state.evidence:
            notes.append(f"{what}: {where} is {state.why or state.evidence} (not compared)")
            continue
        if not record.records_file:
            notes.append(f"{what}: {where} has no per-image records (imported values only)")
            continue
        ours = per_image(
            c.benchmark, from_records(store.read_items(record), source=f"{where} records")
        )
        key = (c.path, c.benchmark)
        if key not in theirs_cache:  # the file is parsed once per process (read_predictions)
            theirs_cache[key] = per_image(c.benchmark, read_predictions(c.path))
        theirs = theirs_cache[key]
        table, only_ours, only_theirs = paired_counts(ours, theirs)
        scale = SCALE[c.unit]
        d = paired_table(
            table.both, table.first_only, table.second_only, table.neither, scale, confidence
        )
        staged.append((c, measurement, table, (only_ours, only_theirs), d))  # type: ignore[arg-type]
    p_holm = holm_by_column([(c.column, d.p) for c, _, _, _, d in staged])
    rows = []
    for (c, measurement, table, unshared, d), ph in zip(staged, p_holm, strict=True):
        scale = SCALE[c.unit]
        diff = scale * (table.first_only - table.second_only) / table.n if table.n else 0.0
        if c.margin is None:
            label, why = "inconclusive", f"no implementation margin declared for {c.column}"
        else:
            label, why = decide(diff, d, ph, c.margin, alpha)
        rows.append(
            PairedRow(
                c.study_model,
                c.source,
                c.source_model,
                c.identity,
                c.column,
                c.benchmark,
                measurement,
                (table.both + table.first_only, table.n),
                (table.both + table.second_only, table.n),
                table.both,
                table.first_only,
                table.second_only,
                table.neither,
                diff,
                d.interval,
                confidence,
                d.p,
                ph,
                c.margin,
                label,
                why,
                unshared,
            )
        )
    return rows, notes

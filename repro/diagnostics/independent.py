"""Claims: independent evidence, model by model.

Each value another lab published for a study model (``repro.published.independent``: the source's
identity map names the model, its column map the study column) is set beside the study's published
value and labelled by the rule the study declares (its protocols file, ``rule``):

- ``other_protocol``: a protocol field both sides state differs (crop, interpolation, image set,
  corruption set, aggregation): the level is never judged; the ranking over the shared models is
  (Spearman's rho with its n, in the summary);
- else the interval of the difference d = independent - published, d +- (r_pub + r_ind) with r
  half a unit of the last printed decimal, against the margin m (the column map's, else the
  study's implementation margin for the column, ``repro.claims.agreement``): ``agrees`` inside
  [-m, m], ``differs`` wholly outside, ``inconclusive`` otherwise (and when no margin is declared);
- ``not_same``: the identity map says the names collide but the weights are others: listed, never
  compared.

Every ``differs`` names its most likely cause from the declared protocols (a field one side does
not state, an identity that is only probable) or "unexplained". Each value also carries its own
binomial (Wilson 95%) interval from the images behind it, widened by its rounding interval.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from repro.base.settings import data_dir as resolve_data_dir
from repro.base.stats import binomial_interval
from repro.base.study import Study
from repro.claims.agreement import study_margins
from repro.published.independent import (
    Declaration,
    ProtocolsFile,
    SourceValue,
    check_maps,
    merged,
    read_values,
    source_path,
    study_declarations,
    study_protocols,
)
from repro.published.study_data import study_table

# repro.scoring.accuracy and repro.scoring.predictions are imported where a per-image source is
# read: the other sources never need them.

AGREES, DIFFERS, INCONCLUSIVE = "agrees", "differs", "inconclusive"
OTHER_PROTOCOL, NOT_SAME = "other_protocol", "not_same"
LABELS = (AGREES, DIFFERS, INCONCLUSIVE, OTHER_PROTOCOL, NOT_SAME)
SCALE = {"percent": 100.0, "fraction": 1.0}


@dataclass(frozen=True)
class Row:
    """One (study model, source, column) comparison."""

    study_model: str
    source: str
    source_model: str
    identity: str
    column: str
    entry: str  # the column map row's label (a summary line)
    published: float | None
    independent: float
    difference: float | None
    label: str
    protocol_note: str
    interval: tuple[float, float] | None = None  # of the difference
    margin: float | None = None
    cause: str = ""
    published_interval: tuple[float, float] | None = None
    independent_interval: tuple[float, float] | None = None
    count: tuple[int, int] | None = None  # the independent value as k of n images
    where: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _same(a: str, b: str) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-9)
    except ValueError:
        return a.strip() == b.strip()


def compare_protocols(study: dict[str, str], source: dict[str, str]) -> tuple[list[str], list[str]]:
    """(fields both state that differ, as 'field: source vs study'; fields one side leaves out)."""
    differ, unstated = [], []
    for key in sorted(set(study) | set(source)):
        if key in study and key in source:
            if not _same(study[key], source[key]):
                differ.append(f"{key}: {source[key]} vs {study[key]}")
        else:
            side = "source" if key not in source else "study"
            unstated.append(f"{key} (not stated by the {side})")
    return differ, unstated


def rounding(decimals: int | None) -> float:
    return 0.0 if decimals is None else 0.5 * 10.0 ** (-decimals)


def value_interval(
    value: float, unit: str, images: int | None, decimals: int | None
) -> tuple[float, float] | None:
    """The value's binomial (Wilson 95%) interval from its images, widened by its rounding."""
    if not images:
        return None
    scale = SCALE[unit]
    k = min(images, max(0, round(value / scale * images)))
    lo, hi = binomial_interval(k, images)
    r = rounding(decimals)
    return (scale * lo - r, scale * hi + r)


#: float32's relative resolution (its machine epsilon, 2^-23)
FLOAT32_RESOLUTION = 2.0**-23


def exact_difference(value: float, published: float, decimals: int | None, sp: Any) -> float:
    """The difference independent - published, at the precision the two values have.

    Where both sides state their printed decimals, the difference has no more decimals than the
    finer of them, so the float rounding below it is dropped. Where a side is printed in full
    (benchmark.csv writes float32 values as doubles: 54.53 is 54.529999...), a difference below
    float32's resolution of the two values (2^-23 of the larger) is no difference: 0.0, not 1.2e-09.
    """
    diff = value - published
    mine, theirs = decimals, getattr(sp, "decimals", None) if sp else None
    if mine is not None and theirs is not None:
        return round(diff, max(mine, theirs))
    if abs(diff) <= FLOAT32_RESOLUTION * max(abs(value), abs(published)):
        return 0.0
    return diff


def decide(diff: float, half: float, margin: float | None) -> tuple[str, tuple[float, float]]:
    lo, hi = diff - half, diff + half
    if margin is None:
        return INCONCLUSIVE, (lo, hi)
    if -margin <= lo and hi <= margin:
        return AGREES, (lo, hi)
    if hi < -margin or lo > margin:
        return DIFFERS, (lo, hi)
    return INCONCLUSIVE, (lo, hi)


def cause_of(unstated: list[str], identity: str, agrees_elsewhere: bool) -> str:
    """The most likely cause of a ``differs`` from what is declared.

    A protocol field a side does not state; else an identity that is only probable (unless the same
    source model agrees with the study on another same-protocol column: then the weights are not
    the suspect); else "unexplained".
    """
    if unstated:
        return "protocol not stated: " + ", ".join(unstated)
    if identity == "probable" and not agrees_elsewhere:
        return "identity only probable: possibly other weights"
    if agrees_elsewhere:
        return (
            "unexplained (the same checkpoint agrees on another column of this source: an "
            "implementation effect on this dataset beyond the margin)"
        )
    return "unexplained"


def _prediction_values(decl: Declaration, data_dir: Path) -> list[SourceValue]:
    """Per-image sources: each column's benchmark scored on the predictions (counts of images)."""
    from repro.scoring.accuracy import score
    from repro.scoring.predictions import read_predictions

    out = []
    for n, entry in enumerate(decl.columns, start=1):
        f = decl.file(entry, n)
        if f.kind != "predictions":
            continue
        # parsed once per process for all the columns scored on it (read_predictions' cache)
        count = score(entry.value, read_predictions(source_path(decl, f, data_dir)))
        out.append(
            SourceValue(
                source=decl.name,
                source_model=f.model,
                column=entry.column,
                entry=n,
                label=entry.name,
                value=SCALE[entry.unit] * count.k / count.n,
                unit=entry.unit,
                decimals=None,
                images=count.n,
                protocol=merged(decl.protocol, entry.protocol),
                where=f"{f.handle}: {entry.value} {count.k}/{count.n}",
                count=(count.k, count.n),
            )
        )
    return out


def compare_source(
    decl: Declaration,
    table: dict[str, dict[str, float]],
    protocols: ProtocolsFile | None,
    margins: Any,
    data_dir: Path,
) -> list[Row]:
    models = list(table)
    columns = sorted({c for row in table.values() for c in row})
    check_maps(decl, models, columns)
    values = read_values(decl, data_dir) + _prediction_values(decl, data_dir)
    by_model: dict[str, list[SourceValue]] = {}
    for v in values:
        by_model.setdefault(v.source_model, []).append(v)
    rows: list[Row] = []
    pending: dict[int, list[str]] = {}  # differs rows: their unstated protocol fields
    for ident in decl.identity:
        for v in by_model.get(ident.source_model, []):
            published = table.get(ident.study_model, {}).get(v.column)
            if published is not None and math.isnan(published):
                published = None
            entry = decl.columns[v.entry - 1]
            sp = protocols.of(v.column) if protocols else None
            own = protocols.of_model(v.column, ident.study_model) if protocols else None
            study_side = merged(sp.stated() if sp else {}, entry.study_protocol, own)
            differ, unstated = compare_protocols(study_side, v.protocol)
            ind_iv = value_interval(v.value, v.unit, v.images, v.decimals)
            pub_iv = (
                value_interval(published, v.unit, sp.n, sp.decimals)
                if (sp and sp.n and published is not None)
                else None
            )
            base = dict(
                study_model=ident.study_model,
                source=decl.name,
                source_model=v.source_model,
                identity=ident.level,
                column=v.column,
                entry=v.label,
                published=published,
                independent=v.value,
                published_interval=pub_iv,
                independent_interval=ind_iv,
                count=v.count,
                where=v.where,
            )
            if ident.level == "not_same":
                rows.append(
                    Row(
                        **base,
                        difference=(
                            None
                            if published is None
                            else exact_difference(v.value, published, v.decimals, sp)
                        ),
                        label=NOT_SAME,
                        protocol_note="other weights under a colliding name: " + ident.evidence,
                    )
                )
                continue
            if published is None:
                continue  # the study publishes no value of this column for the model
            diff = exact_difference(v.value, published, v.decimals, sp)
            if differ:
                rows.append(
                    Row(
                        **base,
                        difference=diff,
                        label=OTHER_PROTOCOL,
                        protocol_note="other protocol: " + "; ".join(differ),
                    )
                )
                continue
            family = margins.family(v.column) if margins is not None else None
            margin = (
                entry.margin if entry.margin is not None else (family.margin if family else None)
            )
            half = rounding(v.decimals) + rounding(sp.decimals if sp else None)
            label, interval = decide(diff, half, margin)
            note = "same protocol" + ("; " + ", ".join(unstated) if unstated else "")
            if own is not None:  # the model's own protocol made it comparable: say on what
                stated = ", ".join(f"{k} {v}" for k, v in own.stated().items())
                note += f"; the study's own protocol for this model: {stated} ([[model]] entry)"
            rows.append(
                Row(
                    **base,
                    difference=diff,
                    label=label,
                    protocol_note=note,
                    interval=interval,
                    margin=margin,
                )
            )
            if label == DIFFERS:
                pending[len(rows) - 1] = unstated
    agreeing = {(r.study_model, r.source_model) for r in rows if r.label == AGREES}
    for i, unstated in pending.items():
        r = rows[i]
        rows[i] = replace(
            r, cause=cause_of(unstated, r.identity, (r.study_model, r.source_model) in agreeing)
        )
    return rows


def independent_rows(
    study: Study, data_dir: str | os.PathLike[str] | None = None
) -> tuple[list[Row], list[Declaration], str]:
    """Every comparison of the study's independent sources (rows, sources, the declared rule)."""
    root = resolve_data_dir(data_dir)
    table = study_table(study, root).values
    protocols = study_protocols(study, list(table))
    margins = study_margins(study)
    decls = study_declarations(study)
    rows: list[Row] = []
    for decl in decls:
        rows += compare_source(decl, table, protocols, margins, root)
    return rows, decls, protocols.rule if protocols else ""


def spearman(pairs: Sequence[tuple[float, float]]) -> tuple[float | None, int]:
    """Spearman's rho of (published, independent) over the shared models, and n.

    rho is None below 3 or when a side is constant.
    """
    n = len(pairs)
    if n < 3:
        return None, n
    xs, ys = zip(*pairs, strict=True)
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return None, n
    from scipy.stats import spearmanr

    return float(spearmanr(xs, ys).statistic), n


def summary(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Per source x column-map row: models, label counts, largest |difference|, Spearman.

    The largest |difference| is among the judged rows (agrees / differs / inconclusive); Spearman is
    over the shared models (every column of a cell family: the median rho over its cells).
    """
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.source, r.entry), []).append(r)
    out = []
    for (source, entry), rs in groups.items():
        compared = [r for r in rs if r.label != NOT_SAME]
        judged = [r for r in compared if r.label in (AGREES, DIFFERS, INCONCLUSIVE)]
        by_column: dict[str, list[tuple[float, float]]] = {}
        for r in compared:
            if r.published is not None:
                by_column.setdefault(r.column, []).append((r.published, r.independent))
        rhos = [spearman(p) for p in by_column.values()]
        valid = sorted(rho for rho, _ in rhos if rho is not None)
        rho = (
            valid[len(valid) // 2]
            if len(valid) % 2
            else ((valid[len(valid) // 2 - 1] + valid[len(valid) // 2]) / 2 if valid else None)
        )
        out.append(
            {
                "source": source,
                "column": entry,
                "models": len({r.study_model for r in compared}),
                "cells": len(by_column),
                **{label: sum(r.label == label for r in rs) for label in LABELS},
                "largest_abs_difference_judged": max(
                    (abs(r.difference) for r in judged if r.difference is not None), default=None
                ),
                "largest_abs_difference": max(
                    (abs(r.difference) for r in compared if r.difference is not None), default=None
                ),
                "spearman": rho,
                "spearman_n": max((n for _, n in rhos), default=0),
            }
        )
    return out

"""Placement: a ``StudyPlacement`` as plain text (``python -m repro place``) and as JSON data.

The JSON data is what ``place --json`` prints. Every value says what it rests on (measured with
its count, or external with its protocol and source); every rank has its tie range and its range
over the value's interval."""

from __future__ import annotations

from typing import Any

from repro.base.numbers import fmt_interval, fmt_num
from repro.base.output_schemas import VERSIONS
from repro.placement.place import StudyPlacement
from repro.placement.rank import Rank

#: the columns of a ranked value, in the placement table and the references' table
_RANKED = ["column", "value", "95% interval", "rank", "rank over interval", "percentile"]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def value_cells(value: float | None, interval: tuple[float, float] | None) -> list[str]:
    """The value and 95% interval cells of a placement row (the text table and the report's)."""
    return [fmt_num(value), fmt_interval(interval)]


def ranked_among(r: Rank) -> int:
    """How many values a rank is out of: the population's defined values and this one.

    The N of "27 of 49", and ``of`` in ``place --json``."""
    return r.of + 1


def rank_cells(r: Rank | None, *, of: bool = True, at_chance: bool = False) -> list[str]:
    """The rank, rank-over-interval and percentile cells of a placement row.

    ``of``: the rank says out of how many (N values and this one; the report's table says it in
    its text); ``at_chance``: the value rests on decisions at chance, and the rank says so."""
    if r is None:
        return ["-", "-", "-"]
    rank = f"{r.rank_text()} of {ranked_among(r)}" if of else r.rank_text()
    return [rank + (" (AT CHANCE)" if at_chance else ""), r.range_text(), f"{r.percentile:.0f}"]


def text(p: StudyPlacement) -> str:
    study = p.study
    placement = study.placement
    assert placement is not None
    label = p.placed[0].population.label if p.placed else (placement.population_label or study.name)
    lines = [f"{p.model} in {study.name} ({study.title}), among {label}"]
    if p.placed:
        rows = [[*_RANKED, "rests on"]]
        for x in p.placed:
            rows.append(
                [
                    x.value.column,
                    *value_cells(x.value.value, x.value.interval),
                    *rank_cells(x.rank, at_chance=x.at_chance),
                    x.value.basis(),
                ]
            )
        lines += [
            "",
            *_table(rows),
            "  rank: among the population's values and this one (1 = the largest); "
            "rank over interval: its rank at the two ends of its 95% interval",
        ]
        tests: dict[str, list[str]] = {}  # one line per test: the columns of one record share it
        for x in p.placed:
            if x.note:
                lines.append(f"  {x.value.column}: {x.note}")
            if x.chance is not None:
                tests.setdefault(x.chance.text(), []).append(x.value.column)
        lines += [f"  {', '.join(cols)}: {test}" for test, cols in tests.items()]
        for col in dict.fromkeys(x.column for x in p.placed):
            lines.append(
                f"  {col.label}: protocol {col.protocol}"
                + (f"; rank 1 = the largest value: {col.larger}" if col.larger else "")
            )
    if p.references:
        lines += ["", "references (ranked the same way):"]
        rows = [["reference", *_RANKED]]
        for ref in p.references:
            for col, r in ref.ranks.items():
                rows.append(
                    [
                        ref.reference.label,
                        col,
                        *value_cells(ref.reference.values[col], ref.reference.intervals.get(col)),
                        *rank_cells(r),
                    ]
                )
        lines += ["  " + line for line in _table(rows)]
    for col in p.missing:
        lines.append(f"no value of {col.label} ({', '.join(col.values)}): measured or external")
    if p.values.unusable:
        lines += [""] + [f"not used: {m}: {why}" for m, why in sorted(p.values.unusable.items())]
    if p.not_comparable:
        lines += ["", "not on this study's scale (not ranked here):"]
        for reason in dict.fromkeys(n.reason for n in p.not_comparable):
            cols = [n for n in p.not_comparable if n.reason == reason]
            lines.append(
                "  "
                + ", ".join(
                    f"{n.value.column} = {fmt_num(n.value.value)} ({n.value.label})" for n in cols
                )
            )
            lines.append(f"    why: {reason}")
    if p.external:
        lines += [
            "",
            "external values of other columns (not ranked; drawn on the study's figures"
            + (", read by its fits)" if p.inside else ")")
            + ":",
        ]
        lines += [f"  {v.column} = {fmt_num(v.value)}: {v.basis()}" for v in p.external]
    lines += ["", ("inside the population: " if p.inside else "outside the population: ") + p.scope]
    for f in p.fits:
        head = (
            f"  residual of {f.label or f.fit.category} (least-squares fit, degree "
            f"{f.fit.degree}): "
        )
        if f.residual is None:
            lines.append(head + f"none: {f.note}")
            continue
        r = f.residual
        over = (
            f", {fmt_num(r.over_intervals[0], 2)} to {fmt_num(r.over_intervals[1], 2)} over its "
            "intervals"
            if r.over_intervals
            else ""
        )
        lines.append(
            head
            + f"{r.residual:+.2f} (observed {r.y:.2f}, fit {r.predicted:.2f}; 95% prediction band "
            f"+-{r.band:.2f} over n = {r.n}: {'inside' if r.inside_band else 'OUTSIDE'}{over})"
        )
    for c in p.claims:
        cols = ", ".join(f"{col} {kind}" for col, kind in c.columns)
        lines.append(
            f"  claim {c.claim} with this model as one more: n = {c.n}: {c.value:.4f} ({c.verdict} "
            f"under the claim's printed-digit tolerance); n = {c.base_n}: {c.base_value:.4f} "
            f"({c.base_verdict}); its values read: {cols}"
        )
    return "\n".join(lines)


def _rank_json(r: Rank | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "rank": r.rank,
        "tie_worst": r.tie_worst,
        "best": r.best,
        "worst": r.worst,
        "percentile": r.percentile,
        "of": ranked_among(r),  # the N of "rank of N": the population's values and this one
        "population": r.of,  # the population's defined values it is ranked among
        "undefined": r.undefined,
    }


def _value_json(v: Any) -> dict[str, Any]:
    return {
        "column": v.column,
        "value": v.value,
        "evidence": v.kind,
        "interval": v.interval,
        "k": v.k,
        "n": v.n,
        "measurement": v.measurement,
        "protocol": v.protocol,
        "source": v.source,
        "unit": v.unit,
    }


def as_json(p: StudyPlacement) -> dict[str, Any]:
    """One study's placement as ``place --json`` writes it (``repro.base.output_schemas``)."""
    return {
        "schema_version": VERSIONS["place"],
        "study": p.study.name,
        "model": p.model,
        "inside": p.inside,
        "scope": p.scope,
        "placed": [
            {
                "placement_column": x.column.column,
                "protocol": x.column.protocol,
                **_value_json(x.value),
                "rank": None
                if x.rank is None
                else {**(_rank_json(x.rank) or {}), "at_chance": x.at_chance},
                "chance": None if x.chance is None else x.chance.as_json(),
                "population": x.population.label,
                "note": x.note,
            }
            for x in p.placed
        ],
        "missing": [c.column for c in p.missing],
        "not_used": dict(sorted(p.values.unusable.items())),
        "not_comparable": [{**_value_json(n.value), "reason": n.reason} for n in p.not_comparable],
        "external": [_value_json(v) for v in p.external],
        "references": [
            {
                "label": r.reference.label,
                "values": dict(r.reference.values),
                "ranks": {c: _rank_json(k) for c, k in r.ranks.items()},
            }
            for r in p.references
        ],
        "residuals": [
            {
                "bias": f.fit.bias,
                "category": f.fit.category,
                "degree": f.fit.degree,
                "note": f.note,
                **(
                    {}
                    if f.residual is None
                    else {
                        "x": f.residual.x,
                        "y": f.residual.y,
                        "predicted": f.residual.predicted,
                        "residual": f.residual.residual,
                        "band": f.residual.band,
                        "n": f.residual.n,
                        "over_intervals": f.residual.over_intervals,
                    }
                ),
            }
            for f in p.fits
        ],
        "claims_n_plus_1": [
            {
                "claim": c.claim,
                "base_value": c.base_value,
                "base_n": c.base_n,
                "base_verdict": c.base_verdict,
                "value": c.value,
                "n": c.n,
                "verdict": c.verdict,
                "columns": dict(c.columns),
            }
            for c in p.claims
        ],
    }

"""Report section "Placement": the placed models ranked among a study's population.

One section per study that declares a ``[placement]``, after the study's own sections: the
models a report places (``repro.placement.selection``: a run's models, else the store's, and
those with externally known values; study models left out) ranked among the study's
population on the columns on its own scale (``repro.placement.place``), with what each value
rests on (measured with its count, or external with its protocol), the tie range and the range
over the interval; the study's reference rows; a strip figure per column; the values on other
scales, not ranked, with the reason; residuals and claims with n + 1 for models inside the
population, the study's note for those outside. Nothing here is filled in: a model without a
value on a column is listed as such.
"""

from __future__ import annotations

from typing import Any

from repro.base.numbers import fmt_num
from repro.placement.output import rank_cells, value_cells
from repro.placement.place import StudyPlacement, place
from repro.placement.selection import models_to_place
from repro.placement.values import model_values
from repro.report.markdown import row
from repro.report.sections.placement_figure import strip
from repro.zoo.external import external_values


def _cell(text: str) -> str:
    return text.replace("|", "/")


def _placements(ctx: Any) -> list[StudyPlacement]:
    claims = ctx.claims
    ext = external_values()
    members = set(claims.population)
    out = []
    for model in models_to_place(ctx.plans, ctx.store, ext, with_store=ctx.place_stored):
        if model in members:
            continue
        values = model_values(model, ctx.store, ext)
        if values.empty and not values.unusable:
            continue
        out.append(place(claims.study, values, claims.data_dir, context=claims, references=not out))
    return out


def _table(placements: list[StudyPlacement]) -> list[str]:
    lines = [
        "| model | column | value | 95% interval | rests on | rank | rank over the interval | "
        "percentile |",
        "|---|---|---:|---|---|---:|---|---:|",
    ]
    for p in placements:
        for x in p.placed:
            lines.append(
                row(
                    f"`{p.model}`",
                    x.column.label,
                    *value_cells(x.value.value, x.value.interval),
                    _cell(x.value.basis()),
                    *rank_cells(x.rank, of=False, at_chance=x.at_chance),
                )
            )
        for col in p.missing:
            what = "no usable value (see Not used)" if p.values.unusable else "not measured"
            lines.append(f"| `{p.model}` | {col.label} | {what} | | | | | |")
    refs = placements[0].references if placements else []
    for ref in refs:
        for col, r in ref.ranks.items():
            kn = ref.reference.counts.get(col)
            basis = (f"{kn[0]:,}/{kn[1]:,}, " if kn else "") + ref.reference.note
            label = next(
                (c.label for c in placements[0].study.placement.columns if c.column == col), col
            )  # type: ignore[union-attr]
            lines.append(
                row(
                    f"{ref.reference.label} (reference)",
                    label,
                    *value_cells(ref.reference.values[col], ref.reference.intervals.get(col)),
                    _cell(basis),
                    *rank_cells(r, of=False),
                )
            )
    return lines


def _figure(ctx: Any, placements: list[StudyPlacement], column: Any) -> list[str]:
    placed = [(p.model, x) for p in placements for x in p.placed if x.column is column]
    rows = [(m, x.value) for m, x in placed]
    chance = [x.at_chance for _, x in placed]
    if not rows:
        return []
    pop = next(x.population for p in placements for x in p.placed if x.column is column)
    refs = [
        r.reference
        for r in (placements[0].references if placements else [])
        if column.column in r.ranks
    ]
    fig = strip(column, pop, rows, refs, chance)
    name = f"placement_{ctx.claims.study.name}_{column.column.replace('/', '_')}.png"
    link = ctx.save_figure(fig, name)
    defined = [v for v in pop.values.values() if v is not None]
    alt = (
        f"Strip plot of {column.label}: the {len(defined)} values of {pop.label} as grey dots, "
        + (
            ", ".join(f"{r.label} at {r.values[column.column]:.3f}" for r in refs) + ", "
            if refs
            else ""
        )
        + ", ".join(
            f"{m} at {v.value:.3f} ({v.label})" + (" AT CHANCE" if low else "")
            for (m, v), low in zip(rows, chance, strict=True)
        )
        + ", each with its 95% interval where it has one."
    )
    return ["", f"![{alt}]({link})"]


def _scope_lines(placements: list[StudyPlacement]) -> list[str]:
    lines = []
    outside_note = ""
    for p in placements:
        if p.inside:
            lines.append(f"- `{p.model}`: inside the study's population ({p.scope}).")
            for f in p.fits:
                head = (
                    f"  - residual of {f.label or f.fit.category} (least-squares fit, degree "
                    f"{f.fit.degree})"
                )
                if f.residual is None:
                    lines.append(f"{head}: none, {f.note}.")
                    continue
                r = f.residual
                over = (
                    f"; {r.over_intervals[0]:+.2f} to {r.over_intervals[1]:+.2f} over the ends of "
                    "its intervals"
                    if r.over_intervals
                    else ""
                )
                lines.append(
                    f"{head}: {r.residual:+.2f} (observed {r.y:.2f}, fit {r.predicted:.2f}; 95% "
                    f"prediction band +-{r.band:.2f} over n = {r.n}: "
                    f"{'inside' if r.inside_band else 'OUTSIDE'}{over})."
                )
            for c in p.claims:
                cols = ", ".join(f"`{col}` {kind}" for col, kind in c.columns)
                lines.append(
                    f"  - claim `{c.claim}` with this model as one more: n = {c.n}: {c.value:.4f} "
                    f"({c.verdict} under the claim's printed-digit tolerance), n = {c.base_n}: "
                    f"{c.base_value:.4f} ({c.base_verdict}); its values read: {cols}."
                )
        else:
            head, _, note = p.scope.partition(". ")
            lines.append(f"- `{p.model}`: outside the study's population: {head}.")
            outside_note = note
    if outside_note:
        lines += ["", outside_note]
    return lines


def render(ctx: Any) -> str:
    study = ctx.claims.study
    placement = study.placement
    if placement is None:
        return ""
    placements = _placements(ctx)
    label = placement.population_label or study.name
    lines = [
        "## Placement",
        "",
        f"Models that are not study models, placed among {label} on the columns on the study's own "
        "scale (`[placement]` of its study.toml; `python -m repro place --model NAME` places any "
        "model of the store). Rank 1 is the largest value, ranked among the population's values "
        "and this one (ranks 1 to N + 1); tied values share a rank range; the rank over the "
        "interval is the rank at its two ends; the percentile is the share of the population "
        "below, ties counted half. A measured value rests on its count in the measurement store; "
        "an external value (`[models.NAME.external]` in repro.toml) has no count, is labelled "
        "with its protocol and is never counted as measured.",
    ]
    if not placements:
        return (
            "\n".join(
                lines
                + [
                    "",
                    "No model outside the study was measured or given external values for this "
                    "report.",
                ]
            )
            + "\n"
        )
    lines += ["", *_table(placements), ""]
    for col in placement.columns:
        lines.append(
            f"- {col.label}: {col.protocol}" + (f"; rank 1 = {col.larger}." if col.larger else ".")
        )
    for col in placement.columns:
        lines += _figure(ctx, placements, col)
    unusable = [
        (p.model, m, why) for p in placements for m, why in sorted(p.values.unusable.items())
    ]
    if unusable:
        lines += ["", "Not used (nothing is filled in for them):", ""]
        lines += [f"- `{m}` x `{meas}`: {_cell(why)}" for m, meas, why in unusable]
    others = [(p.model, n) for p in placements for n in p.not_comparable]
    if others:
        lines += ["", "Not on this study's scale, so not ranked here:", ""]
        for reason in dict.fromkeys(n.reason for _, n in others):
            for model in dict.fromkeys(m for m, n in others if n.reason == reason):
                vals = [
                    f"`{n.value.column}` {fmt_num(n.value.value)}"
                    + ("" if n.value.kind == "measured" else f" ({n.value.label})")
                    for m, n in others
                    if n.reason == reason and m == model
                ]
                kinds = {n.value.kind for m, n in others if n.reason == reason and m == model}
                lines.append(
                    f"- `{model}`{' (measured)' if kinds == {'measured'} else ''}: "
                    f"{', '.join(vals)}."
                )
            lines.append(f"  Why: {reason}")
    ext = [(p.model, v) for p in placements for v in p.external]
    if ext:
        lines += [
            "",
            "External values of other columns (not ranked; drawn on the study's scatter plots):",
            "",
        ]
        lines += [f"- `{m}` `{v.column}` = {fmt_num(v.value)}: {_cell(v.basis())}" for m, v in ext]
    lines += ["", *_scope_lines(placements)]
    return "\n".join(lines) + "\n"

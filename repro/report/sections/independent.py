"""Report section "What other labs measured": the study's values beside other labs' values.

The study's published values beside other labs' published values of the same checkpoints
(``repro.diagnostics.independent``, as ``python -m repro compare --independent`` prints them)
and the claims recomputed on those values (``repro.diagnostics.independent_inputs``, as
``python -m repro claims --source independent``).

Coverage by source, the label counts per source x column, the pairs that differ beyond their
margin grouped by cause, the declared name collisions (``not_same``), the claims on independent
inputs and a figure of published against independent values per column
(``repro.report.sections.independent_figure``). Empty for a study that declares no source."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repro.diagnostics.independent import (
    AGREES,
    DIFFERS,
    INCONCLUSIVE,
    NOT_SAME,
    OTHER_PROTOCOL,
    Row,
    independent_rows,
    summary,
)
from repro.report.sections.independent_figure import FIGURE, TABLE, figure, figure_rows

SAME_PROTOCOL = (AGREES, DIFFERS, INCONCLUSIVE)
EVIDENCE_WORDS = 12  # a collision's evidence as declared, cut to this many words in the table


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}"


def _md(text: str) -> str:
    """Text for a markdown table cell: ``<corruption>`` would be read as an HTML tag."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _words(text: str, n: int) -> str:
    words = " ".join(text.split()).split(" ")
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


def _published_context(ctx: Any) -> Any:
    """The study's context on its published data (the report's may be on our measurements)."""
    claims = ctx.claims
    if claims.source == "published":
        return claims
    from repro.claims.context import published_context

    return published_context(claims.study, claims.data_dir, claims.spec)


def coverage(rows: Sequence[Row], population: Sequence[str]) -> dict[str, Any]:
    """Counts of models and (model, column) pairs: overall and per source.

    Name collisions are counted apart: they are other weights."""
    pop = set(population)
    compared = [r for r in rows if r.label != NOT_SAME]
    same = [r for r in compared if r.label in SAME_PROTOCOL]
    by_source: dict[str, dict[str, Any]] = {}
    for r in rows:
        s = by_source.setdefault(
            r.source, {"models": set(), "columns": set(), "same": 0, "other": 0, "not_same": 0}
        )
        if r.label == NOT_SAME:
            s["not_same"] += 1
            continue
        s["models"].add(r.study_model)
        s["columns"].add(r.column)
        s["same" if r.label in SAME_PROTOCOL else "other"] += 1
    return {
        "population": len(pop),
        "covered": len({r.study_model for r in compared} & pop),
        "covered_same": len({r.study_model for r in same} & pop),
        "outside": len({r.study_model for r in compared} - pop),
        "by_source": by_source,
    }


def _coverage_lines(cov: dict[str, Any]) -> list[str]:
    lines = [
        f"**Coverage.** {cov['covered']} of the {cov['population']} study models have a value "
        f"from another lab ({cov['covered_same']} under the study's protocol), and "
        f"{cov['outside']} more models of the published table.",
        "",
        "| source | models | columns | pairs, same protocol | pairs, other protocol |",
        "|---|---|---|---|---|",
    ]
    for source, s in cov["by_source"].items():
        lines.append(
            f"| {source} | {len(s['models'])} | {len(s['columns'])} | {s['same']} | {s['other']} |"
        )
    return lines


def _agreement_lines(rows: Sequence[Row], summ: Sequence[dict[str, Any]]) -> list[str]:
    n = {label: sum(r.label == label for r in rows) for label in (*SAME_PROTOCOL, OTHER_PROTOCOL)}
    lines = [
        f"**Agreement.** Of {sum(n[x] for x in SAME_PROTOCOL)} pairs under the same protocol, "
        f"{n[AGREES]} agree, {n[DIFFERS]} differ and {n[INCONCLUSIVE]} are inconclusive "
        f"(against the column's margin, widened by the printed decimals); {n[OTHER_PROTOCOL]} "
        "pairs are of another protocol: ranking only.",
        "",
        "| source | column | models | agrees/differs/inconclusive/other protocol "
        "| largest abs. difference: same protocol, all | Spearman (n) |",
        "|---|---|---|---|---|---|",
    ]
    for s in summ:
        rho = "-" if s["spearman"] is None else f"{s['spearman']:.3f}"
        lines.append(
            f"| {s['source']} | {_md(s['column'])} | {s['models']} | "
            f"{s[AGREES]}/{s[DIFFERS]}/{s[INCONCLUSIVE]}/{s[OTHER_PROTOCOL]} | "
            f"{_num(s['largest_abs_difference_judged'])}, {_num(s['largest_abs_difference'])} "
            f"| {rho} ({s['spearman_n']}) |"
        )
    return lines


def _disagreement_lines(rows: Sequence[Row]) -> list[str]:
    differs = [r for r in rows if r.label == DIFFERS]
    if not differs:
        return ["**Disagreements.** No pair under the same protocol differs beyond its margin."]
    by_cause: dict[str, list[Row]] = {}
    for r in differs:
        by_cause.setdefault(r.cause or "unexplained", []).append(r)
    lines = [
        f"**Disagreements** ({len(differs)} pairs beyond the margin; difference = other lab "
        "minus published), by cause:",
        "",
    ]
    for cause, rs in by_cause.items():
        pairs = "; ".join(
            f"{r.study_model} {r.column.split('/')[-1]} ({r.source}) {r.difference:+.3g}"
            for r in rs
        )
        lines.append(f"- {cause} ({len(rs)}): {pairs}")
    return lines


def _collision_lines(decls: Sequence[Any]) -> list[str]:
    groups: dict[tuple[str, str], list[Any]] = {}
    for d in decls:
        for ident in d.identity:
            if ident.level == NOT_SAME:
                groups.setdefault((d.name, ident.evidence), []).append(ident)
    if not groups:
        return []
    lines = [
        f"**Name collisions** ({sum(map(len, groups.values()))}, declared `not_same`: other "
        "weights under a study model's name, never compared):",
        "",
        "| source | their model = study model | evidence |",
        "|---|---|---|",
    ]
    for (source, evidence), idents in groups.items():
        names = ", ".join(f"`{i.source_model}` = `{i.study_model}`" for i in idents)
        lines.append(f"| {source} | {names} | {_words(evidence, EVIDENCE_WORDS)} |")
    return lines


def _claim_lines(outcomes: Sequence[Any]) -> list[str]:
    with_inputs = [o for o in outcomes if o.independent is not None]
    same = sum(o.verdict == o.reanalysis.verdict for o in with_inputs)
    lines = [
        f"**Claims on independent inputs** (`python -m repro claims --source independent`): "
        f"{len(with_inputs)} of {len(outcomes)} claims read a value another lab measured, "
        f"{same} of them with the re-analysis verdict (evidence `independent (k of N inputs)`; "
        "a claim with k = 0 keeps its re-analysis verdict).",
        "",
        "| claim | verdict: re-analysis | on independent inputs | inputs measured elsewhere "
        "(k of N) | of them beyond the margin |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        verdict = o.verdict if o.independent is not None else "-"
        lines.append(
            f"| `{o.reanalysis.claim.id}` | {o.reanalysis.verdict} | {verdict} | "
            f"{o.k} of {o.total} | {len(o.differing)} |"
        )
    return lines


def paired_lines(ctx: Any, study: Any, data_dir: Any) -> list[str]:
    """Image by image: the store's per-image records against a source's per-image predictions."""
    from repro.diagnostics.independent_paired import paired_rows
    from repro.measurements.registry import current_versions

    head = (
        "**Image by image** (the store's per-image records against a source's per-image "
        "predictions: `compare --independent`):"
    )
    if ctx.store is None:
        return [head + " no store was given."]
    if not Path(ctx.store).is_dir():
        return [head + " the store is empty."]
    rows, notes = paired_rows(study, ctx.store, versions=current_versions(), data_dir=data_dir)
    if not rows:
        covered: dict[str, list[str]] = {}
        for note in notes:
            model, column = note.split(" (")[0].split(" x ")
            covered.setdefault(model, []).append(column)
        listed = "; ".join(f"{m} ({', '.join(cs)})" for m, cs in covered.items())
        return [head + f" none in this store; the sources cover {listed}."]
    lines = [
        head,
        "",
        "| model | source | column | ours | theirs | ours only / theirs only | difference "
        "(90% interval) | McNemar p (Holm) | label |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        c = r.cells()  # the numbers as `compare --independent` prints them
        lines.append(
            f"| {r.study_model} | {r.source} | {r.column} | {c['ours']} | {c['theirs']} | "
            f"{r.ours_only} / {r.theirs_only} | {c['difference']} {c['interval']} | "
            f"{c['p_holm']} | {r.label} |"
        )
    return lines


def render(ctx: Any) -> str:
    from repro.diagnostics.independent_inputs import independent_outcomes
    from repro.published.independent import study_declarations

    study = ctx.claims.study
    if not study_declarations(study):
        return ""
    published = _published_context(ctx)
    rows, decls, _ = independent_rows(study, published.data_dir)
    outcomes = independent_outcomes(published, effects=False)
    plotted = figure_rows(rows)
    data_link = ctx.save_csv(
        ["column", "study_model", "source", "label", "published", "independent", "difference"],
        [
            [r.column, r.study_model, r.source, r.label, r.published, r.independent, r.difference]
            for r in plotted
        ],
        TABLE,
    )
    link = ctx.save_figure(figure(plotted), FIGURE)
    sources = ", ".join(f"{d.name} ({d.title.split(' (')[0]})" for d in decls)
    lines = [
        "## What other labs measured",
        "",
        f"Other labs' published values of the study's own checkpoints: {sources}, beside the "
        "published table model by model (`python -m repro compare --independent` prints the "
        "rule).",
        "",
        *_coverage_lines(coverage(rows, published.population)),
        "",
        *_agreement_lines(rows, summary(rows)),
        "",
        *_disagreement_lines(rows),
        "",
        *_collision_lines(decls),
        "",
        *paired_lines(ctx, study, published.data_dir),
        "",
        *_claim_lines(outcomes),
        "",
        f"![published vs independent values]({link})",
        "",
        "*Published (x) against another lab's value (y), one panel per column (ImageNet-C cells "
        f"left out), identity line dashed, largest differences labelled. Data: [{TABLE}]"
        f"({data_link}).*",
    ]
    return "\n".join(lines) + "\n"

"""``python -m repro compare --independent [--json OUT]``: other labs' published values.

Other labs' published values of the study's own checkpoints beside the study's published values
(``repro.diagnostics.independent``): one row per (study model, source, column) with its identity,
difference, label (agrees / differs / inconclusive / other_protocol / not_same) and protocol note,
and a summary per source x column (models, label counts, largest |difference|, Spearman over the
shared models with n). Where the store holds a current measurement of a study model with per-image
records and a source publishes that model's per-image predictions, the two are compared image by
image (``repro.diagnostics.independent_paired``: the 2x2 table, Newcombe's paired interval, exact
McNemar); each covered (model, column) without such a record is named with what is missing."""

from __future__ import annotations

import argparse
import math
from typing import Any


def _num(x: float | None, width: int = 9) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return f"{'-':>{width}}"
    return f"{x:>{width}.4g}"


def _paired_lines(rows: list[Any], notes: list[str], store: Any) -> list[str]:
    """The paired section: one line per comparison on the same images, then the notes."""
    head = (
        f"paired on the same images (the store's per-image records vs a source's; store {store}):"
    )
    if not rows and not notes:
        return [head, "  no source of this study publishes per-image predictions"]
    lines = [head]
    if rows:
        lines.append(
            f"  {'study_model':<24} {'source':<10} {'column':<24} {'ours':>11} {'theirs':>11} "
            f"{'ours only':>9} {'theirs only':>11} {'diff':>8} {'90% interval':>18} "
            f"{'McNemar p':>9} {'Holm p':>7}  label"
        )
    for r in rows:
        c = r.cells()
        lines.append(
            f"  {r.study_model[:24]:<24} {r.source[:10]:<10} {r.column[:24]:<24} "
            f"{c['ours']:>11} {c['theirs']:>11} {r.ours_only:>9} {r.theirs_only:>11} "
            f"{c['difference']:>8} {c['interval']:>18} {c['p']:>9} {c['p_holm']:>7}  "
            f"{r.label}: {r.why}"
        )
    lines += [f"  not paired: {n}" for n in notes]
    return lines


def run(args: argparse.Namespace) -> int:
    from repro.base.settings import store_dir
    from repro.base.study import select
    from repro.cli.common import split_names
    from repro.cli.paths import input_dir, write_json
    from repro.diagnostics.independent import LABELS, independent_rows, summary
    from repro.diagnostics.independent_paired import paired_rows
    from repro.measurements.registry import current_versions
    from repro.runner.selection import canonical_names

    store = input_dir(store_dir(args.store), "--store", must_exist=bool(args.store))
    versions = current_versions()
    wanted = set(canonical_names(split_names(args.models))) if args.models else None

    doc: dict[str, Any] = {"studies": []}
    lines: list[str] = []
    for study in select(split_names(args.study)):
        if not study.independent.sources and not study.independent.protocols:
            from repro.published.independent import study_declarations

            if not study_declarations(study):
                continue
        rows, decls, rule = independent_rows(study, args.data_dir)
        if wanted is not None:
            rows = [r for r in rows if r.study_model in wanted]
        summ = summary(rows)
        paired, paired_notes = (
            paired_rows(study, store, versions=versions, data_dir=args.data_dir, models=wanted)
            if store.is_dir()
            else ([], [f"no store at {store} (measure a model first: python -m repro measure)"])
        )
        doc["studies"].append(
            {
                "study": study.name,
                "rule": rule,
                "sources": [
                    {
                        "name": d.name,
                        "title": d.title,
                        "citation": d.citation,
                        "origin": str(d.origin),
                    }
                    for d in decls
                ],
                "rows": [r.as_json() for r in rows],
                "summary": summ,
                "store": str(store),
                "paired": [r.as_json() for r in paired],
                "paired_notes": paired_notes,
            }
        )
        lines.append(f"{study.name}: {len(rows)} comparisons from {len(decls)} sources")
        shown = [
            r
            for r in rows
            if args.all_columns or "<" not in r.entry  # cell families: with --all-columns
        ]
        header = (
            f"{'study_model':<34} {'source':<11} {'source_model':<36} {'identity':<9} "
            f"{'column':<26} {'published':>9} {'indep.':>9} {'diff':>9}  {'label':<14} note"
        )
        lines.append(header)
        for r in shown:
            note = r.cause if r.cause else r.protocol_note
            lines.append(
                f"{r.study_model[:34]:<34} {r.source[:11]:<11} {r.source_model[:36]:<36} "
                f"{r.identity:<9} {r.column[:26]:<26} {_num(r.published)} {_num(r.independent)} "
                f"{_num(r.difference)}  {r.label:<14} {note[:90]}"
            )
        if len(shown) < len(rows):
            lines.append(
                f"({len(rows) - len(shown)} ImageNet-C cell rows: --all-columns or --json)"
            )
        lines.append("")
        lines.append("summary per source x column:")
        lines.append(
            f"{'source':<11} {'column':<58} {'models':>6} "
            + " ".join(f"{label:>14}" for label in LABELS)
            + f" {'max|d| judged':>13} {'max|d| all':>10} {'spearman (n)':>14}"
        )
        for s in summ:
            rho = "-" if s["spearman"] is None else f"{s['spearman']:.3f}"
            rho_n = f"{rho} ({s['spearman_n']})"
            lines.append(
                f"{s['source'][:11]:<11} {s['column'][:58]:<58} {s['models']:>6} "
                + " ".join(f"{s[label]:>14}" for label in LABELS)
                + f" {_num(s['largest_abs_difference_judged'], 13)} "
                f"{_num(s['largest_abs_difference'], 10)} {rho_n:>14}"
            )
        lines.append("")
        lines.append("rule: " + " ".join(rule.split()))
        lines.append("")
        lines += _paired_lines(paired, paired_notes, store)
    print("\n".join(lines))
    if args.json:
        write_json(args.json, doc)
        print(f"wrote {args.json}")
    return 0

"""``python -m repro compare --independent [--json OUT]``: other labs' published values.

Other labs' published values of the study's own checkpoints beside the study's published values
(``repro.diagnostics.independent``): one row per (study model, source, column) with its identity,
difference, label (agrees / differs / inconclusive / other_protocol / not_same) and protocol note,
and a summary per source x column (models, label counts, largest |difference|, Spearman over the
shared models with n)."""

from __future__ import annotations

import argparse
import math
from typing import Any


def _num(x: float | None, width: int = 9) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return f"{'-':>{width}}"
    return f"{x:>{width}.4g}"


def run(args: argparse.Namespace) -> int:
    from repro.base.study import select
    from repro.cli.common import split_names
    from repro.cli.paths import write_json
    from repro.diagnostics.independent import LABELS, independent_rows, summary
    from repro.runner.selection import canonical_names

    doc: dict[str, Any] = {"studies": []}
    lines: list[str] = []
    for study in select(split_names(args.study)):
        if not study.independent.sources and not study.independent.protocols:
            from repro.published.independent import study_declarations

            if not study_declarations(study):
                continue
        rows, decls, rule = independent_rows(study, args.data_dir)
        if args.models:
            wanted = set(canonical_names(split_names(args.models)))
            rows = [r for r in rows if r.study_model in wanted]
        summ = summary(rows)
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
    print("\n".join(lines))
    if args.json:
        write_json(args.json, doc)
        print(f"wrote {args.json}")
    return 0

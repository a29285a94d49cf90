"""Report section: the quirks of the published numbers (Q1-Q4), with the evidence from the data."""

from __future__ import annotations

from repro.studies.gavrikov2024.quirks import detect_all


def render(ctx) -> str:
    study = ctx.claims.analysis
    lines = [
        "## Quirks of the published numbers",
        "",
        "Detected on the published benchmark.csv over the study population (METHODS.md section 5); "
        "the claim tests fail if the data stops showing them.",
        "",
        "| quirk | shown by the data | evidence | fix offered |",
        "|---|---|---|---|",
    ]
    for q in detect_all(ctx.claims.table, study.population):
        lines.append(
            f"| {q.id}: {q.title} | {'yes' if q.holds else 'NO'} | {q.evidence} | {q.fix} |"
        )
    return "\n".join(lines) + "\n"

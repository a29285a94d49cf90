"""Report section: the one-screen summary that opens REPORT.md (issue 34, item 5): per claim,
published vs recomputed, the finding's verdict with P(finding), the strength grade and why, and
the evidence; the totals by grade and the rule of each grade shown (``repro.claims.strength``)."""

from __future__ import annotations

from typing import Any

from repro.base.numbers import fmt_p, fmt_value
from repro.claims.output import evidence_text, finding_text, interval_text
from repro.claims.statements import INTERVAL_TAGS, statements_of
from repro.claims.strength import RULES, grade_counts, strength

HEADER = [
    "claim",
    "published",
    "recomputed",
    "interval",
    "finding",
    "P(finding)",
    "strength",
    "why",
    "evidence",
]


INTRO = (
    "The finding is what the claim states (a sign and significance, an order, a range, a null, a "
    "count), judged apart from the digits the paper printed (shown where they differ); "
    "P(finding) is the share of replications on a new sample of images that keep it (`-`: none "
    "computed)."
)


def render(ctx: Any) -> str:
    rows, grades = [], []
    for claims, outcomes in ctx.studies:
        for o in outcomes:
            s = strength(o, claims)
            grades.append(s.grade)
            published = "-" if o.claim.published is None else f"{o.claim.published:g}"
            rows.append(
                f"| `{o.claim.id}` | {published} | {fmt_value(o.result.value)} | "
                f"{interval_text(o, statements_of(o, claims))} | "
                f"{finding_text(o, s)} | {fmt_p(s.finding.p)} | **{s.grade}** | "
                f"{s.short().replace('|', '/')} | {evidence_text(o)} |"
            )
    shown = [g for g in RULES if g in grades]
    return (
        "\n".join(
            [
                "## Summary: every claim's finding and strength",
                "",
                f"{len(grades)} claims: {grade_counts(grades)}. {INTRO}",
                "",
                "| " + " | ".join(HEADER) + " |",
                "|" + "---|" * len(HEADER),
                *rows,
                "",
                *[f"- **{g}**: {RULES[g]}" for g in shown],
                "",
                "Interval: one per claim, tagged with its kind: "
                + "; ".join(f"`{t}`: {what}" for t, what in INTERVAL_TAGS.items())
                + ".",
            ]
        )
        + "\n"
    )

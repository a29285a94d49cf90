"""Report section: the one-screen summary that opens REPORT.md.

Per claim, published vs recomputed, the finding's verdict with P(finding), the strength grade
and why, and the evidence; the totals by grade and the rule of each grade shown
(``repro.diagnostics.strength``)."""

from __future__ import annotations

from typing import Any

from repro.base.numbers import fmt_p, fmt_value
from repro.diagnostics.cells import evidence_text, finding_text, interval_cell
from repro.diagnostics.statements import INTERVAL_TAGS, shown_interval, statements_of
from repro.diagnostics.strength import RULES, grade_counts, strength
from repro.report.sections.forest_figure import FIGURE, Row, forest, on_scale

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
    rows, grades, drawn, off_scale = [], [], [], []
    for claims, outcomes in ctx.studies:
        for o in outcomes:
            s = strength(o, claims)
            grades.append(s.grade)
            st = statements_of(o, claims)
            shown, tag = shown_interval(o, st)
            iv = None if shown is None or isinstance(shown, str) else (shown[0], shown[1])
            value = float(o.result.value)
            # a tested statistic on [-1, 1]; not a null's headline (its smallest p), a count, a
            # model's value or a ratio
            tested = o.result.p is not None and o.tolerance.policy != "null_all"
            if tested and on_scale(value, iv, o.claim.published):
                drawn.append(Row(o.claim.id, value, iv, tag == "loco", o.claim.published, s.grade))
            else:
                off_scale.append(f"`{o.claim.id}` ({fmt_value(o.result.value)})")
            published = "-" if o.claim.published is None else f"{o.claim.published:g}"
            rows.append(
                f"| `{o.claim.id}` | {published} | {fmt_value(o.result.value)} | "
                f"{interval_cell(shown, tag)} | "
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
                f"![forest plot of the claims]({ctx.save_figure(forest(drawn), FIGURE)})",
                "",
                f"*The {len(drawn)} claims whose statistic is a tested effect on [-1, 1] (a rank "
                "correlation, tau, Kendall's W, R^2, a share of models): recomputed value (dot) "
                "and its interval (solid: 95%; dashed: the range without each cluster), the "
                "published value (hollow diamond), the strength grade as the colour. Not drawn "
                "(a null's smallest p, a count, one model's value, a ratio, a fit): "
                f"{', '.join(off_scale) or 'none'}.*",
                "",
                "Interval: one per claim, tagged with its kind: "
                + "; ".join(f"`{t}`: {what}" for t, what in INTERVAL_TAGS.items())
                + ".",
            ]
        )
        + "\n"
    )

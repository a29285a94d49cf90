"""Report section: "How sure are the claims under replication", one row per claim of a study.

Each row (``repro.diagnostics.replication``): its verdict, P(verdict) (the share of
replications on a new sample of images that keep it) and the same for its qualitative content,
the statistic beside its replication interval, the column families redrawn and held, and why a
claim is not replicated or only conditionally."""

from __future__ import annotations

from repro.base.numbers import fmt_interval, fmt_p, fmt_value
from repro.diagnostics.cells import verdict_text
from repro.diagnostics.replication import count_model, replication
from repro.report.markdown import row


def render(ctx) -> str:
    c = ctx.claims
    reps = [(o, replication(o, c)) for o in ctx.outcomes]
    counts = count_model(c)
    lines = ["## How sure are the claims under replication", ""]
    if counts is None:
        lines.append(
            f"Not computed: study `{c.study.name}` declares no count model (study.toml "
            "`replication`), so the counts behind its values are not known and nothing can be "
            "redrawn."
        )
        return "\n".join(lines) + "\n"
    lines += [
        "Would a claim hold on another sample of images? Every model's counts redrawn "
        f"{counts.resamples:,} times (seed {counts.seed}) as a new sample of the same number of "
        f"images or trials (`{c.study.replication.name}` of the study: which n each column rests "
        "on, and what is assumed where the published file does not pin it), the claim's statistic "
        "recomputed and judged by its own tolerance on each. Redrawing around published values "
        "that are themselves noisy adds the noise twice (a redrawn correlation is attenuated once "
        "more than the published one): each number a verdict reads is moved by its bootstrap bias "
        "and what derives from it (a p-value, a ranking) recomputed. *P(verdict)*: the share of "
        "redraws whose verdict is the claim's; *P(qualitative)*: the same for what the claim "
        "states beyond its printed digits. *Replication interval*: the 2.5 and 97.5 percentiles "
        "of the redrawn statistic. Reported beside the verdict; it never changes it.",
        "",
        "| claim | verdict | P(verdict) | P(qualitative) | statistic | replication interval | "
        "redrawn | held |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o, r in reps:
        lines.append(
            row(
                f"`{o.claim.id}`",
                verdict_text(o),
                fmt_p(r.p_verdict),
                fmt_p(r.p_qualitative),
                fmt_value(o.result.value),
                fmt_interval(r.interval),
                ", ".join(r.redrawn) or "-",
                ", ".join(r.held) or "-",
            )
        )
    notes = [f"- `{o.claim.id}`: {r.note}." for o, r in reps if r.note]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"

"""Report section: every claim of a study, published vs recomputed, with verdict and evidence.

For each claim: its interval, verdict, the evidence it rests on (re-analysis of the published
data, measured, mixed, mini: the words keep "consistent with the published data" apart from
"reproduced by measurement"), where its input values came from (provenance counts: published,
measured, imported, mini, missing, failed), its flags (e.g. the input models whose measured
value differs from the published one) and tolerance; below the table each claim's paper source
(linked to the paper) and the reason for its tolerance, and for a claim that does not
reproduce, why: the measured value and the model holding it, the runner-up, what leaving out
the deciding model does; for a claim that could not be checked (undefined, incomplete), what is
undefined or which inputs are missing."""

from __future__ import annotations

from typing import Any

from repro.base.numbers import fmt_interval, fmt_p, fmt_value
from repro.claims.verdict import NOT_CHECKED
from repro.diagnostics.cells import evidence_text, inputs_text, interval_text, verdict_text
from repro.diagnostics.output import (
    EVIDENCE_MEANING,
    evidence_counts,
    not_checked_why,
    verdict_counts,
)
from repro.diagnostics.replication import replication
from repro.diagnostics.robustness import robustness
from repro.diagnostics.statements import INTERVAL_TAGS, statements_of
from repro.report.markdown import cell, row

SHOW_FLIPS = 5  # models named in an explanation; the robustness section counts the rest


def source_link(o, study) -> str:
    """The claim's paper source, linked to the study's paper when it has a URL."""
    return f"[{o.claim.source}]({study.url})" if study.url else o.claim.source


def _named(details: dict[str, Any]) -> list[str]:
    """Details that name a model: ``model`` itself, and sub-results with a model and a value."""
    out = []
    for key, v in details.items():
        if isinstance(v, dict) and "model" in v and "value" in v:
            out.append(f"{key.replace('_', '-')}: `{v['model']}` {fmt_value(v['value'])}")
    return out


def explain(o, rob, study) -> list[str]:
    """Why a claim does not reproduce (or reproduces against its record), in a few lines."""
    r = o.result
    if o.verdict in NOT_CHECKED:
        return [
            f"**Why `{o.claim.id}` is {o.verdict}** ({source_link(o, study)}): "
            f"{not_checked_why(o)}. Inputs: {inputs_text(o)}. An {o.verdict} claim is never as "
            "recorded."
        ]
    held = f" (`{r.details['model']}`)" if isinstance(r.details.get("model"), str) else ""
    lines = [
        f"**Why `{o.claim.id}` is {verdict_text(o)}** ({source_link(o, study)}): published "
        f"{o.claim.published if o.claim.published is not None else '(qualitative)'}, measured "
        f"{fmt_value(r.value)}{held}"
        + (
            f", interval {fmt_interval(r.interval)} ({r.interval_method})"
            if r.interval is not None
            else ""
        )
        + f". Check: {o.check.why}."
        + "".join(f" Flag {f.text()}." for f in o.flags)
    ]
    named = _named(r.details)
    if named:
        lines.append("Next: " + "; ".join(named) + ".")
    if rob is not None and rob.flips:
        shown = [v for v in rob.models if v.left_out in rob.flips][:SHOW_FLIPS]
        parts = [
            f"without `{v.left_out}` the statistic is {fmt_value(v.value)} and the claim is "
            f"{v.verdict}"
            for v in shown
        ]
        more = len(rob.flips) - len(shown)
        text = "Leaving one model out: " + "; ".join(parts)
        text += (
            f" (+{more} more: see the robustness section)"
            if more > 0
            else f"; no other of the {len(rob.models)} models changes the verdict"
        )
        lines.append(text + ".")
    elif rob is not None and rob.models:
        lines.append(
            f"Leaving out any one of the {len(rob.models)} models does not change the verdict."
        )
    lines.append(f"Tolerance ({o.tolerance.policy}): {o.tolerance.reason}.")
    return [" ".join(line for line in lines if line)]


def render(ctx) -> str:
    study = ctx.claims.study
    lines = [
        "## Claims",
        "",
        "| claim | statement | published | recomputed | interval | verdict | P(verdict) | "
        "evidence | inputs | tolerance |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    for o in ctx.outcomes:
        pub = f"{o.claim.published:g}" if o.claim.published is not None else "-"
        verdict = f"**{verdict_text(o)}**" + ("" if o.verdict in NOT_CHECKED else f" ({o.phrase})")
        interval = interval_text(o, statements_of(o, ctx.claims))  # as its estimand calls for
        lines.append(
            row(
                *(
                    cell(x)
                    for x in [
                        f"`{o.claim.id}`",
                        o.claim.statement
                        + (f" *Recomputed: {o.claim.measure}.*" if o.claim.measure else ""),
                        pub,
                        fmt_value(o.result.value),
                        interval,
                        verdict,
                        fmt_p(replication(o, ctx.claims).p_verdict),
                        evidence_text(o),
                        inputs_text(o),
                        f"{o.tolerance.policy}: {o.check.why}",
                    ]
                )
            )
        )
    n_ok = sum(o.as_expected for o in ctx.outcomes)
    kinds = list(evidence_counts(ctx.outcomes))
    lines += [
        "",
        f"{n_ok} of {len(ctx.outcomes)} claims as recorded ({verdict_counts(ctx.outcomes)}). "
        + (
            "Evidence: " + "; ".join(f"`{k}`: {EVIDENCE_MEANING[k]}" for k in kinds) + ". "
            if kinds
            else ""
        )
        + "Inputs: how many input values (models x input columns) came from the published table, "
        "our "
        "measurements (`measured`, or `imported` with their counts), a mini run (`mini`, not "
        "evidence), or "
        "were to be measured and are `missing` or `failed` (the claim is then `incomplete`: never "
        "judged on "
        "the published value). "
        'P(verdict): how often a replication on a new sample of images keeps the verdict (see "How '
        "sure are "
        'the claims under replication"; `-`: not replicated). '
        "Sources and reasons for each tolerance: "
        f"below, and the study's claim file (`{ctx.claims.study.claims.name}` of study "
        f"`{ctx.claims.study.name}`).",
    ]
    lines += [
        "",
        "Interval: the one the claim's estimand calls for (see *What each claim's question "
        "needs* below), tagged with its kind: "
        + "; ".join(f"`{t}`: {what}" for t, what in INTERVAL_TAGS.items())
        + " (2,000 resamples, seed 0, for a bootstrap). Published `-`: the claim states no "
        "number. *Verdict* and *P(verdict)* are the paper's method's; the finding and its "
        "strength are in REPORT.md's summary.",
    ]
    methods = sorted({o.result.interval_method for o in ctx.outcomes if o.result.interval_method})
    if methods:
        lines += [
            "",
            "The statistics' own interval methods (in `claims --json` as `interval`): "
            + "; ".join(methods)
            + ".",
        ]
    lines += ["", "Sources and tolerances:", ""]
    for o in ctx.outcomes:
        lines.append(
            f"- `{o.claim.id}`: {source_link(o, study)}. Tolerance `{o.tolerance.policy}`: "
            f"{o.tolerance.reason}."
        )
    for o in ctx.outcomes:
        if not o.reproduced or not o.as_expected:
            lines += ["", *explain(o, robustness(o, ctx.claims), study)]
    return "\n".join(lines) + "\n"

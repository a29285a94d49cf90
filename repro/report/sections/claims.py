"""Report section: every claim of a study, published vs recomputed, with interval, verdict and tolerance."""

from __future__ import annotations

from repro.claims.output import fmt_interval, fmt_number, verdict_text


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(ctx) -> str:
    lines = ["## Claims", "",
             "| claim | statement | published | recomputed | 95% interval | verdict | tolerance |",
             "|---|---|---|---|---|---|---|"]
    for o in ctx.outcomes:
        pub = f"{o.claim.published:g}" if o.claim.published is not None else "(qualitative)"
        lines.append("| " + " | ".join(_cell(x) for x in [
            f"`{o.claim.id}`", o.claim.statement + (f" *Recomputed: {o.claim.measure}.*" if o.claim.measure else ""), pub, fmt_number(o.result.value), fmt_interval(o.result.interval),
            f"**{verdict_text(o)}**", f"{o.tolerance.policy}: {o.check.why}"]) + " |")
    n_ok = sum(o.as_expected for o in ctx.outcomes)
    lines += ["", f"{n_ok} of {len(ctx.outcomes)} claims as recorded; "
              f"{sum(o.reproduced for o in ctx.outcomes)} reproduced. Sources and reasons for each tolerance: "
              f"the study's claim file (`{ctx.claims.study.claims.name}` of study `{ctx.claims.study.name}`)."]
    methods = sorted({o.result.interval_method for o in ctx.outcomes if o.result.interval_method})
    if methods:
        lines += ["", "Interval methods: " + "; ".join(methods) + "."]
    return "\n".join(lines) + "\n"

"""Claims: the printed table and the JSON document of ``python -m repro claims`` (each claim
with its verdict, the provenance of its inputs (number of values per label: published,
measured, mini, missing, failed), its ``robustness`` (``repro.claims.robustness``) and its
``p_verdict`` and ``replication`` (``repro.claims.replication``); each
study's analysis tables, the bias x category cells with Holm and Benjamini-Hochberg adjusted p,
and the per-model table)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.claims.replication import Replication, fmt_p
from repro.claims.verdict import NOT_CHECKED, VERDICTS


def tables(context: ClaimContext) -> dict[str, Any]:
    """The analysis tables (bias x category, bias x bias, benchmark correlation) as JSON data."""
    analysis = context.analysis
    return {
        "bias_vs_category": analysis.bias_vs_category_rows(),
        "bias_vs_bias": [{"a": a, "b": b, "rho": c.rho, "p": c.p} for a, b, c in analysis.bias_vs_bias()],
        "benchmark_correlation": analysis.benchmark_correlation.as_dict(),
        "per_model": analysis.per_model_rows(),
    }


def claims_document(results: list[tuple[ClaimContext, list[ClaimOutcome]]]) -> dict[str, Any]:
    """``{"claims": [...], "tables": {study: {...}}}``: every study's claims, and the analysis
    tables of each study that has an analysis definition, under the study's name."""
    from repro.claims.replication import replication
    from repro.claims.robustness import robustness

    def entry(o: ClaimOutcome, ctx: ClaimContext) -> dict[str, Any]:
        rep = replication(o, ctx)
        return o.summary() | {"robustness": robustness(o, ctx).as_json(), "p_verdict": rep.p_verdict,
                              "replication": rep.as_json()}

    return {"claims": [entry(o, ctx) for ctx, outcomes in results for o in outcomes],
            "tables": {ctx.study.name: tables(ctx) for ctx, _ in results if ctx.spec is not None}}


def fmt_number(v: float | None) -> str:
    if v is None:
        return "-"
    if math.isnan(float(v)):
        return "undefined"
    if float(v).is_integer() and abs(v) >= 1:
        return f"{int(v)}"
    return f"{v:.4g}" if abs(v) < 1e-3 else f"{v:.4f}"


def fmt_interval(iv: tuple[float, float] | list[float] | None) -> str:
    if iv is None:
        return "-"
    return f"[{iv[0]:.3f}, {iv[1]:.3f}]"


def verdict_text(o: ClaimOutcome) -> str:
    if o.verdict in NOT_CHECKED:  # never as recorded, whatever the claim file expects
        return o.verdict.upper()
    if o.claim.expected == "not_reproduced":
        return f"{o.verdict} (known)" if not o.reproduced else "reproduced (UNEXPECTED: was known not to)"
    return o.verdict


def inputs_text(o: ClaimOutcome) -> str:
    """The provenance counts of the claim's input values (``measured 48, published 96``)."""
    return "-" if o.provenance is None else o.provenance.text()


def rows(outcomes: list[ClaimOutcome], replications: Mapping[str, Replication] | None = None) -> list[list[str]]:
    """One row per claim (with its P(verdict) when ``replications`` is given: {claim id: replication})."""
    out = []
    for o in outcomes:
        row = [o.claim.id, f"{o.claim.published:g}" if o.claim.published is not None else "(qualitative)",
               fmt_number(o.result.value), fmt_interval(o.result.interval), verdict_text(o)]
        if replications is not None:
            row.append(fmt_p(replications[o.claim.id].p_verdict))
        out.append([*row, inputs_text(o)])
    return out


def verdict_counts(outcomes: list[ClaimOutcome]) -> str:
    """``9 reproduced, 1 not_reproduced, 2 undefined`` (verdicts with a zero count left out)."""
    counts = {v: sum(o.verdict == v for o in outcomes) for v in VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def problems(outcomes: list[ClaimOutcome]) -> list[str]:
    """One line per claim that could not be checked (undefined, incomplete): why."""
    return [f"  {o.claim.id}: {o.verdict}: {o.check.why}" for o in outcomes if o.verdict in NOT_CHECKED]


HEADER = ["claim", "published", "recomputed", "95% interval", "verdict", "inputs"]
P_VERDICT = "P(verdict)"


def replication_legend(replications: Mapping[str, Replication]) -> list[str]:
    """What the P(verdict) column means, with the resamples and seed it was computed with."""
    done = [r for r in replications.values() if r.p_verdict is not None]
    if not replications:
        return []
    if not done:
        return ["P(verdict): not computed (" + "; ".join(sorted({r.note for r in replications.values()})) + ")"]
    sizes = sorted({(r.resamples, r.seed) for r in done})
    runs = ", ".join(f"{b:,} redraws, seed {s}" for b, s in sizes)
    text = (f"P(verdict): the share of replications ({runs}: every model's counts redrawn as a new sample of "
            "images; bias-corrected) whose verdict is the claim's; beside the verdict, never changing it")
    by_note: dict[str, list[str]] = {}
    for r in replications.values():
        if r.note:
            by_note.setdefault(("-: " if r.p_verdict is None else "") + r.note, []).append(r.claim)
    return [text, *(f"  {', '.join(claims)}: {note}" for note, claims in by_note.items())]


def format_table(outcomes: list[ClaimOutcome], replications: Mapping[str, Replication] | None = None) -> str:
    """The claims table; with ``replications`` ({claim id: replication}) a P(verdict) column
    beside the verdict and, under the table, what it means and where it is conditional."""
    body = rows(outcomes, replications)
    header = HEADER if replications is None else [*HEADER[:5], P_VERDICT, *HEADER[5:]]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
    notes = [f"  {o.claim.id}: {o.claim.measure}" for o in outcomes if o.claim.measure]
    out = [line(header), line(["-" * w for w in widths]), *map(line, body)]
    if notes:
        out += ["", "recomputed =", *notes]
    if replications:
        out += ["", *replication_legend(replications)]
    unchecked = problems(outcomes)
    if unchecked:
        out += ["", "not checked (never as recorded):", *unchecked]
    return "\n".join(out)

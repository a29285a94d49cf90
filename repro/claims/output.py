"""Claims: the printed table and the JSON document of ``python -m repro claims`` (each claim
with its verdict, the provenance of its inputs (number of values per label: published,
measured, mini, missing, failed) and its ``robustness``, ``repro.claims.robustness``; each
study's analysis tables, the bias x category cells with Holm and Benjamini-Hochberg adjusted p,
and the per-model table)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
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
    from repro.claims.robustness import robustness
    from repro.claims.statements import statements_of

    return {"claims": [o.summary() | {"robustness": robustness(o, ctx).as_json()} | statements_of(o, ctx).as_json()
                       for ctx, outcomes in results for o in outcomes],
            "tables": {ctx.study.name: tables(ctx) for ctx, _ in results if ctx.spec is not None}}


def fmt_number(v: float | None) -> str:
    if v is None:
        return "-"
    if math.isnan(float(v)):
        return "undefined"
    if float(v).is_integer() and abs(v) >= 1:
        return f"{int(v)}"
    return f"{v:.4g}" if abs(v) < 1e-3 else f"{v:.4f}"


def fmt_interval(iv: tuple[float, float] | list[float] | str | None) -> str:
    if iv is None:
        return "-"
    if isinstance(iv, str):  # e.g. "not estimable"
        return iv
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


def rows(outcomes: list[ClaimOutcome], statements: Mapping[str, Any] | None = None) -> list[list[str]]:
    """One row per claim; the interval is the one the claim's estimand calls for when its
    ``statements`` (``repro.claims.statements``) are given, else the statistic's own."""
    from repro.claims.statements import table_interval

    st = statements or {}
    return [[o.claim.id, f"{o.claim.published:g}" if o.claim.published is not None else "(qualitative)",
             fmt_number(o.result.value), fmt_interval(table_interval(o, st.get(o.claim.id)) if st else o.result.interval),
             verdict_text(o), inputs_text(o)]
            for o in outcomes]


def verdict_counts(outcomes: list[ClaimOutcome]) -> str:
    """``9 reproduced, 1 not_reproduced, 2 undefined`` (verdicts with a zero count left out)."""
    counts = {v: sum(o.verdict == v for o in outcomes) for v in VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def problems(outcomes: list[ClaimOutcome]) -> list[str]:
    """One line per claim that could not be checked (undefined, incomplete): why."""
    return [f"  {o.claim.id}: {o.verdict}: {o.check.why}" for o in outcomes if o.verdict in NOT_CHECKED]


HEADER = ["claim", "published", "recomputed", "95% interval", "verdict", "inputs"]


INTERVAL_LEGEND = ("95% interval = the claim's estimand decides: for a sample, the bootstrap over models that "
                   "resamples its declared clusters (not estimable when they are too few); for a census, none over "
                   "models (only a measurement interval, where the statistic has one)")


def format_table(outcomes: list[ClaimOutcome], statements: Mapping[str, Any] | None = None) -> str:
    """The claims table; with the claims' ``statements`` (``repro.claims.statements``), the
    interval column follows each claim's estimand and the statements follow the table."""
    body = rows(outcomes, statements)
    widths = [max(len(r[i]) for r in [HEADER, *body]) for i in range(len(HEADER))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
    notes = [f"  {o.claim.id}: {o.claim.measure}" for o in outcomes if o.claim.measure]
    out = [line(HEADER), line(["-" * w for w in widths]), *map(line, body)]
    if notes:
        out += ["", "recomputed =", *notes]
    if statements:
        out += ["", INTERVAL_LEGEND]
    unchecked = problems(outcomes)
    if unchecked:
        out += ["", "not checked (never as recorded):", *unchecked]
    if statements:
        out += ["", "what each claim's question needs beyond the paper's method (verdicts unchanged by it):"]
        for o in outcomes:
            if o.claim.id in statements:
                out += ["  " + line for line in statements[o.claim.id].lines()]
    return "\n".join(out)

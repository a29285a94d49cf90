"""Report section: what each claim's question needs beyond the paper's method.

One row per claim of a study (``repro.diagnostics.statements``): the verdict under the paper's
method, the estimand and its interval over models (clustered, not estimable, or none for a
census), where the expected value comes from (the paper, or derived from the data), and the
claim's equivalence, turning-point or unit statement; then the quirk-survival table
(``repro.diagnostics.quirk_corrections``): each claim re-judged on every quirk-corrected variant of
the study's data, with the quirks that need no variant and why."""

from __future__ import annotations

from repro.diagnostics.cells import verdict_text
from repro.diagnostics.quirk_corrections import corrections
from repro.diagnostics.statements import statements_of
from repro.report.markdown import cell, row


def _claim_row(o, *cells: str) -> str:
    """A table row: the claim, its verdict, then ``cells`` (escaped)."""
    return row(*(cell(x) for x in [f"`{o.claim.id}`", verdict_text(o), *cells]))


def _interval(st) -> str:
    e = st.estimand
    if e.estimand is None:
        return "not declared"
    if e.kind == "census":
        return "none (census)"
    return e.interval_summary() or e.note


def _more(st) -> str:
    parts = []
    if st.equivalence is not None:
        parts.append(st.equivalence.text())
    if st.turning_point is not None:
        parts.append("turning point: " + st.turning_point.text())
    if st.unit:
        parts.append("unit: " + st.unit)
    warnings = list(dict.fromkeys(w for iv in st.estimand.intervals.values() for w in iv.warnings))
    if warnings:
        parts.append("interval warnings: " + "; ".join(warnings))
    return " ".join(p.rstrip(".") + "." for p in parts) if parts else "-"


def _survival_cell(v) -> str:
    if not v.reads:
        return "reads no corrected column"
    value = "undefined" if v.value is None else f"{v.value:.4g}"
    return f"{value}: {v.verdict}" + (
        f" (qualitative {v.qualitative})" if v.qualitative is not None else ""
    )


def render(ctx) -> str:
    c = ctx.claims
    statements = [(o, statements_of(o, c)) for o in ctx.outcomes]
    if not statements:
        return ""
    lines = [
        "## What each claim's question needs",
        "",
        "Beside the verdict under the paper's method (the claim's tolerance, unchanged by any of "
        "this): the claim's estimand (a *census*: its models are the population it describes, so "
        "no interval over models; a *sample*: they stand for a wider population, so the interval "
        "over models resamples the declared clusters, and is *not estimable* where there are too "
        "few), where its expected value comes from (the paper, or *derived* from the data under "
        "test: a regression check of the data, not a reproduction), and what its kind of claim "
        "needs: an equivalence test for a null claim, a test of the turning point for an inverted "
        "U, the declared unit of a sweep.",
        "",
        "| claim | verdict (paper's method) | estimand | interval over models | expected value | "
        "more |",
        "|---|---|---|---|---|---|",
    ]
    for o, st in statements:
        e = st.estimand.estimand
        estimand = "not declared" if e is None else f"{e.kind}: {e.population} (unit: {e.unit})"
        expected = "derived" if any(f.name == "derived" for f in st.flags) else "the paper"
        lines.append(_claim_row(o, estimand, _interval(st), expected, _more(st)))
    derived = [(o, f) for o, st in statements for f in st.flags if f.name == "derived"]
    if derived:
        lines += [
            "",
            "Derived: " + "; ".join(f"`{o.claim.id}`: {f.detail}" for o, f in derived) + ".",
        ]
    fixes = corrections(c)
    if fixes.variants:
        lines += [
            "",
            "### Which verdicts survive the quirk corrections",
            "",
            "Each claim re-judged on the published data with a quirk corrected (METHODS.md section "
            "5), by its own tolerance and by its qualitative content (the sign and significance "
            "its digits stand "
            "for): " + "; ".join(f"**{v.id}**: {v.title}" for v in fixes.variants) + ". A claim "
            "that reads no corrected column cannot move. A verdict that moves is flagged `quirk`; "
            "the verdict under the paper's method stays.",
            "",
            "| claim | verdict | " + " | ".join(v.id for v in fixes.variants) + " | survives |",
            "|---|---|" + "---|" * len(fixes.variants) + "---|",
        ]
        for o, st in statements:
            q = st.quirks
            if q is None or not q.variants:
                continue
            moved = list(dict.fromkeys(q.moved + q.moved_qualitative))
            survives = (
                "yes"
                if not moved
                else ("digits only" if not q.moved_qualitative else f"no ({', '.join(moved)})")
            )
            lines.append(_claim_row(o, *(_survival_cell(v) for v in q.variants), survives))
        lines += [
            "",
            "*digits only*: the verdict under the claim's tolerance moves (a printed value no "
            "longer rounds to the published one), its qualitative content holds.",
            "",
        ]
        lines += [f"- {note}." for note in fixes.notes]
    return "\n".join(lines) + "\n"

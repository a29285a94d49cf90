"""Claims: the printed table and the JSON document of ``python -m repro claims``.

They hold each claim with its verdict, the evidence it rests on (``repro.claims.verdict``:
re-analysis of the published data, measured, mixed, mini), the provenance of its inputs (number of
values per label: published, measured, imported, mini, missing, failed), its ``robustness``
(``repro.diagnostics.robustness``) and its ``p_verdict`` and ``replication``
(``repro.diagnostics.replication``: how often a new sample of images keeps the verdict), its
``finding``, ``digits`` and ``strength`` (``repro.diagnostics.strength``); each study's analysis
tables, the bias x category cells with Holm and Benjamini-Hochberg adjusted p, and the per-model
table.

The per-claim entries that need the claim's context are the diagnostics' (``DIAGNOSTICS`` of
``repro.diagnostics.registry``, in its order).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from repro.base.output_schemas import VERSIONS
from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.claims.verdict import (
    EVIDENCE_KINDS,
    JUDGED,
    MEASURED,
    MINI,
    MINI_EVIDENCE,
    MIXED,
    NOT_CHECKED,
    REANALYSIS,
    VERDICTS,
)
from repro.diagnostics.cells import P_FINDING, P_VERDICT, inputs_text
from repro.diagnostics.quirk_corrections import legend as quirk_legend
from repro.diagnostics.registry import Said, claim_fields, table_columns
from repro.diagnostics.replication import Replication
from repro.diagnostics.statements import (
    INTERVAL_TAGS,
    interval_tag,
    statement_flags,
)
from repro.diagnostics.strength import RULES, Strength, grade_counts


def tables(context: ClaimContext) -> dict[str, Any]:
    """The analysis tables (bias x category, bias x bias, benchmark correlation) as JSON data."""
    analysis = context.analysis
    return {
        "bias_vs_category": analysis.bias_vs_category_rows(),
        "bias_vs_bias": [
            {"a": a, "b": b, "rho": c.rho, "p": c.p} for a, b, c in analysis.bias_vs_bias()
        ],
        "benchmark_correlation": analysis.benchmark_correlation.as_json(),
        "per_model": analysis.per_model_rows(),
    }


def claims_document(results: list[tuple[ClaimContext, list[ClaimOutcome]]]) -> dict[str, Any]:
    """The claims JSON document: every study's claims and analysis tables.

    ``{"schema_version": VERSIONS["claims"], "claims": [...], "tables": {study: {...}}}``: every
    study's claims (the outcome's ``as_json`` and every diagnostic's entries,
    ``repro.diagnostics.registry``), and the analysis tables of each study that has an analysis
    definition, under the study's name (``repro.base.output_schemas``).
    """
    return {
        "schema_version": VERSIONS["claims"],  # repro.base.output_schemas
        "claims": [
            statement_flags(o, ctx, o.as_json() | claim_fields(o, ctx))
            for ctx, outcomes in results
            for o in outcomes
        ],
        "tables": {ctx.study.name: tables(ctx) for ctx, _ in results if ctx.spec is not None},
    }


def interval_legend(tags: set[str]) -> list[str]:
    """One line per interval tag shown."""
    return [f"  {t}: {what}" for t, what in INTERVAL_TAGS.items() if t in tags]


def _said(
    statements: Mapping[str, Any] | None,
    replications: Mapping[str, Replication] | None,
    strengths: Mapping[str, Strength] | None,
) -> dict[str, Mapping[str, Any]]:
    given = {"statements": statements, "replication": replications, "strength": strengths}
    return {name: said for name, said in given.items() if said is not None}


def table(
    outcomes: list[ClaimOutcome], said: Said, *, wide: bool = True
) -> tuple[list[str], list[list[str]], list[str]]:
    """The claims table: its header, one row per claim, and the headers never wrapped.

    Its columns are the registry's (``repro.diagnostics.registry.table_columns``) for what the
    diagnostics ``said`` ({diagnostic: {claim id: result}}); ``wide=False`` leaves out the columns
    shown only in the wide form.
    """
    cols = [(c, by_id) for c, by_id in table_columns(said) if wide or not c.wide_only]
    body = [
        [c.cell(o, None if by_id is None else by_id.get(o.claim.id)) for c, by_id in cols]
        for o in outcomes
    ]
    return [c.header for c, _ in cols], body, [c.header for c, _ in cols if c.whole]


def rows(
    outcomes: list[ClaimOutcome],
    statements: Mapping[str, Any] | None = None,
    replications: Mapping[str, Replication] | None = None,
    strengths: Mapping[str, Strength] | None = None,
) -> list[list[str]]:
    """The rows of the claims table, one per claim.

    The interval is the one the claim's estimand calls for when its ``statements``
    (``repro.diagnostics.statements``) are given, else the statistic's own; with ``replications``
    ({claim id: replication}), its P(verdict) beside the verdict; with ``strengths`` ({claim id:
    strength}), the finding's verdict (and the digits' where they differ), P(finding) and the
    strength grade instead.
    """
    return table(outcomes, _said(statements, replications, strengths))[1]


def verdict_counts(outcomes: list[ClaimOutcome]) -> str:
    """``9 reproduced, 1 not_reproduced, 2 undefined`` (verdicts with a zero count left out)."""
    counts = {v: sum(o.verdict == v for o in outcomes) for v in VERDICTS}
    return ", ".join(f"{n} {v}" for v, n in counts.items() if n)


def not_checked_why(o: ClaimOutcome) -> str:
    """Why a claim was not checked: what is undefined or missing, or that its inputs are mini."""
    if o.verdict == MINI:
        return (
            f"inputs from generated mini data ({inputs_text(o)}): not evidence [on those values: "
            f"{o.check.why}]"
        )
    return o.check.why


def problems(outcomes: list[ClaimOutcome]) -> list[str]:
    """One line per claim that could not be checked (undefined, incomplete, mini): why."""
    return [
        f"  {o.claim.id}: {o.verdict}: {not_checked_why(o)}"
        for o in outcomes
        if o.verdict in NOT_CHECKED
    ]


#: what a judged verdict means on each kind of evidence (the table's legend)
EVIDENCE_MEANING = {
    REANALYSIS: "every input is the paper's published number: reproduced = consistent with the "
    "published data (a re-analysis, not a reproduction by measurement)",
    MIXED: "some inputs measured here, the rest published: reproduced = reproduced by measurement "
    "on the measured inputs",
    MEASURED: "every per-model input measured here (or imported with counts): reproduced = "
    "reproduced by measurement",
    MINI_EVIDENCE: "some input from generated mini data: verdict mini, never reproduced or "
    "not_reproduced",
}


def evidence_counts(outcomes: list[ClaimOutcome]) -> dict[str, int]:
    """{evidence kind: number of claims} over the judged (or mini) ``outcomes``.

    Zero counts are left out (an undefined or incomplete claim's evidence judged nothing).
    """
    shown = [o for o in outcomes if o.verdict in JUDGED or o.verdict == MINI]
    counts = {kind: sum(o.evidence.kind == kind for o in shown) for kind in EVIDENCE_KINDS}
    return {k: n for k, n in counts.items() if n}


def evidence_legend(outcomes: list[ClaimOutcome]) -> list[str]:
    """One line per kind of evidence (``evidence_counts``).

    Each says how many claims, and what their verdict means.
    """
    counts = evidence_counts(outcomes)
    return [
        f"  {kind} ({n} claim{'s' if n != 1 else ''}): {EVIDENCE_MEANING[kind]}"
        for kind, n in counts.items()
        if n
    ]


def flag_lines(outcomes: list[ClaimOutcome]) -> list[str]:
    """One line per flag of a claim.

    E.g. ``differs``: the input models whose measured value differs.
    """
    return [f"  {o.claim.id}: {f.text()}" for o in outcomes for f in o.flags]


INTERVAL_LEGEND = (
    "interval = one per claim, the one its estimand calls for (for a sample, over models "
    "resampling its declared clusters; for a census, none over models: a measurement interval "
    "where the statistic has one), tagged with its kind:"
)


def interval_block(outcomes: list[ClaimOutcome], statements: Mapping[str, Any]) -> list[str]:
    """``INTERVAL_LEGEND`` and one line per interval tag the table shows."""
    tags = {interval_tag(o, statements[o.claim.id]) for o in outcomes if o.claim.id in statements}
    return [INTERVAL_LEGEND, *interval_legend(tags)]


PUBLISHED_LEGEND = "published - = the claim states no number (a sign, an order, a range, a null)"


def strength_legend(strengths: Mapping[str, Strength]) -> list[str]:
    """The totals by grade, then the rule of each grade shown, once."""
    grades = [s.grade for s in strengths.values()]
    return [f"  {len(grades)} claims: {grade_counts(grades)}"] + [
        f"  {g}: {rule}" for g, rule in RULES.items() if g in grades
    ]


def strength_lines(strengths: Mapping[str, Strength]) -> list[str]:
    """One line per claim: its grade and why (the checks behind it)."""
    return [f"  {s.claim}: {s.grade}: {s.why}" for s in strengths.values()]


def replication_legend(replications: Mapping[str, Replication], finding: bool = False) -> list[str]:
    """What the P(verdict) column means (``finding``: P(finding)), and its redraws and seed.

    Also the claims not replicated (or only conditionally), grouped by why.
    """
    done = [r for r in replications.values() if r.p_verdict is not None]
    lines = []
    if done:
        runs = ", ".join(
            f"{b:,} redraws, seed {s}" for b, s in sorted({(r.resamples, r.seed) for r in done})
        )
        lines.append(
            f"  the share of replications ({runs}: every model's counts redrawn as a new sample of "
            "images; bias-corrected) whose "
            + (
                "finding is the claim's (P(digits), the same for its printed digits, is in --json)"
                if finding
                else "verdict is the claim's"
            )
            + "; beside the verdict, never changing it"
        )
    by_note: dict[str, list[str]] = {}
    for r in replications.values():
        if r.note:
            by_note.setdefault(("-: " if r.p_verdict is None else "") + r.note, []).append(r.claim)
    return lines + [f"  {', '.join(claims)}: {note}" for note, claims in by_note.items()]


def format_table(
    outcomes: list[ClaimOutcome],
    statements: Mapping[str, Any] | None = None,
    replications: Mapping[str, Replication] | None = None,
    strengths: Mapping[str, Strength] | None = None,
) -> str:
    """The claims table, with its legends.

    With the claims' ``statements`` (``repro.diagnostics.statements``), the interval column follows
    each claim's estimand and the statements follow the table; with ``replications`` ({claim id:
    replication}) a P(verdict) column beside the verdict and, under the table, what it means and
    where it is conditional; with ``strengths`` too, the finding, P(finding) and strength columns
    (``rows``) and the grades' totals and rules.
    """
    header, body, _ = table(outcomes, _said(statements, replications, strengths))
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
    notes = [f"  {o.claim.id}: {o.claim.measure}" for o in outcomes if o.claim.measure]
    out = [line(header), line(["-" * w for w in widths]), *map(line, body)]
    if notes:
        out += ["", "recomputed =", *notes]
    legend = evidence_legend(outcomes)
    if legend:
        out += ["", "evidence =", *legend]
    if replications:
        name = P_VERDICT if strengths is None else P_FINDING
        out += ["", f"{name} =", *replication_legend(replications, finding=strengths is not None)]
    flagged = flag_lines(outcomes)
    flagged += [
        f"  {o.claim.id}: {f.text()}"
        for o in outcomes
        if o.claim.id in (statements or {})
        for f in statements[o.claim.id].flags
        if f not in o.flags
    ]  # type: ignore[index]
    quirks = quirk_legend(
        [st.quirks for st in (statements or {}).values() if getattr(st, "quirks", None)]
    )
    if quirks:  # the variant ids the flags and statements below name, spelled out
        out += ["", "quirk-corrected variants (published data with a quirk corrected) =", *quirks]
    if strengths:  # below the quirk legend: a check's detail names the variants that flip it
        out += ["", "strength =", *strength_legend(strengths), *strength_lines(strengths)]
    if flagged:
        out += ["", "flags:", *flagged]
    if statements:
        out += ["", *interval_block(outcomes, statements)]
    unchecked = problems(outcomes)
    if unchecked:
        out += ["", "not checked (never as recorded):", *unchecked]
    if statements:
        out += [
            "",
            "what each claim's question needs beyond the paper's method (verdicts unchanged by "
            "it):",
        ]
        for o in outcomes:
            if o.claim.id in statements:
                out += ["  " + line for line in statements[o.claim.id].lines()]
    return "\n".join(out)

"""Report section: our measurements.

The mini-run warning, what was measured and how it compares with the study's published table,
and where each claim's inputs came from.

The runner hands its measuring plans (``repro.runner.pipeline.MeasurePlan``: study, models,
measurements, store, device, mini stand-ins) to ``write_report``; a report made without
measuring (``--published-only``, ``python -m repro report``) has none and this section is
empty. No timestamps or absolute paths are written, so the same store gives the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from repro.analysis.chance import accuracy_flag
from repro.base.numbers import fmt_num
from repro.measurements.registry import current_versions, get
from repro.published.study_data import study_table
from repro.store.compare import compare

MeasurePlan = Any  # repro.runner.pipeline.MeasurePlan (the runner is not imported by the report)

MINI_BANNER = (
    "> **MINI RUN: these numbers are NOT evidence.** No dataset was configured, so the pipeline "
    "ran on\n"
    "> generated mini datasets (random smooth images) with tiny randomly initialised CNNs on the "
    "CPU.\n"
    "> It shows that measuring, storing, the claims and this report run end to end; nothing here "
    "says\n"
    "> anything about the study's models. In the claims each tiny model's values stand in for one\n"
    "> study model ({stand_ins}); all other values are the published ones, and the verdicts are "
    "not\n"
    "> gated. Configure datasets (`REPRO_<NAME>_ROOT` or `[datasets]` in repro.toml) to measure "
    "for real.\n"
)


SHIPPED_BANNER = (
    "> **Measured here on the data that ships with the suite.** No dataset is configured, so every "
    "claim of "
    "`{study}` below rests on the published data (evidence `re-analysis`: whether the paper's own "
    "numbers "
    "support it, not a reproduction by measurement), and the run measured what ships: {jobs} (the "
    "`reproduce` part of the "
    "study's session `{session}`, device `{device}`, on the stimuli of the data directory). "
    "{models_phrase} "
    "Configure datasets (`REPRO_<NAME>_ROOT` or `[datasets]` in repro.toml) to measure the study's "
    "own models.\n"
)


OWN_MODELS_BANNER = (
    "> **Models that are not the study's.** The run measured {jobs}; {models} {is_} not "
    "{a}study model{s}, so the claims of `{study}` do not read {it}: every claim below rests on "
    "the published data (evidence `re-analysis`), judged as without this run. {It} {is_} placed "
    "among the study's models (section \"Placement\") on the columns on the study's own scale.\n"
)


def own_models_banner(plan: MeasurePlan) -> str:
    """The banner of a run that measured no study model on configured data (your own model)."""
    one = len(plan.models) == 1
    return OWN_MODELS_BANNER.format(
        jobs="; ".join(
            f"`{m}` x {', '.join(f'`{x}`' for x in plan.measurements)}" for m in plan.models
        ),
        models=", ".join(f"`{m}`" for m in plan.models),
        is_="is" if one else "are",
        a="a " if one else "",
        s="" if one else "s",
        study=plan.study.name,
        it="it" if one else "them",
        It="It" if one else "They",
    )


def shipped_banner(plan: MeasurePlan, population: Sequence[str]) -> str:
    jobs = "; ".join(
        f"`{m}` x {', '.join(f'`{x}`' for x in plan.measurements)}" for m in plan.models
    )
    outside = [m for m in plan.models if m not in set(population)]
    phrase = (
        f"{', '.join(f'`{m}`' for m in outside)} "
        f"{'is not a study model' if len(outside) == 1 else 'are not study models'}: "
        "the claims do not read {it}; {it} {is_} placed among the study's models (section "
        '"Placement") on '
        "the columns on the study's own scale."
    ).format(it="it" if len(outside) == 1 else "they", is_="is" if len(outside) == 1 else "are")
    return SHIPPED_BANNER.format(
        study=plan.study.name,
        jobs=jobs,
        session=plan.shipped,
        device=plan.device,
        models_phrase=phrase if outside else "",
    )


def _fmt(v: Any) -> str:
    return fmt_num(v, 3, only_floats=True)


def measurement_rows(plan: MeasurePlan, data_dir: str | os.PathLike[str] | None) -> list[Any]:
    published: Any = study_table(plan.study, data_dir).values
    if plan.mini:  # compare each tiny model with the study model it stands in for (not evidence)
        published = {tiny: published.get(study, {}) for tiny, study in plan.stand_ins.items()}
    headline = {m: get(m).columns for m in plan.measurements}
    return compare(
        plan.store,
        published,
        versions=current_versions(plan.measurements),
        headline=headline,
        models=plan.models,
    )


def measurement_table(plan: MeasurePlan, data_dir=None) -> str:
    rows = measurement_rows(plan, data_dir)
    defined = sum(1 for r in rows if r.ours is not None)
    undefined = sum(
        1 for r in rows if r.ours is None and r.status not in ("failed", "re-measure", "corrupt")
    )
    failed = sorted({(r.model, r.measurement) for r in rows if r.status == "failed"})
    stale = sorted({(r.model, r.measurement) for r in rows if r.status == "re-measure"})
    lines = [
        "## Our measurements",
        "",
        f"Store `{plan.store}`, device `{plan.device}`: {len(plan.models)} model(s) x "
        f"{len(plan.measurements)} measurement(s): {defined} value(s), {undefined} undefined (e.g. "
        f"a ratio to zero clean accuracy, a degenerate fit), {len(failed)} failed job(s), "
        f"{len(stale)} to re-measure.",
    ]
    if plan.not_configured:
        lines.append(
            "Not measured (dataset not configured; the claims use the published values): "
            + ", ".join(f"`{m}` ({d})" for m, d in plan.not_configured.items())
            + "."
        )
    ref = (
        "the study model it stands in for (not evidence)"
        if plan.mini
        else f"the published table of `{plan.study.name}`"
    )
    lines += [
        "",
        f"Ours next to {ref}. Interval: 95% of our count (Wilson; ImageNet-C/C-bar: normal over "
        "independent cells); `inside` = the published value lies in it. Quirk columns compare the "
        "published computation (ReaL last batch, PGD denominator 50,048, ImageNet-C over 19 "
        "corruptions).",
        "",
        "| model | column | ours | k/n | 95% interval | published | diff | status |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        kn = "-" if r.k is None or r.n is None else f"{r.k}/{r.n}"
        iv = "-" if r.interval is None else f"[{_fmt(r.interval[0])}, {_fmt(r.interval[1])}]"
        status = r.status + (
            f": {r.note}" if r.status in ("failed", "re-measure", "corrupt") and r.note else ""
        )
        flag = accuracy_flag(get(r.measurement), r.column, r.k, r.n) if r.ours is not None else ""
        status += f"; {flag}" if flag else ""
        col = r.column if r.column != "-" else f"({r.measurement})"
        lines.append(
            f"| {r.model} | `{col}` | {_fmt(r.ours)} | {kn} | {iv} | {_fmt(r.published)} | "
            f"{_fmt(r.diff)} | {status.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


def claim_sources_table(outcomes: Sequence[Any]) -> str:
    """The table of where each claim's input values came from, and why a claim is incomplete.

    Per claim: the number of its input values per provenance label, the columns (with the
    labels of their values) that are not all published, and why a claim is incomplete."""
    lines = [
        "## Where each claim's inputs came from",
        "",
        "Input values = models x input columns of the claim. `published` = the study's published "
        "table; `measured` = our store; `mini` = our store, mini run (not evidence); `missing` / "
        "`failed` = the run was to measure it and has no current value / its job failed (the claim "
        "is then `incomplete`).",
        "",
        "| claim | input values | columns not (all) published | verdict |",
        "|---|---|---|---|",
    ]
    incomplete = []
    for o in outcomes:
        prov = o.provenance
        if prov is None:
            lines.append(f"| `{o.claim.id}` | - | - | {o.verdict} |")
            continue
        ours = [
            f"`{col}`"
            + (f" ({', '.join(f'{lab} {n}' for lab, n in counts.items())})" * bool(counts))
            for col, counts in prov.by_column().items()
            if set(counts) != {"published"}
        ]
        lines.append(f"| `{o.claim.id}` | {prov.text()} | {'; '.join(ours) or '-'} | {o.verdict} |")
        if prov.problems:
            incomplete.append(f"- `{o.claim.id}`: " + "; ".join(prov.problems).replace("|", "/"))
    if incomplete:
        lines += ["", "Incomplete claims (not judged on the published fallback):", "", *incomplete]
    return "\n".join(lines) + "\n"


def render(report_ctx: Any) -> str:
    """Our measurements (empty without a measuring plan)."""
    if not report_ctx.plans:
        return ""
    parts = []
    for plan in report_ctx.plans:
        claims = next(c for c, _ in report_ctx.studies if c.study.name == plan.study.name)
        if plan.mini:
            parts.append(
                MINI_BANNER.format(
                    stand_ins=", ".join(f"`{t}` -> `{s}`" for t, s in plan.stand_ins.items())
                )
            )
        members = set(claims.population) | set(claims.table.models)
        if not plan.mini and not set(plan.models) & members:
            if plan.shipped:
                parts.append(
                    shipped_banner(plan, claims.population)
                )  # its values are in Placement, not here
                continue
            parts.append(own_models_banner(plan))
        parts.append(measurement_table(plan, claims.data_dir))
    parts.append(claim_sources_table([o for _, outcomes in report_ctx.studies for o in outcomes]))
    return "\n".join(parts)

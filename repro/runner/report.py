"""Runner, the reproduce report: what was measured (and how it compares with benchmark.csv),
then the claims recomputed from our measurements with every number's source, as REPORT.md.

The claims come from ``repro.claims`` on the published table with our measured table
overlaid (``pipeline.measured_table``); every quantity not measured keeps its published
value, and each claim lists which of its inputs came from where. A mini run says at the top
that its numbers are NOT evidence and is never gated.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repro.runner.jobs import SweepSummary
from repro.runner.pipeline import MeasurePlan

MINI_BANNER = (
    "> **MINI RUN: these numbers are NOT evidence.** No dataset was configured, so the pipeline ran on\n"
    "> generated mini datasets (random smooth images) with tiny randomly initialised CNNs on the CPU.\n"
    "> It shows that measuring, storing, the claims and this report run end to end; nothing here says\n"
    "> anything about the study's models. In the claims below each tiny model's values stand in for one\n"
    "> study model ({stand_ins}); all other values are the published ones. Configure datasets\n"
    "> (`REPRO_<NAME>_ROOT` or `[datasets]` in repro.toml) to measure for real.\n"
)


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def measurement_rows(plan: MeasurePlan, data_dir: str | os.PathLike[str] | None) -> list[Any]:
    from repro.published.fetch import require_file
    from repro.runner.measurements import current_versions, get
    from repro.settings import data_dir as resolve
    from repro.store.compare import compare, read_published

    published = read_published(require_file("gavrikov2024/benchmark.csv", resolve(data_dir)))
    if plan.mini:  # compare each tiny model with the study model it stands in for (not evidence)
        published = {tiny: published.get(study, {}) for tiny, study in plan.stand_ins.items()}
    headline = {m: get(m).columns for m in plan.measurements}
    return compare(plan.store, published, versions=current_versions(plan.measurements), headline=headline,
                   models=plan.models)


def measurement_section(plan: MeasurePlan, summary: SweepSummary | None, data_dir=None) -> str:
    rows = measurement_rows(plan, data_dir)
    lines = ["## Measurements", "",
             f"Store: `{plan.store}`; device `{plan.device}`; {len(plan.models)} model(s) x "
             f"{len(plan.measurements)} measurement(s)."]
    if summary is not None:
        lines.append(f"This run: {summary.line()}.")
    if plan.not_configured:
        lines.append("Not measured (dataset not configured; the claims use the published values): "
                     + ", ".join(f"`{m}` ({d})" for m, d in plan.not_configured.items()) + ".")
    ref = "the study model it stands in for" if plan.mini else "benchmark.csv"
    lines += ["", f"Ours next to {ref}; interval = 95% Wilson interval of our count; quirk columns compare the "
              "published computation (ReaL last batch, PGD denominator 50,048, ImageNet-C over 19 corruptions).", "",
              "| model | column | ours | k/n | 95% interval | published | diff | status |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        kn = "-" if r.k is None or r.n is None else f"{r.k}/{r.n}"
        iv = "-" if r.interval is None else f"[{_fmt(r.interval[0])}, {_fmt(r.interval[1])}]"
        status = r.status + (f": {r.note}" if r.status in ("failed", "re-measure") and r.note else "")
        col = r.column if r.column != "-" else f"({r.measurement})"
        lines.append(f"| {r.model} | `{col}` | {_fmt(r.ours)} | {kn} | {iv} | {_fmt(r.published)} | "
                     f"{_fmt(r.diff)} | {status.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def claims_context(plan: MeasurePlan, data_dir=None):
    """The claim context: the published table with our measurements overlaid (labelled
    ``mini`` or ``measured``)."""
    from repro.claims.context import published_context
    from repro.runner.pipeline import measured_table

    ctx = published_context(data_dir)
    label = "mini" if plan.mini else "measured"
    ctx.table = ctx.table.overlay(measured_table(plan), label)
    ctx.source = "measure"
    return ctx


def claims_section(outcomes: Sequence[Any], mini: bool) -> str:
    lines = ["## Claims", "",
             "Each claim recomputed on the published table with our measurements overlaid. `sources` says where "
             "each input came from (`published` = benchmark.csv, `measured`/`mini` = our store)."]
    if mini:
        lines.append("Mini run: verdicts are shown but not gated (not evidence).")
    lines += ["", "| claim | published | ours | p | interval | verdict | sources |", "|---|---|---|---|---|---|---|"]
    for o in outcomes:
        r = o.result
        iv = "-" if r.interval is None else f"[{_fmt(r.interval[0])}, {_fmt(r.interval[1])}]"
        srcs: dict[str, list[str]] = {}
        for quantity, label in sorted(r.sources.items()):
            srcs.setdefault(label, []).append(quantity)
        src = "; ".join(f"{label}: {', '.join(qs)}" for label, qs in srcs.items()) or "-"
        lines.append(f"| `{o.claim.id}` | {_fmt(o.claim.published)} | {_fmt(float(r.value))} | {_fmt(r.p, 4)} | {iv} | "
                     f"{o.verdict} | {src} |")
    return "\n".join(lines) + "\n"


def write_report(plan: MeasurePlan, summary: SweepSummary | None, *, out: str | os.PathLike[str] = "REPORT.md",
                 data_dir=None, measure_seconds: float | None = None) -> Path:
    from repro.claims import evaluate_all
    from repro.store.files import atomic_write_bytes

    ctx = claims_context(plan, data_dir)
    outcomes = evaluate_all(ctx)
    parts = ["# repro: reproduction report", ""]
    if plan.mini:
        parts.append(MINI_BANNER.format(stand_ins=", ".join(f"`{t}` -> `{s}`" for t, s in plan.stand_ins.items())))
    parts.append("```\n" + plan.describe() + (f"\nmeasuring took {measure_seconds:.0f} s" if measure_seconds else "")
                 + "\n```\n")
    parts.append(measurement_section(plan, summary, data_dir))
    parts.append(claims_section(outcomes, plan.mini))
    path = Path(out)
    atomic_write_bytes(path, "\n".join(parts).encode())
    return path

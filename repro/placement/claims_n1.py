"""Placement: a study's claims recomputed with one more model in its population (n + 1).

This is done for a model inside the population (``repro.placement.place``).

The model's row (its measured values, else its external ones) joins the study's published table
and its population (as a model category of its own, so a group that selects by category, e.g.
the adversarially trained models, leaves it out and one that excludes categories takes it in).
Only claims whose every input column the model has, and whose statistic runs over the
population (its n grows by one), are recomputed; without intervals (no bootstrap: the value
and the verdict only). The verdict uses the claim's tolerance for published inputs (its printed
digits): it says whether the claim, as printed, still holds with the model among the study's;
it is neither a reproduction nor a re-analysis of the paper (the evidence of the added values is
stated beside it: measured or external).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from repro.base.table import ModelTable
from repro.claims import evaluate_all

PLACED_CATEGORY = "placed here"


@dataclass(frozen=True)
class ClaimN1:
    claim: str
    measure: str  # what the statistic is (the claim's measure, else its statement)
    base_value: float
    base_n: int
    base_verdict: str
    value: float
    n: int
    verdict: str
    columns: tuple[
        tuple[str, str], ...
    ]  # (column, measured | external) of the model's values it read


def extended_context(ctx: Any, model: str, row: dict[str, float]) -> Any:
    """``ctx`` (a published ClaimContext) with ``model``'s ``row`` in its table and population.

    The context has no bootstrap intervals."""
    from repro.claims.context import ClaimContext

    values = {m: dict(r) for m, r in ctx.table.values.items()}
    values[model] = {**values.get(model, {}), **row}
    table = ModelTable(
        values,
        origin=f"{ctx.table.origin} + {model}",
        sources=dict(ctx.table.sources),
        default_source=ctx.table.default_source,
    )
    cats = {**ctx.model_categories, PLACED_CATEGORY: [model]}
    spec = replace(ctx.spec, resamples=0) if ctx.spec is not None else None
    return ClaimContext(ctx.study, ctx.data_dir, table, cats, ctx.source, spec, intervals=False)


def _without_intervals(ctx: Any) -> Any:
    """The same published context without bootstrap intervals (values and verdicts only).

    Cached on ``ctx`` so the report's models share it."""
    key = "placement.base_without_intervals"
    if key not in ctx.cache:
        from repro.claims.context import ClaimContext

        spec = replace(ctx.spec, resamples=0) if ctx.spec is not None else None
        ctx.cache[key] = ClaimContext(
            ctx.study,
            ctx.data_dir,
            ctx.table,
            ctx.model_categories,
            ctx.source,
            spec,
            intervals=False,
        )
    return ctx.cache[key]


def claims_with(ctx: Any, values: Any) -> list[ClaimN1]:
    """The claims of ``ctx``'s study recomputed with ``values.model`` as one more model."""
    from repro.claims.check import evaluate

    row = values.row()
    kinds = values.kinds()
    base = evaluate_all(_without_intervals(ctx))
    extended = extended_context(ctx, values.model, row)
    out = []
    for o in base:
        cols = list(o.result.sources)
        if not cols or not set(cols) <= set(row) or o.result.n is None:
            continue
        new = evaluate(o.claim, extended)
        if new.result.n != o.result.n + 1:
            continue  # the statistic does not run over the population (it names its models)
        out.append(
            ClaimN1(
                o.claim.id,
                o.claim.measure or o.claim.statement,
                float(o.result.value),
                int(o.result.n),
                o.verdict,
                float(new.result.value),
                int(new.result.n),
                new.verdict,
                tuple((c, kinds[c]) for c in cols),
            )
        )
    return out

"""Gavrikov & Keuper 2024: the published table with its quirks corrected (METHODS.md section 5).

For the quirk-survival table (``repro.diagnostics.quirk_corrections``; ``[quirks] variants`` of
study.toml):

- Q1: ``top1_acc/imagenet-real`` is the accuracy of the last batch (326 images), not of
  ImageNet-ReaL. It cannot be recomputed from the published table, so the variant drops it: ID
  becomes the mean of ImageNet and ImageNet-V2, and the benchmark correlation matrix loses ReaL (7
  benchmarks).
- Q3: ``top1_acc/imagenet-c`` is the mean over 19 corruptions. The variant replaces it by the
  standard mean over the 15 corruptions x 5 severities, from the per-corruption columns of the
  same table (every model that has all 75 of them; every study model does).
- Q1+Q3: both.

No variant (notes): Q2, PGD-40's denominator 50,048 instead of 50,000, maps every accuracy a to
1 - (1 - a) x 50,048/50,000: the same increasing affine map for every model, so no rank (Spearman)
statistic moves, and the curvilinear fit's F test, U test and vertex are unchanged by an affine
map of y (its coefficients scale by 50,048/50,000). Q4, the degenerate raw critical-band columns:
the claims read the ``_norm`` columns only. Q5 and Q6 are loading quirks of the released code,
not properties of the published numbers.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from repro.base.table import ModelTable
from repro.claims.context import ClaimContext
from repro.diagnostics.quirk_corrections import QuirkCorrections, QuirkVariant
from repro.studies.gavrikov2024.quirks import IMAGENET_C_15

REAL = "top1_acc/imagenet-real"
IMAGENET_C = "top1_acc/imagenet-c"
NOTES = [
    "Q2 (PGD-40 divides by 50,048, not 50,000): every accuracy a becomes 1 - (1 - a) x "
    "50,048/50,000, one increasing affine map for all models: no rank statistic can move, nor the "
    "curvilinear claim's F test, U test or vertex (its coefficients scale by 50,048/50,000); no "
    "variant is needed",
    "Q4 (raw critical-band columns degenerate): no claim reads them (the analysis uses the _norm "
    "columns)",
    "Q5, Q6 (model-zoo loading): quirks of the released code, not of the published numbers",
]


def imagenet_c_15(table: ModelTable) -> ModelTable:
    """A copy of ``table`` with the standard 15-corruption x 5-severity ImageNet-C mean.

    Models without all 75 per-corruption columns keep their published value."""
    cols = [f"top1_acc/{c}_{s}" for c in IMAGENET_C_15 for s in range(1, 6)]
    values = {}
    for model, row in table.values.items():
        new = dict(row)
        per = [row.get(c) for c in cols]
        if all(v is not None and np.isfinite(v) for v in per):
            new[IMAGENET_C] = float(np.mean(per))  # type: ignore[arg-type]
        values[model] = new
    return ModelTable(
        values,
        origin=f"{table.origin} (ImageNet-C: 15-corruption mean)",
        sources=dict(table.sources),
        default_source=table.default_source,
    )


def _without_column(spec, column: str):
    """The analysis definition with ``column`` dropped from every category and the benchmarks."""
    cats = {
        k: (
            replace(d, columns=tuple(c for c in d.columns if c != column))
            if column in d.columns
            else d
        )
        for k, d in spec.categories.items()
    }
    return replace(
        spec, categories=cats, benchmarks={k: v for k, v in spec.benchmarks.items() if v != column}
    )


def _context(ctx: ClaimContext, table: ModelTable, spec) -> ClaimContext:
    return ClaimContext(
        ctx.study,
        ctx.data_dir,
        table,
        ctx.model_categories,
        ctx.source,
        replace(spec, resamples=0),
        intervals=False,
        inputs=ctx.inputs,
    )


def variants(ctx: ClaimContext) -> QuirkCorrections:
    spec = ctx.spec
    assert spec is not None, "the Gavrikov & Keuper study has an analysis definition"
    no_real = _without_column(spec, REAL)
    c15 = imagenet_c_15(ctx.table)
    return QuirkCorrections(
        [
            QuirkVariant(
                "Q1",
                "ReaL (last batch, 326 images) dropped from ID and from the benchmarks",
                _context(ctx, ctx.table, no_real),
                (REAL,),
            ),
            QuirkVariant(
                "Q3",
                "ImageNet-C as the standard 15-corruption mean",
                _context(ctx, c15, spec),
                (IMAGENET_C,),
            ),
            QuirkVariant("Q1+Q3", "both", _context(ctx, c15, no_real), (REAL, IMAGENET_C)),
        ],
        list(NOTES),
    )

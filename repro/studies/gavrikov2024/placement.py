"""The study's placement references (``[placement] references`` of its study.toml).

The model-vs-human ResNet-50 and the 10 human subjects (each and pooled), their shape bias scored
here from the pinned per-trial cue-conflict CSVs, ranked among the 48 beside the placed models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repro.placement.reference import Reference
from repro.placement.selection import models_to_place
from repro.placement.values import EXTERNAL, model_values
from repro.zoo.external import external_values

from .figures import Overlay
from .models_here_data import SHAPE_COLUMN, ShapeCount, reference_counts

NOTE = (
    "scored here from model-vs-human's per-trial cue-conflict CSV(s), pinned in this study's "
    "study.toml"
)


def _reference(count: ShapeCount, note: str = NOTE) -> Reference:
    return Reference(
        count.label,
        {SHAPE_COLUMN: count.value},
        {SHAPE_COLUMN: count.interval},
        {SHAPE_COLUMN: (count.shape, count.n)},
        note,
    )


def references(study: Any, data_dir: Path) -> list[Reference]:
    resnet, humans = reference_counts(study, data_dir)
    pooled = ShapeCount(
        f"humans ({len(humans)} subjects, pooled)",
        sum(h.shape for h in humans),
        sum(h.texture for h in humans),
    )
    each = ", ".join(f"{h.value:.3f}" for h in sorted(humans, key=lambda h: h.value))
    return [_reference(resnet), _reference(pooled, f"{NOTE}; the subjects one by one: {each}")]


def overlay(ctx: Any) -> list[Any]:
    """The models the report places (``repro.placement.selection``), for the scatter grid.

    One overlay of those with measured values only, and one per model that has external values,
    labelled ``external`` with their protocol (an external value is never drawn as measured)."""
    store = getattr(ctx, "store", None)
    claims = getattr(ctx, "claims", None)
    if claims is None or getattr(claims, "study", None) is None:
        return []
    ext = external_values()
    models = models_to_place(
        getattr(ctx, "plans", []), store, ext, with_store=getattr(ctx, "place_stored", False)
    )
    members = set(claims.population) if models else set()
    measured: dict[str, dict[str, float]] = {}
    out = []
    for model in models:
        if model in members:
            continue
        values = model_values(model, store, ext)
        row = values.row()
        if not row:
            continue
        kinds = values.kinds()
        external = sorted(c for c, k in kinds.items() if k == EXTERNAL)
        if not external:
            measured[model] = row
            continue
        protocols = sorted({values.first(c).protocol for c in external})  # type: ignore[union-attr]
        out.append(
            Overlay(
                f"{model}: {', '.join(external)} {EXTERNAL} ({'; '.join(protocols)})",
                {model: row},
                marker="P",
                color="tab:purple",
            )
        )
    head = (
        [Overlay("placed here, measured (dotted: no accuracy)", measured, color="tab:red")]
        if measured
        else []
    )
    return head + out

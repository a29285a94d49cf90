"""Gavrikov & Keuper 2024: the clusters of its 48 models for a bootstrap over training recipes.

For ``[claim.estimand] clusters`` (``repro.analysis.clustered``): the study's model categories
(r50_categories.json: baseline, training recipes, augmentation, stylized, freezing, contrastive),
with adversarial training split into its two eps sweeps (the Madry-lab L2 and L-inf models, each one
recipe trained at several eps): 8 clusters over the 48, 2 over the 15 AT models, 6 over the other
33."""

from __future__ import annotations

from collections.abc import Sequence

from repro.base.errors import ConfigError

SPLIT = "adversarial_training"
SWEEPS = (("_l2_", "adversarial_training/l2 sweep"), ("_linf_", "adversarial_training/linf sweep"))


def recipe_families(context, models: Sequence[str]) -> list[str]:
    """One cluster label per model.

    The label is its model category, or its eps sweep for an adversarially trained model."""
    category = {m: c for c, ms in context.model_categories.items() for m in ms}
    out = []
    for m in models:
        if m not in category:
            raise ConfigError(
                f"recipe_families: model {m!r} has no model category (study categories: "
                f"{', '.join(context.model_categories)})"
            )
        label = category[m]
        if label == SPLIT:
            label = next((name for token, name in SWEEPS if token in m), None)
            if label is None:
                raise ConfigError(
                    f"recipe_families: adversarially trained model {m!r} names no eps sweep "
                    f"({', '.join(t for t, _ in SWEEPS)})"
                )
        out.append(label)
    return out

"""Every line colour of the report's many-line figures is named in a legend, with what it counts
(the adversarially trained models, the other factors), read off the drawn figure."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.claims


def _labels(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_spectral_and_profile_figures_name_both_colours_with_their_counts(published_claim_context):
    from repro.studies.gavrikov2024.paper_figures import (
        _profile_figure,
        _spectral_figure,
        profile_rows,
        spectral_rows,
    )

    ctx = published_claim_context
    at = ctx.model_categories["adversarial_training"]
    n_at = sum(m in at for m in ctx.analysis.population)
    n_other = len(ctx.analysis.population) - n_at
    assert (n_at, n_other) == (15, 33)
    spectral = _spectral_figure(spectral_rows(ctx))
    assert _labels(spectral) == [
        f"adversarially trained ({n_at})",
        f"other models ({n_other})",
        "cut-offs 0.1-0.5 (averaged into the bias)",
    ]
    # one legend for the two panels, whose lines are one per model and filter
    assert sum(ax.get_legend() is not None for ax in spectral.axes) == 1
    assert [len(ax.lines) for ax in spectral.axes] == [48, 48]
    profiles = _profile_figure(profile_rows(ctx))
    assert _labels(profiles) == [f"adversarially trained ({n_at})", f"other models ({n_other})"]


def test_the_strength_figure_names_the_claims_factor_and_the_others(published_claim_contexts):
    from repro.studies.imagenetx.report import TREND_SWEEPS, strength_figure
    from repro.studies.imagenetx.statistics import FACTORS, strength_profile

    ctx = published_claim_contexts["imagenetx"]
    rows = [r for s in TREND_SWEEPS for r in strength_profile(ctx, s)]
    fig = strength_figure(rows)
    assert _labels(fig) == [
        "smaller (the claim's factor)",
        f"the {len(FACTORS) - 1} other factors",
        "1: the factor's error = overall",
    ]
    assert len(FACTORS) == 16
    assert sum(ax.get_legend() is not None for ax in fig.axes) == 1

"""The tests of tests/unit/test_spectral_scoring.py that read the published data directory, in the
data tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import json

import pytest

from repro.base.stats import Count
from repro.scoring import spectral as sp

pytestmark = pytest.mark.data


def _study_models(data_dir):
    import pandas as pd

    cats = json.loads((data_dir / "gavrikov2024" / "r50_categories.json").read_text())
    models = [m for members in cats.values() for m in members]
    df = pd.read_csv(data_dir / "gavrikov2024" / "benchmark.csv").set_index("model")
    return models, df


def test_published_ratios_are_counts_over_50000_divided_by_clean(data_dir):
    """benchmark.csv's LFC/HFC columns are (k / 50,000) / clean top-1 with integer k: recovering
    the counts and re-scoring them with lfc_hfc_ratios reproduces every published value."""
    models, df = _study_models(data_dir)
    assert len(models) == 48
    worst_integrality, worst_rel = 0.0, 0.0
    for model in models:
        clean_k = df.loc[model, "top1_acc/imagenet"] * 500  # percent of 50,000
        worst_integrality = max(worst_integrality, abs(clean_k - round(clean_k)))
        clean = Count(round(clean_k), 50_000)
        counts = {}
        for name, _, _ in sp.conditions():
            published = df.loc[model, f"metric/bandpass/{name}"]
            k = published * clean_k
            worst_integrality = max(worst_integrality, abs(k - round(k)))
            counts[name] = Count(round(k), 50_000)
        ratios = sp.lfc_hfc_ratios(counts, clean)
        for name, value in ratios.items():
            published = df.loc[model, f"metric/bandpass/{name}"]
            worst_rel = max(worst_rel, abs(value - published) / max(abs(published), 1e-12))
    assert worst_integrality < 1e-3
    assert worst_rel < 1e-6


def test_frequency_biases_recomputed_from_published_ratios(data_dir):
    """The METHODS.md facts: max high-frequency bias resnet50_prime 0.135, runner-up 0.087;
    low-frequency bias vs PGD-40/low Spearman rho = +0.73 over the 48 models."""
    from scipy.stats import spearmanr

    models, df = _study_models(data_dir)
    hf, lf = {}, {}
    for model in models:
        ratios = {
            name: float(df.loc[model, f"metric/bandpass/{name}"]) for name, _, _ in sp.conditions()
        }
        hf[model] = sp.high_frequency_bias(ratios)
        lf[model] = sp.low_frequency_bias(ratios)
    ranked = sorted(hf, key=hf.get, reverse=True)
    assert ranked[0] == "resnet50_prime" and round(hf[ranked[0]], 3) == 0.135
    assert round(hf[ranked[1]], 3) == 0.087
    rho = spearmanr(
        [lf[m] for m in models], [df.loc[m, "top1_acc/PGD-40/low"] for m in models]
    ).statistic
    assert round(rho, 2) == 0.73

"""The tests of tests/unit/test_imagenetx_claims.py that read the published data directory, in the
data tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from repro.studies.imagenetx import statistics as ic

pytestmark = pytest.mark.data


def _published(data_dir):
    from repro.base.study import get_study
    from repro.claims.context import published_context

    return published_context(get_study("imagenetx"), data_dir)


def test_published_concordance_matches_brute_force_pairwise_spearman(data_dir):
    ctx = _published(data_dir)
    r = ic.failure_mode_concordance(ctx, resamples=200)
    from repro.scoring.imagenet_x import error_ratio_table
    from repro.studies.imagenetx.published import read_factor_table

    er = error_ratio_table(read_factor_table("imagenet_testbed", data_dir=data_dir)).to_numpy()
    ranks = stats.rankdata(er, axis=1)
    c = np.corrcoef(ranks)
    mean_pairwise = c[np.triu_indices_from(c, k=1)].mean()
    assert r.n == 335
    assert r.details["mean_pairwise_spearman"]["value"] == pytest.approx(mean_pairwise, abs=1e-12)
    assert 0.6 < r.value < 0.8 and r.p < 1e-100


def test_published_crop_sweep_trend_and_table(data_dir):
    ctx = _published(data_dir)
    rows = ic.spillover_table(ctx)
    assert len(rows) == 16 * len(ic.SWEEPS)
    smaller = next(r for r in rows if r["sweep"] == "crop" and r["factor"] == "smaller")
    assert smaller["n"] == 1272 and smaller["levels"] == 93
    assert smaller["rho"] > 0.9 and smaller["p_holm"] < 1e-10
    r = ic.augmentation_trend(ctx, sweep="crop", factor="smaller", resamples=200)
    assert r.value == pytest.approx(smaller["rho"], abs=1e-12)


def test_published_group_comparisons_match_a_direct_recomputation(data_dir):
    """The paradigm and architecture claims' numbers against a recomputation straight from the
    published CSVs (pandas group means, scipy Spearman), with the group sizes and left-out counts
    the claims state; every testbed model is listed in the package's type table and every model of
    the architecture population is matched by the name rule."""
    from repro.scoring.imagenet_x import FACTORS, error_ratio_table
    from repro.studies.imagenetx.group_agreement import group_agreement
    from repro.studies.imagenetx.model_labels import package_model_types
    from repro.studies.imagenetx.published import read_factor_table

    ctx = _published(data_dir)
    pkg = package_model_types()
    er = {
        s: error_ratio_table(read_factor_table(s, data_dir=data_dir))
        for s in ("imagenet_testbed", "modelvshuman", "base")
    }
    assert set(er["imagenet_testbed"].index) <= set(pkg.types)
    frames = [er["imagenet_testbed"]] + [
        er[s][er[s].index.isin(pkg.selfsupervised)] for s in ("modelvshuman", "base")
    ]
    pooled = pd.concat(frames)
    kind = pooled.index.map(pkg.types.get)
    sup = pooled[kind == "Supervised on ImageNet-1K"][list(FACTORS)].mean()
    ssl = pooled[kind == "Self-supervised"][list(FACTORS)].mean()
    r = group_agreement(
        ctx, grouping="paradigm", groups=["Supervised on ImageNet-1K", "Self-supervised"]
    )
    assert r.details["n_per_group"] == {"Supervised on ImageNet-1K": 83, "Self-supervised": 13}
    assert r.value == pytest.approx(stats.spearmanr(sup, ssl).statistic, abs=1e-12)
    assert r.value >= 0.8 and r.interval[0] <= r.value <= r.interval[1]

    testbed = er["imagenet_testbed"]
    kinds = testbed.index.map(pkg.types.get)
    population = kinds.isin(
        [
            "Supervised on more data",
            "Supervised on ImageNet-1K",
            "Self-supervised",
            "Robustness intervention",
        ]
    )
    vit = testbed.index.str.startswith("vit_")
    a = group_agreement(ctx, grouping="architecture", groups=["transformer", "convolutional"])
    assert a.details["n_per_group"] == {"transformer": 8, "convolutional": 192}
    assert int(population.sum()) == 200 and a.details["name_rule"]["unmatched"] == []
    assert a.details["left_out"]["type Low Accuracy CNN"] == 115
    direct = stats.spearmanr(
        testbed[population & vit][list(FACTORS)].mean(),
        testbed[population & ~vit][list(FACTORS)].mean(),
    ).statistic
    assert a.value == pytest.approx(direct, abs=1e-12) and a.value >= 0.8

"""The tests of tests/unit/test_imagenetx_claims.py that read the published data directory, in the
data tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import numpy as np
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

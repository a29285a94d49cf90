"""``resampled_ranks`` (the bootstrap's ranks counted, not sorted) gives exactly scipy's
``rankdata`` of every resample: ties, infinities, signed zeros and a NaN included; and the
permutation p of many redraws refuses an x it cannot order."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from repro.analysis.correlation import bootstrap_indices, resampled_ranks, spearman
from repro.analysis.trend import permutation_p_rows

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("seed", range(40))
def test_counted_ranks_are_rankdatas(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 90))
    if seed % 2:  # many ties
        values = rng.integers(0, int(rng.integers(1, 8)), n).astype(float)
    else:
        values = rng.normal(size=n)
    if seed % 5 == 0:
        values[0], values[-1] = np.inf, -np.inf
    if seed % 7 == 0:
        values[1], values[2] = -0.0, 0.0
    idx = bootstrap_indices(n, 300, seed)
    got = resampled_ranks(values, idx)
    want = stats.rankdata(values[idx], axis=1)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


def test_a_nan_gives_rankdatas_nan_rows():
    values = np.array([0.3, np.nan, 0.1, 0.2, 0.1])
    idx = bootstrap_indices(values.size, 50, 1)
    got = resampled_ranks(values, idx)
    want = stats.rankdata(values[idx], axis=1)
    assert np.isnan(got).any()
    assert np.array_equal(got, want, equal_nan=True)


def test_the_interval_is_the_sorted_ranks_interval():
    """The bootstrap interval of ``spearman`` is the one rankdata's ranks give."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, 30).astype(float)
    y = x + rng.normal(size=30)
    corr = spearman(x, y, resamples=2000, seed=7)
    idx = bootstrap_indices(30, 2000, 7)
    rx, ry = stats.rankdata(x[idx], axis=1), stats.rankdata(y[idx], axis=1)
    boot = np.array(
        [
            np.corrcoef(a, b)[0, 1] if a.std() and b.std() else np.nan
            for a, b in zip(rx, ry, strict=True)
        ]
    )
    ok = boot[np.isfinite(boot)]
    lo, hi = np.percentile(ok, [2.5, 97.5])
    assert corr.interval == pytest.approx((lo, hi), rel=1e-12)
    assert corr.dropped == int(np.isnan(boot).sum())


def test_permutation_p_rows_refuses_a_nan_x():
    x = np.array([0.0, 1.0, np.nan, 3.0])
    y = np.tile(np.arange(4.0), (3, 1))
    with pytest.raises(ValueError, match="NaN"):
        permutation_p_rows(x, y, np.zeros_like(y, dtype=bool), np.zeros(3))


def test_constant_resamples_are_dropped_and_counted():
    """With 3 models, about 1 resample in 9 draws one model thrice: its ranks are constant and its
    rho undefined. Those resamples are dropped from the interval and counted: exactly the
    constant rows of the drawn indices."""
    x, y = np.array([0.1, 0.5, 0.3]), np.array([2.0, 9.0, 4.0])
    res = spearman(x, y, resamples=450, seed=4)
    idx = bootstrap_indices(3, 450, 4)
    constant = int(np.sum(np.ptp(x[idx], axis=1) == 0))
    assert res.dropped == constant and 30 < constant < 70

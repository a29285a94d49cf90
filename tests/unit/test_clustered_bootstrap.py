"""The cluster bootstrap (``repro.analysis.clustered``) against independent sources: scipy's
Spearman on the expanded sample, the exact bootstrap distribution by enumeration, the closed-form
bootstrap variance of a mean, and direct counts of resamples at the bound."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.clustered import (
    LOCO,
    MIN_CLUSTERS,
    Resampler,
    cluster_bootstrap,
    cluster_weights,
    distinct_resamples,
    leave_one_cluster_out,
    spearman_resampler,
    weighted_midranks,
    weighted_spearman,
)

pytestmark = pytest.mark.unit


def test_weighted_ranks_and_spearman_equal_scipy_on_the_expanded_sample():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 6, 20).astype(float)  # heavy ties
    y = rng.normal(size=20)
    y[:5] = y[0]
    w = rng.integers(0, 4, size=(50, 20)).astype(float)
    w[:, 0] += 1  # at least one unit per row
    ranks = weighted_midranks(x, w)
    rho = weighted_spearman(x, y, w)
    for b in range(50):
        ex, ey = np.repeat(x, w[b].astype(int)), np.repeat(y, w[b].astype(int))
        keep = w[b] > 0
        assert np.allclose(
            ranks[b][keep], stats.rankdata(ex)[np.cumsum(w[b].astype(int))[keep] - 1]
        )
        want = stats.spearmanr(ex, ey).statistic
        assert (math.isnan(want) and math.isnan(rho[b])) or rho[b] == pytest.approx(want, abs=1e-12)


def test_cluster_weights_draw_whole_clusters():
    labels = ["a"] * 3 + ["b"] * 2 + ["c"] * 5 + ["d"]
    w = cluster_weights(labels, 200, seed=3)
    idx = {name: [i for i, v in enumerate(labels) if v == name] for name in "abcd"}
    for row in w:
        counts = []
        for members in idx.values():
            assert len(set(row[members])) == 1  # a cluster is drawn whole
            counts.append(row[members[0]])
        assert sum(counts) == 4 and all(c == int(c) for c in counts)  # G draws of G clusters
    assert np.array_equal(w, cluster_weights(labels, 200, seed=3))  # seeded


def _mean_resampler(values):
    v = np.asarray(values, dtype=float)
    return Resampler(
        tuple(f"m{i}" for i in range(v.size)), lambda w: (w * v).sum(axis=1) / w.sum(axis=1)
    )


def test_bootstrap_of_a_mean_matches_the_exact_distribution_by_enumeration():
    """G = 4 single-unit clusters: the 35 multisets and their multinomial probabilities give the
    exact bootstrap distribution of the mean; the Monte Carlo draws follow it."""
    v = np.array([0.0, 1.0, 3.0, 7.0])
    exact: dict[float, float] = {}
    for counts in itertools.product(range(5), repeat=4):
        if sum(counts) == 4:
            p = stats.multinomial.pmf(counts, 4, [0.25] * 4)
            m = float(np.dot(counts, v) / 4)
            exact[m] = exact.get(m, 0.0) + p
    assert (
        len({c for c in itertools.product(range(5), repeat=4) if sum(c) == 4})
        == distinct_resamples(4)
        == 35
    )
    w = cluster_weights(["a", "b", "c", "d"], 40_000, seed=0)
    draws = _mean_resampler(v).fn(w)
    support = np.array(sorted(exact))
    cdf_exact = np.cumsum([exact[s] for s in support])
    cdf_mc = np.array([(draws <= s + 1e-12).mean() for s in support])
    assert np.max(np.abs(cdf_mc - cdf_exact)) < 0.01


def test_bootstrap_variance_of_cluster_means_is_the_closed_form():
    """Equal clusters of 3 units: the mean over units is the mean of the G cluster means, whose
    bootstrap variance is sum_g (c_g - c_bar)^2 / G^2."""
    rng = np.random.default_rng(7)
    g = 8
    values = rng.normal(size=(g, 3)) + rng.normal(size=(g, 1)) * 2
    labels = [f"c{i}" for i in range(g) for _ in range(3)]
    draws = _mean_resampler(values.ravel()).fn(cluster_weights(labels, 40_000, seed=1))
    c = values.mean(axis=1)
    assert draws.var() == pytest.approx(((c - c.mean()) ** 2).sum() / g**2, rel=0.03)


def test_too_few_clusters_is_not_estimable_and_says_why():
    r = spearman_resampler([f"m{i}" for i in range(15)], np.arange(15.0), -(np.arange(15.0) ** 2))
    res = cluster_bootstrap(r, ["l2"] * 10 + ["linf"] * 5)
    assert (
        not res.estimable
        and res.interval is None
        and res.clusters == 2
        and res.sizes == {"l2": 10, "linf": 5}
    )
    assert res.why == f"2 clusters, fewer than {MIN_CLUSTERS}: 3 distinct cluster resamples"
    assert res.text().startswith("not estimable (2 clusters")
    assert res.as_json()["interval"] is None and res.as_json()["method"] is None


def test_resamples_at_the_bound_are_counted_and_warned_about():
    """Nearly monotone data (one swapped pair): every resample that misses the pair is exactly -1.
    The share is counted directly with scipy on each expanded resample."""
    x = np.arange(15.0)
    y = -x.copy()
    y[[3, 4]] = y[[4, 3]]
    labels = [f"m{i}" for i in range(15)]
    res = cluster_bootstrap(
        spearman_resampler(labels, x, y, ("shape bias", "ID")), labels, resamples=500, seed=2
    )
    w = cluster_weights(labels, 500, seed=2)
    direct = [
        stats.spearmanr(np.repeat(x, row.astype(int)), np.repeat(y, row.astype(int))).statistic
        for row in w
    ]
    share = float(np.mean(np.isclose(direct, -1.0, atol=1e-9)))
    assert res.at_bound == pytest.approx(share) and share > 0.1
    assert res.estimable and res.interval[0] == -1.0
    assert any(f"{share:.0%} of resamples at the statistic's bound" in m for m in res.warnings)


def test_ties_and_few_clusters_are_warned_about():
    rng = np.random.default_rng(0)
    x = np.repeat(np.arange(20.0), [3] * 8 + [2] * 12)[:48]  # 20 distinct values over 48 units
    y = x + rng.normal(size=48)
    labels = [f"c{i % 8}" for i in range(48)]
    res = cluster_bootstrap(spearman_resampler(labels, x, y, ("cf", "ID")), labels)
    assert res.estimable and "heavy ties: cf takes 20 distinct values over 48 units" in res.warnings
    assert any(m.startswith("only 8 clusters") for m in res.warnings)
    iid = cluster_bootstrap(
        spearman_resampler(labels, x, y, ("cf", "ID")), [f"u{i}" for i in range(48)]
    )
    assert not any(m.startswith("only") for m in iid.warnings) and iid.clusters == 48


def test_leave_one_cluster_out_is_the_range_without_each_cluster():
    """The range of Spearman's rho recomputed by scipy on the units left when each cluster is
    left out; a cluster whose removal leaves a constant variable is named and left out of the
    range; fewer than 3 clusters: not estimable."""
    rng = np.random.default_rng(1)
    labels = np.array([f"c{i % 5}" for i in range(30)])
    x = rng.normal(size=30)
    y = x + rng.normal(size=30) + np.where(labels == "c0", 3.0 * x, 0.0)  # c0 pulls rho up
    res = leave_one_cluster_out(spearman_resampler(list(labels), x, y, ("x", "y")), labels)
    rho = {c: stats.spearmanr(x[labels != c], y[labels != c]).statistic for c in set(labels)}
    assert res.estimable and res.kind == LOCO and res.clusters == 5
    assert res.interval == pytest.approx((min(rho.values()), max(rho.values())), abs=1e-12)
    assert min(rho, key=rho.get) == "c0"  # the family the statistic rests on most
    assert res.seed is None and res.confidence is None and "without each" in res.method
    # x constant outside c1: without c1 rho is undefined there, named and left out
    x2 = np.where(labels == "c1", x, 0.0)
    res2 = leave_one_cluster_out(spearman_resampler(list(labels), x2, y, ("x", "y")), labels)
    assert res2.undefined == 1 and res2.warnings == ("undefined without c1: left out of the range",)
    two = leave_one_cluster_out(
        spearman_resampler(list(labels[:12]), x[:12], y[:12], ("x", "y")),
        ["a"] * 6 + ["b"] * 6,
    )
    assert not two.estimable and "2 clusters" in two.why

"""The cluster-bootstrap interval's words and edges (``repro.analysis.clustered``): its text and
JSON whole, each warning at its threshold (resamples at a bound, heavy ties, few clusters, undefined
resamples), the refusals whole, the leave-one-cluster-out weights, and the weighted median and
Pearson correlation against numpy on the expanded sample."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.analysis.clustered import (
    LOCO,
    METHOD,
    ClusteredInterval,
    Resampler,
    cluster_bootstrap,
    cluster_weights,
    correlation_of,
    distinct_resamples,
    leave_one_cluster_out,
    spearman_resampler,
    weighted_median,
    weighted_pearson,
)

pytestmark = pytest.mark.unit


def _fixed(values, bounds=(-1.0, 1.0), inputs=None, units=None):
    """A resampler whose statistic is ``values`` whatever the weights (one per resample)."""
    v = np.asarray(values, dtype=float)
    n = len(units) if units is not None else 12
    return Resampler(
        tuple(units or [f"m{i}" for i in range(n)]),
        lambda w: v[: w.shape[0]],
        bounds,
        inputs or {},
    )


def _mean(values, units=None):
    """The weighted mean of ``values`` over the units."""
    v = np.asarray(values, dtype=float)
    return Resampler(
        tuple(units or [f"m{i}" for i in range(v.size)]),
        lambda w: (w * v).sum(axis=1) / w.sum(axis=1),
    )


LABELS12 = [f"c{i}" for i in range(12)]


# ----------------------------------------------------------------------------- text and JSON


def test_an_interval_says_its_method_and_warnings_whole():
    c = ClusteredInterval(
        True,
        (-0.81234, -0.1),
        7,
        {"a": 3, "b": 4},
        500,
        3,
        0.9,
        warnings=("first", "second"),
        at_bound=0.125,
        undefined=2,
    )
    assert c.method == "percentile cluster bootstrap over 7 clusters (90%, 500 resamples, seed 3)"
    assert c.text(method=False) == "[-0.812, -0.100]"
    assert c.text() == (
        "[-0.812, -0.100] (percentile cluster bootstrap over 7 clusters (90%, 500 resamples, "
        "seed 3)); warning: first; second"
    )
    assert c.as_json() == {
        "estimable": True,
        "kind": METHOD,
        "interval": [-0.81234, -0.1],
        "method": c.method,
        "clusters": 7,
        "cluster_sizes": {"a": 3, "b": 4},
        "resamples": 500,
        "seed": 3,
        "confidence": 0.9,
        "why": None,
        "warnings": ["first", "second"],
        "at_bound": 0.125,
        "undefined": 2,
    }
    plain = ClusteredInterval(True, (0.2, 0.3), 12, {}, 100, 0, 0.95)
    assert plain.text() == (
        "[0.200, 0.300] (percentile cluster bootstrap over 12 clusters (95%, 100 resamples, "
        "seed 0))"
    )


def test_a_range_and_a_refusal_say_what_they_are_whole():
    loco = ClusteredInterval(True, (0.1, 0.5), 5, {}, 5, None, None, kind=LOCO)
    assert loco.method == (
        "leave-one-cluster-out range over 5 clusters (the statistic without each in turn)"
    )
    assert loco.text() == f"[0.100, 0.500] ({loco.method})"
    refused = ClusteredInterval(False, None, 2, {"a": 1, "b": 1}, 2000, 0, 0.95, why="too few")
    assert refused.text() == "not estimable (too few)" and refused.text(method=False) == (
        "not estimable (too few)"
    )
    j = refused.as_json()
    assert j["why"] == "too few" and j["method"] is None and j["interval"] is None
    assert j["estimable"] is False and j["kind"] == METHOD


def test_distinct_resamples_is_the_multiset_count():
    assert [distinct_resamples(g) for g in range(8)] == [0, 1, 3, 10, 35, 126, 462, 1716]
    assert distinct_resamples(-1) == 0


# ------------------------------------------------------------------------- the bootstrap's edges


def test_the_interval_is_the_percentile_of_the_resampled_statistic():
    v = np.arange(12.0) ** 1.5
    res = cluster_bootstrap(_mean(v), LABELS12, resamples=400, seed=5, confidence=0.9)
    w = cluster_weights(LABELS12, 400, 5)
    draws = (w * v).sum(axis=1) / w.sum(axis=1)
    assert res.interval == (float(np.percentile(draws, 5.0)), float(np.percentile(draws, 95.0)))
    assert res.estimable and res.warnings == () and res.at_bound == 0.0 and res.undefined == 0
    assert (res.resamples, res.seed, res.confidence, res.clusters) == (400, 5, 0.9, 12)
    assert res.sizes == {c: 1 for c in LABELS12} and res.kind == METHOD


def test_cluster_weights_are_read_only_and_labels_are_read_as_text():
    w = cluster_weights([1, 1, 2, 3], 50, 0)
    assert not w.flags.writeable and w.shape == (50, 4) and w.dtype == float
    assert np.array_equal(w, cluster_weights(["1", "1", "2", "3"], 50, 0))
    assert np.all(w[:, 0] == w[:, 1]) and np.all(w.sum(axis=1) - w[:, 1] == 3)


@pytest.mark.parametrize(
    ("labels", "why"),
    [
        (["a"] * 12, "1 cluster, fewer than 6: 1 distinct cluster resamples"),
        (["a", "b"] * 6, "2 clusters, fewer than 6: 3 distinct cluster resamples"),
        (
            ["a", "b", "c", "d", "e"] + ["a"] * 7,
            "5 clusters, fewer than 6: 126 distinct cluster resamples",
        ),
    ],
)
def test_too_few_clusters_say_how_many_whole(labels, why):
    res = cluster_bootstrap(_fixed([0.1] * 50), labels, resamples=50)
    assert res.estimable is False and res.why == why and res.interval is None
    assert res.undefined == 0 and res.warnings == ()


def test_the_least_number_of_clusters_is_estimable_and_can_be_set():
    six = ["a", "b", "c", "d", "e", "f"] * 2
    assert cluster_bootstrap(_fixed([0.1] * 20), six, resamples=20).estimable
    res = cluster_bootstrap(_fixed([0.1] * 20), six, resamples=20, min_clusters=7)
    assert not res.estimable and res.why == (
        "6 clusters, fewer than 7: 462 distinct cluster resamples"
    )
    assert cluster_bootstrap(
        _fixed([0.1] * 20), ["a", "b"] * 6, resamples=20, min_clusters=2
    ).estimable


@pytest.mark.parametrize(
    ("labels", "kwargs", "message"),
    [
        (LABELS12[:11], {}, "cluster_bootstrap: 11 cluster labels for 12 units"),
        (
            LABELS12,
            {"resamples": 0},
            "cluster_bootstrap: resamples 0 must be >= 1 and confidence 0.95 in (0, 1)",
        ),
        (
            LABELS12,
            {"confidence": 1.0},
            "cluster_bootstrap: resamples 2000 must be >= 1 and confidence 1.0 in (0, 1)",
        ),
        (
            LABELS12,
            {"confidence": 0.0},
            "cluster_bootstrap: resamples 2000 must be >= 1 and confidence 0.0 in (0, 1)",
        ),
    ],
)
def test_bad_arguments_are_refused_whole(labels, kwargs, message):
    with pytest.raises(ValueError) as e:
        cluster_bootstrap(_fixed([0.1] * 2000), labels, **kwargs)
    assert str(e.value) == message


def test_a_single_resample_is_allowed():
    res = cluster_bootstrap(_fixed([0.25]), LABELS12, resamples=1)
    assert res.estimable and res.interval == (0.25, 0.25)


def test_the_bound_warning_starts_at_the_tail_share():
    """Confidence 0.5: a tail is 25% of the resamples; one of four at a bound is exactly that."""
    res = cluster_bootstrap(_fixed([1.0, 0.2, 0.3, 0.4]), LABELS12, resamples=4, confidence=0.5)
    assert res.at_bound == 0.25
    assert res.warnings == (
        "25% of resamples at the statistic's bound (-1 or 1): an end of the interval is the "
        "bound, not sampling",
    )
    under = cluster_bootstrap(
        _fixed([1.0, 0.2, 0.3, 0.4, 0.5]), LABELS12, resamples=5, confidence=0.5
    )
    assert under.at_bound == 0.2 and under.warnings == ()


def test_a_value_counts_as_at_a_bound_within_its_tolerance():
    near = cluster_bootstrap(_fixed([-1.0 + 5e-10, 1.0 - 5e-10, 0.0, 0.5]), LABELS12, resamples=4)
    assert near.at_bound == 0.5
    far = cluster_bootstrap(_fixed([-1.0 + 2e-9, 1.0 - 2e-9, 0.0, 0.5]), LABELS12, resamples=4)
    assert far.at_bound == 0.0 and far.warnings == ()
    unbounded = cluster_bootstrap(_fixed([1.0, -1.0, 1.0, 1.0], None), LABELS12, resamples=4)
    assert unbounded.at_bound == 0.0 and unbounded.warnings == ()
    other = cluster_bootstrap(_fixed([2.0, 0.0, 2.0, 1.0], (0.0, 2.0)), LABELS12, resamples=4)
    assert other.at_bound == 0.75 and other.warnings[0].startswith(
        "75% of resamples at the statistic's bound (0 or 2)"
    )


def test_undefined_resamples_are_dropped_counted_and_warned_about():
    res = cluster_bootstrap(
        _fixed([0.1, math.nan, 0.3, 0.2]), LABELS12, resamples=4, confidence=0.5
    )
    assert res.undefined == 1 and res.estimable
    assert res.interval == (
        float(np.percentile([0.1, 0.3, 0.2], 25)),
        float(np.percentile([0.1, 0.3, 0.2], 75)),
    )
    assert res.warnings == ("1 of 4 resamples undefined (a constant variable), dropped",)
    none = cluster_bootstrap(_fixed([math.nan, math.inf]), LABELS12, resamples=2)
    assert none.estimable is False
    assert none.why == "the statistic is undefined in every resample"
    assert none.undefined == 2 and none.interval is None


def test_few_clusters_are_warned_about_below_ten():
    nine = [f"c{i % 9}" for i in range(12)]
    res = cluster_bootstrap(_fixed([0.1] * 10), nine, resamples=10)
    assert res.warnings == (
        "only 9 clusters: a cluster bootstrap tends to be too narrow with fewer than 10",
    )
    ten = [f"c{i % 10}" for i in range(12)]
    assert cluster_bootstrap(_fixed([0.1] * 10), ten, resamples=10).warnings == ()


@pytest.mark.parametrize(
    ("values", "warned"),
    [
        ([1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], False),  # 11 distinct of 12 units
        ([1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 9], False),  # 9 distinct: not under 9 (75%)
        ([1, 1, 1, 2, 2, 2, 3, 4, 5, 6, 7, 8], True),  # 8 distinct
        # NaN is no value: 7 finite distinct values over 12 units
        ([1, 2, 3, 4, 5, 6, 7, math.nan, math.nan, math.nan, math.nan, math.nan], True),
    ],
)
def test_heavy_ties_start_under_three_quarters_distinct(values, warned):
    v = np.asarray(values, dtype=float)
    # ten clusters (units 0 and 10, 1 and 11 share one): the input varies within c0
    labels = [f"c{i % 10}" for i in range(12)]
    res = cluster_bootstrap(_fixed([0.1] * 10, inputs={"cf": v}), labels, resamples=10)
    distinct = np.unique(v[np.isfinite(v)]).size
    want = (f"heavy ties: cf takes {distinct} distinct values over 12 units",) if warned else ()
    assert res.warnings == want


def test_ties_that_are_the_clustering_itself_are_not_warned_about():
    """A sweep's strength: constant within every cluster, so its ties are the clusters."""
    labels = [f"c{i // 2}" for i in range(12)]  # six clusters of two
    strength = np.repeat([0.1, 0.1, 0.5, 0.5, 1.0, 1.0], 2)  # 3 distinct values over 12 units
    res = cluster_bootstrap(
        _fixed([0.1] * 10, inputs={"eps": strength}), labels, resamples=10, min_clusters=6
    )
    assert not any(w.startswith("heavy ties") for w in res.warnings)
    mixed = strength.copy()
    mixed[1] = 0.7  # no longer constant within c0
    res = cluster_bootstrap(
        _fixed([0.1] * 10, inputs={"eps": mixed}), labels, resamples=10, min_clusters=6
    )
    assert "heavy ties: eps takes 4 distinct values over 12 units" in res.warnings


def test_a_spearman_resampler_names_its_inputs_and_bounds():
    r = spearman_resampler(["a", "b", "c"], [1, 2, 3], [3, 1, 2])
    assert r.models == ("a", "b", "c") and r.bounds == (-1.0, 1.0)
    assert list(r.inputs) == ["x", "y"] and r.inputs["y"].tolist() == [3.0, 1.0, 2.0]
    named = spearman_resampler(["a", "b", "c"], [1, 2, 3], [3, 1, 2], ("sb", "acc"))
    assert list(named.inputs) == ["sb", "acc"]
    assert named.fn(np.ones((1, 3)))[0] == pytest.approx(-0.5)


# ------------------------------------------------------------------------- leave one cluster out


def test_leave_one_cluster_out_weights_leave_each_cluster_out_in_name_order():
    seen = []

    def fn(w):
        seen.append(np.array(w))
        return w.sum(axis=1)

    labels = ["b", "a", "c", "b", "a"]
    res = leave_one_cluster_out(Resampler(tuple("vwxyz"), fn), labels)
    assert seen[0].tolist() == [
        [1.0, 0.0, 1.0, 1.0, 0.0],  # without a
        [0.0, 1.0, 1.0, 0.0, 1.0],  # without b
        [1.0, 1.0, 0.0, 1.0, 1.0],  # without c
    ]
    assert res.interval == (3.0, 4.0) and res.sizes == {"a": 2, "b": 2, "c": 1}
    assert (res.clusters, res.resamples, res.seed, res.confidence) == (3, 3, None, None)
    assert res.kind == LOCO and res.warnings == () and res.undefined == 0 and res.at_bound == 0.0


def test_leave_one_cluster_out_refuses_and_warns_whole():
    with pytest.raises(ValueError) as e:
        leave_one_cluster_out(_mean([1.0, 2.0, 3.0]), ["a", "b"])
    assert str(e.value) == "leave_one_cluster_out: 2 cluster labels for 3 units"
    one = leave_one_cluster_out(_mean([1.0, 2.0, 3.0]), ["a"] * 3)
    assert one.estimable is False and one.why == "1 cluster: leaving one out leaves at most one"
    assert one.kind == LOCO and one.resamples == 1
    two = leave_one_cluster_out(_mean([1.0, 2.0, 3.0]), ["a", "b", "b"])
    assert two.why == "2 clusters: leaving one out leaves at most one"
    nan = leave_one_cluster_out(_fixed([math.nan] * 4, units=list("abcd")), list("abcd"))
    assert nan.estimable is False
    assert nan.why == "the statistic is undefined without any one cluster"
    assert nan.undefined == 0 and nan.kind == LOCO
    some = leave_one_cluster_out(
        _fixed([math.nan, 1.0, math.nan, -0.5], units=list("abcd")), list("dcba")
    )
    assert some.warnings == ("undefined without a, c: left out of the range",)
    assert some.interval == (-0.5, 1.0) and some.undefined == 2 and some.at_bound == 0.5


# ------------------------------------------------------------------ weighted median and Pearson


def test_the_weighted_median_is_numpys_on_the_expanded_sample():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 5, 9).astype(float)  # ties, unsorted
    w = rng.integers(0, 4, size=(200, 9)).astype(float)
    w[0] = 0.0
    w[1] = [0, 0, 0, 0, 0, 0, 0, 0, 1]
    got = weighted_median(x, w)
    assert math.isnan(got[0])
    for b in range(1, 200):
        assert got[b] == np.median(np.repeat(x, w[b].astype(int)))
    assert weighted_median([3.0, 1.0, 2.0], [1, 1, 1]).tolist() == [2.0]  # one row of weights
    assert weighted_median([3.0, 1.0, 2.0, 10.0], [1, 1, 1, 1]).tolist() == [2.5]


def test_the_weighted_pearson_is_numpys_on_the_expanded_sample():
    rng = np.random.default_rng(5)
    a = rng.normal(size=(50, 8)) * 1e-3 + 5.0  # far from 0: centring matters
    b = a * 2.0 + rng.normal(size=(50, 8)) * 1e-3
    w = rng.integers(1, 4, size=(50, 8)).astype(float)
    got = weighted_pearson(a, b, w)
    for i in range(50):
        k = w[i].astype(int)
        want = np.corrcoef(np.repeat(a[i], k), np.repeat(b[i], k))[0, 1]
        assert got[i] == pytest.approx(want, abs=1e-9)
    const = weighted_pearson(np.full((1, 4), 3.0), np.arange(4.0)[None], np.ones((1, 4)))
    assert math.isnan(const[0])
    # constant over the weighted units only (the varying unit has weight 0)
    masked = weighted_pearson(
        np.array([[1.0, 1.0, 1.0, 9.0]]), np.arange(4.0)[None], np.array([[1.0, 1.0, 1.0, 0.0]])
    )
    assert math.isnan(masked[0])
    assert weighted_pearson(np.arange(4.0)[None], np.arange(4.0)[None], np.ones((1, 4)))[0] == 1.0


def test_a_side_varying_by_under_1e_12_of_the_datas_scale_is_constant():
    """The weighted Pearson correlation is undefined (NaN) where the product of the two sides'
    spreads is at most 1e-12 times max(1, the product of their root sums of squares): at the
    bound exactly, and far above unit scale; defined just above the bound, row by row."""
    ones = np.ones((1, 2))
    at = weighted_pearson(np.array([[0.0, 2e-12]]), np.array([[0.0, 1.0]]), ones)
    assert math.isnan(at[0])  # spread product 1e-12, the bound itself
    above = weighted_pearson(np.array([[0.0, 3e-12]]), np.array([[0.0, 1.0]]), ones)
    assert above.tolist() == [1.0]
    big = weighted_pearson(np.array([[1000.0, 1000.0 + 1e-9]]), np.array([[0.0, 1000.0]]), ones)
    assert math.isnan(big[0])  # a spread of 5e-10 on values of 1,000: constant at that scale
    # each row against its own scale: a row of large values does not make the others constant
    a = np.array([[0.0, 3e-12], [0.0, 1.0], [0.0, 1e6]])
    b = np.array([[0.0, 1.0], [0.0, 3e-12], [0.0, 1e6]])
    assert weighted_pearson(a, b, np.ones((3, 2))).tolist() == [1.0, 1.0, 1.0]


def test_every_input_is_checked_for_ties_after_one_tied_by_the_clustering():
    labels = [f"c{i // 2}" for i in range(12)]  # six clusters of two
    strength = np.repeat([0.1, 0.1, 0.5, 0.5, 1.0, 1.0], 2)  # the clustering's own ties
    tied = np.array([1, 2, 1, 2, 1, 2, 1, 2, 3, 3, 3, 3], dtype=float)  # 3 values, varying
    res = cluster_bootstrap(
        _fixed([0.1] * 10, inputs={"eps": strength, "acc": tied}), labels, resamples=10
    )
    assert [w for w in res.warnings if w.startswith("heavy ties")] == [
        "heavy ties: acc takes 3 distinct values over 12 units"
    ]


def test_the_default_seed_is_zero_and_recorded():
    res = cluster_bootstrap(_mean(np.arange(12.0)), LABELS12, resamples=50)
    assert res.seed == 0
    assert (
        res.interval
        == cluster_bootstrap(_mean(np.arange(12.0)), LABELS12, resamples=50, seed=0).interval
    )


def test_a_weighted_correlation_of_collinear_rows_stays_within_minus_one_and_one():
    """b an exact affine function of a: the correlation is +-1 up to rounding, and rounding can
    put the quotient an ulp outside [-1, 1] (it does for some of these rows): the result is
    clipped, so a rank correlation at the bound is exactly at it."""
    rng = np.random.default_rng(1)
    a = rng.normal(size=(200, 15)) * 30.0
    w = rng.integers(1, 4, size=(200, 15)).astype(float)
    down = weighted_pearson(a, -2.5 * a + 7.0, w)
    up = weighted_pearson(a, 1.7 * a - 3.0, w)
    assert down.min() >= -1.0 and up.max() <= 1.0
    np.testing.assert_allclose(down, -1.0, atol=1e-12)
    np.testing.assert_allclose(up, 1.0, atol=1e-12)


def test_a_quotient_an_ulp_outside_the_bounds_is_clipped_to_them():
    """The clip, on quotients whose rounding is fixed (no sum involved): 1 + 2^-52 over 1 is an
    ulp above 1, and its negative an ulp below -1; a denominator at the constant-input bound or
    below it gives NaN, just above it a number."""
    ulp = 2.0**-52
    num = np.array([1.0 + ulp, -(1.0 + ulp), 0.5, 0.25, 0.3])
    den = np.array([1.0, 1.0, 1.0, 1e-12, 2e-12])
    tiny = np.array([1e-12, 1e-12, 1e-12, 1e-12, 1e-12])
    got = correlation_of(num, den, tiny)
    assert got[:3].tolist() == [1.0, -1.0, 0.5]
    assert math.isnan(got[3]) and got[4] == 1.0  # 0.3 / 2e-12 is far above 1: clipped too

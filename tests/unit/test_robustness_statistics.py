"""The statistics behind the robustness of the claims, against scipy and closed forms:
Holm and Benjamini-Hochberg against hand-computed values; the permutation p of Spearman's rho
against exact enumeration (closed form for tiny n) and scipy; the exact leave-one-out of
Spearman and of Kendall's W against recomputing each subsample; the project's own vectorised
percentile bootstrap against ``scipy.stats.bootstrap``; the measurement interval of the
strongest-model claim against a binomial simulation."""

from __future__ import annotations

import itertools
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from repro.analysis.correlation import (
    bootstrap_indices,
    percentile_interval,
    permutation_p,
    spearman,
    spearman_leave_one_out,
    spearman_p,
)
from repro.analysis.multiple import adjust, benjamini_hochberg, holm
from repro.base.table import ModelTable

pytestmark = pytest.mark.unit


# -- multiple comparisons -------------------------------------------------------------------------
def test_holm_against_hand_computed_values():
    # sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 =
    # 0.04 -> running max 0.06)
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([0.3, 0.6]) == pytest.approx([0.6, 0.6])  # 0.3*2, max(0.6, 0.6*1)
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []


def test_benjamini_hochberg_against_hand_computed_values():
    # sorted p_(k) m / k: 0.02, 0.02, 0.04, 0.04; running minimum from the top keeps them
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # 0.01*3/1 = 0.03, 0.02*3/2 = 0.03, 0.9*3/3 = 0.9
    assert benjamini_hochberg([0.9, 0.02, 0.01]) == pytest.approx([0.9, 0.03, 0.03])
    # a larger p-value earlier in sorted order is pulled down by the running minimum
    assert benjamini_hochberg([0.04, 0.041]) == pytest.approx([0.041, 0.041])


def test_adjustments_order_and_bounds_on_random_p():
    p = np.random.default_rng(4).random(72) ** 3
    h, b = np.array(holm(p)), np.array(benjamini_hochberg(p))
    assert (p <= b + 1e-15).all() and (b <= h + 1e-15).all() and (h <= 1).all()
    assert (
        np.array_equal(np.argsort(p, kind="stable"), np.argsort(h, kind="stable"))
        or (np.diff(h[np.argsort(p)]) >= 0).all()
    )
    assert adjust(p, "holm") == holm(p)
    with pytest.raises(ValueError, match="unknown p-value adjustment"):
        adjust(p, "bonferroni")
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        holm([0.1, float("nan")])


# -- permutation test ---------------------------------------------------------------------------
def _exact_p(x, y) -> float:
    """Two-sided permutation p by enumerating every pairing (p = share with |rho| >= observed)."""
    rho = stats.spearmanr(x, y).statistic
    hits = total = 0
    for perm in itertools.permutations(range(len(x))):
        r = stats.spearmanr(np.asarray(x)[list(perm)], y).statistic
        hits += abs(r) >= abs(rho) - 1e-12
        total += 1
    return hits / total


def test_permutation_p_closed_forms_for_tiny_n():
    # n = 5, perfectly monotone: only the identity and its reverse reach |rho| = 1 -> 2 / 5!
    assert permutation_p(np.arange(5.0), np.arange(5.0)) == pytest.approx(2 / 120)
    # n = 4, one adjacent swap (rho 0.8): |rho| >= 0.8 for rho = +-1 (1 + 1)
    # and +-0.8 (3 + 3) -> 8 / 24
    assert permutation_p(np.arange(4.0), np.array([0.0, 1, 3, 2])) == pytest.approx(1 / 3)


def test_permutation_p_equals_full_enumeration_for_n7():
    rng = np.random.default_rng(7)
    x, y = rng.random(7), rng.random(7)
    assert permutation_p(x, y) == pytest.approx(_exact_p(x, y), abs=1e-12)  # 5040 <= 10,000: exact


def test_permutation_p_against_scipy_and_seeded():
    rng = np.random.default_rng(11)
    x = rng.random(40)
    y = 0.35 * x + rng.random(40)
    p = permutation_p(x, y)
    assert p == permutation_p(x, y)  # fixed seed: the same p twice
    res = stats.permutation_test(
        (x,),
        lambda a: stats.spearmanr(a, y).statistic,
        permutation_type="pairings",
        n_resamples=10_000,
        rng=np.random.default_rng(0),
    )
    assert p == pytest.approx(res.pvalue, abs=1e-12)  # the same test scipy runs unvectorised
    scipy_p = stats.spearmanr(x, y).pvalue
    assert (
        abs(p - scipy_p) < 4 * math.sqrt(scipy_p * (1 - scipy_p) / 10_000) + 1e-3
    )  # large-sample agreement
    # the floor: two-sided p is twice the smaller one-sided (k + 1) / (10,000 + 1)
    assert permutation_p(np.arange(40.0), np.arange(40.0)) == pytest.approx(2 / 10_001)


# -- exact leave-one-out ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spearman_leave_one_out_equals_scipy_on_every_subsample(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, 25).astype(float)  # ties
    y = x + rng.normal(0, 2, 25)
    y[3] = y[7]  # a tie in y too
    rho, p = spearman_leave_one_out(x, y)
    for i in range(25):
        ref = stats.spearmanr(np.delete(x, i), np.delete(y, i))
        assert rho[i] == pytest.approx(ref.statistic, abs=1e-12)
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-9)
    assert spearman_p(stats.spearmanr(x, y).statistic, 25) == pytest.approx(
        stats.spearmanr(x, y).pvalue, rel=1e-9
    )


def test_spearman_leave_one_out_undefined_when_a_variable_turns_constant():
    x = np.array([1.0, 1.0, 1.0, 1.0, 2.0])
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    rho, p = spearman_leave_one_out(x, y)
    assert np.isnan(rho[4]) and np.isnan(p[4]) and np.isfinite(rho[:4]).all()


def test_kendalls_w_leave_one_out_equals_recomputing():
    from repro.studies.imagenetx.statistics import kendalls_w, kendalls_w_leave_one_out

    rng = np.random.default_rng(5)
    data = rng.random((9, 6)) + np.arange(6) * 0.1
    data[2, :2] = data[2, 3]  # ties within a row
    w, p = kendalls_w_leave_one_out(data)
    for i in range(9):
        ref_w, ref_p = kendalls_w(np.delete(data, i, axis=0))
        assert w[i] == pytest.approx(ref_w, rel=1e-12) and p[i] == pytest.approx(ref_p, rel=1e-9)


# -- the project's bootstrap against scipy's ------------------------------------------------------
def test_vectorised_percentile_bootstrap_agrees_with_scipy_bootstrap():
    rng = np.random.default_rng(3)
    x = rng.random(48)
    y = -0.6 * x + rng.random(48) * 0.6

    def rho(a, b, axis=-1):
        ra, rb = stats.rankdata(a, axis=axis), stats.rankdata(b, axis=axis)
        ra = ra - ra.mean(axis=axis, keepdims=True)
        rb = rb - rb.mean(axis=axis, keepdims=True)
        return (ra * rb).sum(axis=axis) / np.sqrt(
            (ra * ra).sum(axis=axis) * (rb * rb).sum(axis=axis)
        )

    ours = spearman(x, y, resamples=20_000, seed=1).interval
    ref = stats.bootstrap(
        (x, y),
        rho,
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        method="percentile",
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert ours[0] == pytest.approx(ref.low, abs=0.015) and ours[1] == pytest.approx(
        ref.high, abs=0.015
    )
    bca = stats.bootstrap(
        (x, y),
        rho,
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        method="BCa",
        rng=np.random.default_rng(2),
    ).confidence_interval
    assert ours[0] == pytest.approx(bca.low, abs=0.05) and ours[1] == pytest.approx(
        bca.high, abs=0.05
    )
    # percentile_interval of the draws is numpy's percentile of the finite draws
    idx = bootstrap_indices(48, 1000, 0)
    draws = x[idx].mean(axis=1)
    assert percentile_interval(draws, 0.95) == pytest.approx(
        tuple(np.percentile(draws, [2.5, 97.5]))
    )


# -- measurement interval of the strongest-model claim ---------------------------------------------
def test_ratio_bias_sd_matches_a_binomial_simulation():
    from repro.studies.gavrikov2024.statistics import ratio_bias_sd

    cols = [f"HFC/{c}" for c in (0.1, 0.2, 0.3)]
    ratios = [0.30, 0.12, 0.04]
    table = ModelTable({"m": {"clean": 76.0, **dict(zip(cols, ratios, strict=True))}})
    study = SimpleNamespace(table=table, columns_of=lambda kind, bias: tuple(cols))
    n = 2000
    sd = ratio_bias_sd(study, "m", "hf", "clean", n)
    rng = np.random.default_rng(0)
    draws = 40_000
    a_c = 0.76
    k_c = rng.binomial(n, a_c, draws)
    per_col = [
        rng.binomial(n, r * a_c, draws) / k_c for r in ratios
    ]  # independent filtered / clean
    mc_sds = [float(np.std(v)) for v in per_col]
    assert sd == pytest.approx(np.mean(mc_sds), rel=0.05)  # the delta method, column by column
    correlated = np.mean(
        per_col, axis=0
    )  # the same clean draw in every column: positively correlated
    assert float(np.std(correlated)) <= sd * 1.02  # the mean of SDs bounds the SD of the mean


def test_permutation_p_of_a_constant_is_undefined_and_bad_shapes_are_named():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert math.isnan(permutation_p(np.full(4, 2.0), y))
    assert math.isnan(permutation_p(y, np.full(4, 2.0)))
    for x, yy, shapes in [
        (np.ones((2, 3)), np.ones((2, 3)), "(2, 3), (2, 3)"),
        (np.arange(2.0), np.arange(2.0), "(2,), (2,)"),
        (np.arange(4.0), np.arange(5.0), "(4,), (5,)"),
    ]:
        with pytest.raises(ValueError) as bad:
            permutation_p(x, yy)
        assert str(bad.value) == (
            f"permutation_p needs two 1-d arrays of equal length >= 3, got {shapes}"
        )

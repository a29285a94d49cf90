"""The reasons the stimulus-agreement rule gives (``repro.analysis.noise_agreement``), whole, on
each of its branches, and the cell arithmetic at its edges (an empty cell, no discordant pair,
a cell without trials in the accuracy grid). Expected intervals come from Newcombe's paired
interval in ``repro.base.stats`` (tested there against his published values); p-values from
the binomial by hand."""

from __future__ import annotations

import math

import pytest

from repro.analysis import noise_agreement as na
from repro.base.errors import DataError
from repro.base.stats import paired_difference_interval

pytestmark = pytest.mark.unit


def _pairs(per_cell, discordant):
    """Every cell ``per_cell`` pairs; the first noisy cells one discordant pair each:
    ``discordant`` = (b, c), b pairs where only ours is right, then c where only theirs is."""
    kinds = [(True, False)] * discordant[0] + [(False, True)] * discordant[1]
    out = {}
    for i, cond in enumerate(na.CONDITIONS):
        extra = [kinds[i - 1]] if 0 < i <= len(kinds) else []
        rest = per_cell - len(extra)
        out[cond] = extra + [(True, True)] * (rest // 2) + [(False, False)] * (rest - rest // 2)
    return out


def _binom_two_sided(b, c):
    # exact McNemar: twice the smaller tail of Binomial(b + c, 1/2), at most 1
    n = b + c
    tail = sum(math.comb(n, j) for j in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def test_a_cell_that_differs_is_the_reason():
    pairs = _pairs(30, (0, 0))
    pairs["f=3/sd=0.16"] = [(False, True)] * 15 + [(True, True)] * 15
    result = na.compare(pairs)
    assert result.decision == (na.DIFFERS, "1 cell(s) differ at family-wise 0.05 (Holm)")
    assert [c.condition for c in result.differing()] == ["f=3/sd=0.16"]
    # at a family-wise level below its Holm p it does not differ
    p_holm = result.differing()[0].p_holm
    assert result.differing(alpha=p_holm) == [] and result.differing(alpha=p_holm * 1.01) != []


def test_a_pooled_shift_outside_the_margin_differs_with_its_p():
    # 27 of 28 noisy cells with one pair only ours gets right: +27/840 = 3.2 points is inside the
    # margin (one image of 30 = 3.3); 28 of 28 over cells of 20: +28/560 = 5.0 points is outside
    pairs = _pairs(20, (28, 0))
    result = na.compare(pairs)
    p = _binom_two_sided(28, 0)
    assert result.pooled.p == pytest.approx(p, rel=1e-9)
    assert result.decision == (
        na.DIFFERS,
        f"pooled difference +5.0 points, outside +-3.3, and the pooled McNemar test rejects "
        f"(p = {p:.2g})",
    )


def test_a_balanced_pooled_difference_agrees_with_its_interval_inside():
    result = na.compare(_pairs(30, (14, 12)))
    assert result.decision == (
        na.AGREES,
        "no cell differs; pooled difference +0.2 points, its 90% interval inside +-3.3",
    )
    assert result.agrees


def test_few_pairs_are_inconclusive_with_their_interval():
    result = na.compare(_pairs(2, (3, 0)))
    pooled = result.pooled
    assert (pooled.n, pooled.b, pooled.c) == (56, 3, 0) and pooled.p == 0.25
    both = pooled.k_ours - pooled.b
    lo, hi = paired_difference_interval(both, 3, 0, 56 - both - 3, 0.90)
    assert result.decision == (
        na.INCONCLUSIVE,
        f"no cell differs, but the pooled difference +5.4 points has a 90% interval "
        f"[{100 * lo:+.1f}, {100 * hi:+.1f}] reaching beyond +-3.3",
    )


def test_an_inconclusive_shift_names_the_pooled_test_that_rejects():
    # +9/280 = 3.2 points: inside the margin, McNemar p = 2/512, interval too wide to agree
    result = na.compare(_pairs(10, (9, 0)))
    pooled = result.pooled
    assert pooled.p == pytest.approx(_binom_two_sided(9, 0), rel=1e-9) and pooled.p < 0.05
    both = pooled.k_ours - pooled.b
    lo, hi = paired_difference_interval(both, 9, 0, 280 - both - 9, 0.90)
    assert result.decision == (
        na.INCONCLUSIVE,
        f"no cell differs, but the pooled difference +3.2 points has a 90% interval "
        f"[{100 * lo:+.1f}, {100 * hi:+.1f}] reaching beyond +-3.3 "
        f"(pooled McNemar p = {pooled.p:.2g})",
    )


def test_the_grids_hold_each_sides_counts_per_cell():
    pairs = _pairs(10, (2, 1))
    ours, theirs = na.compare(pairs).grids()
    assert list(ours) == list(na.CONDITIONS) == list(theirs)
    # clean: 5 both right; first noisy cell: the extra pair only ours gets right, plus 4 both
    assert ours["sd=0"] == (5, 10) == theirs["sd=0"]
    first, second, third = na.CONDITIONS[1:4]
    assert (ours[first], theirs[first]) == ((5, 10), (4, 10))
    assert (ours[second], theirs[second]) == ((5, 10), (4, 10))
    assert (ours[third], theirs[third]) == ((4, 10), (5, 10))


def test_a_cell_without_pairs_or_discordance_at_its_edges():
    assert na.mcnemar_exact(0, 0) == 1.0
    assert na.mcnemar_exact(0, 5) == pytest.approx(2 / 32, rel=1e-12)
    empty = na.CellAgreement("sd=0", 0, 0, 0, 0, 0, 1.0, 1.0, (0.0, 0.0))
    assert math.isnan(empty.diff) and na.paired_interval(empty) == (0.0, 0.0)
    assert not empty.differs() and empty.differs(alpha=1.01)


def test_a_noisy_cell_without_trials_is_missing_in_the_grid():
    counts = {na.CLEAN: (80, 100)}
    for band in range(7):
        for sd in (0.02, 0.04, 0.08, 0.16):
            counts[na.condition_name(band, sd)] = (60, 100)
    counts[na.condition_name(4, 0.08)] = (0, 0)
    g = na.grid(counts)
    assert g.shape == (5, 7) and (g[0] == 0.8).all()
    assert math.isnan(g[3, 4]) and g[3, 3] == 0.6 and g[4, 4] == 0.6


def test_relative_thresholds_divide_by_the_clean_accuracy():
    # clean 0.8; SD 0.02 and 0.04 at 0.6, 0.08 at 0.45, 0.16 at 0.35: absolute 2 (0.45 and 0.35
    # fail 50%); relative to 0.8 only SD 0.16 fails (0.44), relative to 0.6 none would
    counts = {na.CLEAN: (80, 100)}
    for band in range(7):
        for sd, k in ((0.02, 60), (0.04, 60), (0.08, 45), (0.16, 35)):
            counts[na.condition_name(band, sd)] = (k, 100)
    assert na.thresholds(counts) == {"abs": [2] * 7, "norm": [1] * 7}


def _theirs(i, condition="f=3/sd=0.02", right=True):
    return {
        "imagename": f"0/{i}_cbm_noise0.02_freq3_gray_g_knife.JPEG",
        "condition": condition,
        "category": "knife",
        "object_response": "knife" if right else "oven",
    }


def test_pre_made_images_without_ours_are_all_counted_and_two_named():
    ours = [
        {
            "imagename": "0/1_color_gray_g_knife.JPEG",
            "condition": "f=3/sd=0.02",
            "category": "knife",
            "object_response": "oven",
        }
    ]
    with pytest.raises(DataError) as e:
        na.pair_decisions(ours, [_theirs(i) for i in range(5)])
    assert str(e.value) == (
        "4 pre-made image(s) have no decision of ours on the same GraySplit image and condition, "
        "e.g. ['0/0_color_gray_g_knife.JPEG in f=3/sd=0.02', '0/2_color_gray_g_knife.JPEG in "
        "f=3/sd=0.02'] (is our grid complete, on splits 0-4?)"
    )
    pairs = na.pair_decisions(ours, [_theirs(1)])
    assert pairs["f=3/sd=0.02"] == [(False, True)] and sum(map(len, pairs.values())) == 1


def test_a_pre_made_record_in_an_unknown_condition_is_named():
    with pytest.raises(DataError) as e:
        na.pair_decisions([], [_theirs(7, condition="f=9/sd=1")])
    assert str(e.value) == (
        "pre-made record '0/7_cbm_noise0.02_freq3_gray_g_knife.JPEG': unknown condition 'f=9/sd=1'"
    )


def test_cells_without_pairs_are_named_four_at_most():
    pairs = _pairs(10, (0, 0))
    for cond in na.CONDITIONS[3:8]:
        pairs[cond] = []
    with pytest.raises(DataError) as e:
        na.compare(pairs)
    assert str(e.value) == "paired comparison: no pairs in cell(s) " + ", ".join(na.CONDITIONS[3:7])


def test_the_pooled_cell_is_named_and_is_its_own_family():
    result = na.compare(_pairs(10, (5, 1)))
    pooled = result.pooled
    assert pooled.condition == "pooled noisy cells"
    assert pooled.p_holm == pooled.p == pytest.approx(_binom_two_sided(5, 1), rel=1e-9)
    assert [c.condition for c in result.cells] == list(na.CONDITIONS)

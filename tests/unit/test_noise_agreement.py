"""The paired comparison of our critical-band stimuli with the pre-made ones
(``repro.analysis.noise_agreement``) on hand-made decisions with known discordant counts: the
pairing by GraySplit image and condition, the exact McNemar p, Holm over the 29 cells, the
interval of the difference, and the errors for grids that do not match."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from repro.analysis import noise_agreement as na
from repro.base.errors import DataError
from repro.datasets.critical_band_stimuli import graysplit_name

pytestmark = pytest.mark.unit


def test_condition_names_are_the_probes():
    cb = pytest.importorskip("repro.probes.critical_band")
    assert list(na.CONDITIONS) == [name for name, _, _ in cb.conditions()]


def test_graysplit_name_pairs_a_cbmsplit_file_with_its_source():
    assert (
        graysplit_name("3/12_cbm_noise0.04_freq3_gray_g_knife.JPEG")
        == "3/12_color_gray_g_knife.JPEG"
    )
    assert graysplit_name("0_cbm_noise0_freq0_gray_g_oven.JPEG") == "0_color_gray_g_oven.JPEG"
    with pytest.raises(DataError, match="not a CBMSplit file name"):
        graysplit_name("0/12_color_gray_g_knife.JPEG")


def _records(plan: dict[str, list[tuple[bool, bool]]]) -> tuple[list[dict], list[dict]]:
    """Our and their records realising ``plan`` ({cell: [(ours right, theirs right)]}); image
    indices run on, so every pre-made file has its own GraySplit source."""
    ours, theirs, i = [], [], 0
    for cond, pairs in plan.items():
        sd, band = ("0", 0) if cond == na.CLEAN else (cond.split("sd=")[1], int(cond[2]))
        for o, t in pairs:
            split, idx = str(i % 5), i
            ours.append(
                {
                    "imagename": f"{split}/{idx}_color_gray_g_knife.JPEG",
                    "condition": cond,
                    "category": "knife",
                    "object_response": "knife" if o else "oven",
                }
            )
            theirs.append(
                {
                    "imagename": f"{split}/{idx}_cbm_noise{sd}_freq{band}_gray_g_knife.JPEG",
                    "condition": cond,
                    "category": "knife",
                    "object_response": "knife" if t else "bear",
                }
            )
            i += 1
    return ours, theirs


def _plan(b: dict[str, tuple[int, int, int, int]]) -> dict[str, list[tuple[bool, bool]]]:
    """{cell: (both right, only ours, only theirs, both wrong)} -> pairs; every other
    cell 20 concordant pairs."""
    out = {}
    for cond in na.CONDITIONS:
        rr, ro, rt, ww = b.get(cond, (10, 0, 0, 10))
        out[cond] = (
            [(True, True)] * rr
            + [(True, False)] * ro
            + [(False, True)] * rt
            + [(False, False)] * ww
        )
    return out


def test_pairs_count_discordance_and_mcnemar_is_exact():
    plan = _plan({"f=2/sd=0.08": (5, 1, 14, 10), "sd=0": (30, 2, 1, 0)})
    ours, theirs = _records(plan)
    ours.reverse()  # pairing is by name and condition, not by order
    result = na.compare(na.pair_decisions(ours, theirs))
    cell = {c.condition: c for c in result.cells}["f=2/sd=0.08"]
    assert (cell.n, cell.k_ours, cell.k_theirs, cell.b, cell.c) == (30, 6, 19, 1, 14)
    assert cell.p == pytest.approx(binomtest(1, 15, 0.5).pvalue) == pytest.approx(2 * 16 / 2**15)
    assert cell.diff == pytest.approx(-13 / 30)
    lo, hi = cell.diff_interval
    assert lo < cell.diff < hi < 0  # the interval excludes 0 here
    clean = result.cells[0]
    assert (clean.b, clean.c, clean.p) == (2, 1, 1.0)
    # Holm over 29: the smallest p times 29; all other cells have p = 1
    assert cell.p_holm == pytest.approx(min(1.0, 29 * cell.p))
    assert result.differing() == [cell] and not result.agrees
    assert (result.pooled.b, result.pooled.c) == (1, 14)  # SD 0 is not in the pooled noisy cells


def test_agreement_holds_when_discordance_is_balanced_or_small():
    plan = _plan({"f=6/sd=0.16": (0, 6, 4, 20), "f=0/sd=0.02": (20, 0, 3, 7)})
    result = na.compare(na.pair_decisions(*_records(plan)))
    assert result.agrees and result.differing() == []
    cell = {c.condition: c for c in result.cells}["f=0/sd=0.02"]
    assert cell.p == pytest.approx(0.25) and cell.p_holm == pytest.approx(1.0)
    assert (result.pooled.b, result.pooled.c) == (6, 7)


def test_holm_needs_eleven_one_sided_pairs_in_a_cell():
    """The power statement of the agreement rule: with b = 0, c = 10 is not enough, c = 11 is."""
    for c, differs in ((10, False), (11, True)):
        result = na.compare(na.pair_decisions(*_records(_plan({"f=3/sd=0.16": (10, 0, c, 10)}))))
        assert result.agrees is (not differs)


def test_difference_interval_is_newcombes_paired_interval():
    """Newcombe's method 10 from the cell's 2 x 2 table (base.stats, tested there against his
    published values); unlike an interval conditional on b + c it is not [0, 0] when b = c = 0."""
    from repro.base.stats import paired_difference_interval

    plan = _plan({"f=1/sd=0.02": (25, 0, 0, 5), "f=5/sd=0.16": (2, 8, 0, 20)})
    cells = {c.condition: c for c in na.compare(na.pair_decisions(*_records(plan))).cells}
    none = cells["f=1/sd=0.02"]
    lo, hi = none.diff_interval
    assert (lo, hi) == paired_difference_interval(25, 0, 0, 5) and lo < 0 < hi and hi - lo > 0.1
    eight = cells["f=5/sd=0.16"]
    assert eight.diff_interval == paired_difference_interval(2, 8, 0, 20)
    assert (
        eight.diff == pytest.approx(8 / 30)
        and 0 < eight.diff_interval[0] < eight.diff < eight.diff_interval[1]
    )


def _pooled_plan(
    b_total: int, c_total: int, per_cell: int = 30
) -> dict[str, list[tuple[bool, bool]]]:
    """The 28 noisy cells with b_total and c_total discordant pairs spread evenly
    (no cell stands out)."""
    noisy = na.CONDITIONS[1:]
    spec = {}
    for i, cond in enumerate(noisy):
        b = b_total // 28 + (i < b_total % 28)
        c = c_total // 28 + (i < c_total % 28)
        right = (per_cell - b - c) // 2
        spec[cond] = (right, b, c, per_cell - b - c - right)
    return _plan(spec)


def test_the_label_follows_the_one_declared_rule():
    """Lite0's pooled counts (b = 64, c = 31 over 28 cells of 30): no cell differs, but pooled the
    difference is +3.9 points, outside one image of a 30-image cell, with McNemar p = 0.0009:
    differs. Balanced discordance over as many pairs: agrees. A few pairs only: inconclusive."""
    lite0 = na.compare(na.pair_decisions(*_records(_pooled_plan(64, 31))))
    assert lite0.differing() == [] and (lite0.pooled.b, lite0.pooled.c, lite0.pooled.n) == (
        64,
        31,
        840,
    )
    assert lite0.pooled.p == pytest.approx(binomtest(64, 95, 0.5).pvalue) and lite0.pooled.p < 0.001
    assert lite0.status == na.DIFFERS and not lite0.agrees and "outside +-3.3" in lite0.why
    balanced = na.compare(na.pair_decisions(*_records(_pooled_plan(40, 38))))
    assert balanced.status == na.AGREES and "inside +-3.3" in balanced.why
    few = na.compare(na.pair_decisions(*_records(_pooled_plan(3, 0, per_cell=2))))
    assert few.status == na.INCONCLUSIVE and few.differing() == []
    assert "differs when a cell" in na.AGREEMENT and f"{100 * na.MARGIN:.1f} points" in na.AGREEMENT


def test_missing_counterpart_and_empty_cells_are_errors():
    ours, theirs = _records(_plan({}))
    with pytest.raises(DataError, match="no decision of ours"):
        na.pair_decisions(ours[1:], theirs)
    plan = _plan({})
    plan["f=4/sd=0.04"] = []
    with pytest.raises(DataError, match=r"no pairs in cell\(s\) f=4/sd=0.04"):
        na.compare(na.pair_decisions(*_records(plan)))
    bad = [dict(theirs[0], condition="f=9/sd=1")]
    with pytest.raises(DataError, match="unknown condition"):
        na.pair_decisions(ours, bad)


def test_thresholds_of_a_grid_absolute_and_norm():
    counts = {na.CLEAN: (80, 100)}
    for band in range(7):
        # passes SD 0.02 and 0.04 at 60%, fails 0.08 and 0.16 at 45%: absolute 2;
        # relative to 0.8: 0.75 / 0.56 pass
        for sd, k in ((0.02, 60), (0.04, 60), (0.08, 45), (0.16, 30)):
            counts[na.condition_name(band, sd)] = (k, 100)
    th = na.thresholds(counts)
    assert th["abs"] == [2] * 7
    assert th["norm"] == [1] * 7  # 45/80 = 0.5625 passes, 30/80 = 0.375 fails
    counts[na.CLEAN] = (0, 100)
    assert na.thresholds(counts)["norm"] is None

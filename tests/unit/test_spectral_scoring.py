"""Spectral scoring (repro.scoring.spectral): the box masks exactly as METHODS.md section 3,
and the LFC/HFC ratio and bias conventions checked against the published benchmark.csv."""

from __future__ import annotations

import numpy as np
import pytest

from repro.base.stats import Count
from repro.scoring import spectral as sp

pytestmark = pytest.mark.unit


def test_cutoffs_and_condition_names_match_benchmark_columns():
    assert sp.CUTOFFS == (0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99)
    names = [name for name, _, _ in sp.conditions()]
    assert len(names) == 22 and len(set(names)) == 22
    assert names[0] == "LFC/0.01" and names[11] == "HFC/0.01" and names[-1] == "HFC/0.99"


def test_radii_at_224_are_the_studys():
    # r = int(c * 112) low, int((1 - c) * 112) high, with the study's arange floats
    assert [sp.radius(224, c, "low") for c in sp.CUTOFFS] == [
        1,
        11,
        22,
        33,
        44,
        56,
        67,
        78,
        89,
        100,
        110,
    ]
    assert [sp.radius(224, c, "high") for c in sp.CUTOFFS] == [
        110,
        100,
        89,
        78,
        67,
        56,
        44,
        33,
        22,
        11,
        1,
    ]


def test_radius_uses_the_floats_the_study_computed_with():
    study = [0.01, *np.arange(0.1, 0.99, 0.1), 0.99]
    for size in (20, 32, 40, 64, 224, 256):
        for kind in sp.KINDS:
            for named, used in zip(sp.CUTOFFS, study, strict=True):
                half = size // 2
                expected = int(used * half) if kind == "low" else int((1 - used) * half)
                assert sp.radius(size, named, kind) == expected, (size, kind, named)
    # a size where rounding the names would change the mask: (1 - 0.7000000000000001) * 10 = 2.99..
    assert sp.radius(20, 0.7, "high") == 2


@pytest.mark.parametrize("cutoff", sp.CUTOFFS)
def test_box_mask_is_the_square_of_rows_and_columns(cutoff):
    low = sp.box_mask(224, cutoff, "low")
    high = sp.box_mask(224, cutoff, "high")
    r = sp.radius(224, cutoff, "low")
    rows, cols = np.nonzero(low)
    assert rows.min() == 112 - r and rows.max() == 112 + r - 1
    assert cols.min() == 112 - r and cols.max() == 112 + r - 1
    assert low.sum() == (2 * r) ** 2
    rh = sp.radius(224, cutoff, "high")
    assert (1 - high).sum() == (2 * rh) ** 2
    assert high[112, 112] == 0.0 and high[0, 0] == 1.0
    # the low- and high-pass radii are mirror images: LFC/c and HFC/(1-c) share one box
    np.testing.assert_array_equal(low, 1 - sp.box_mask(224, round(1 - cutoff, 2), "high"))


def test_box_mask_at_other_sizes_uses_half_the_size():
    m = sp.box_mask(32, 0.5, "low")
    assert m.shape == (32, 32) and m[8:24, 8:24].all() and m.sum() == 16 * 16
    assert sp.box_mask(32, 0.01, "low").sum() == 0  # r = int(0.01 * 16) = 0: the box is empty


def test_bad_kind_and_cutoff_are_rejected():
    with pytest.raises(ValueError, match="low' or 'high"):
        sp.box_mask(224, 0.5, "band")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        sp.radius(224, 1.5, "low")


def test_ratios_and_biases_from_counts():
    clean = Count(80, 100)
    counts = {name: Count(40, 100) for name, _, _ in sp.conditions()}
    counts["LFC/0.3"] = Count(80, 100)
    counts["HFC/0.1"] = Count(8, 100)
    ratios = sp.lfc_hfc_ratios(counts, clean)
    assert ratios["LFC/0.3"] == pytest.approx(1.0)
    assert ratios["LFC/0.1"] == pytest.approx(0.5)
    assert sp.low_frequency_bias(ratios) == pytest.approx((0.5 * 4 + 1.0) / 5)
    assert sp.high_frequency_bias(ratios) == pytest.approx((0.1 + 0.5 * 4) / 5)
    with pytest.raises(ValueError, match="undefined"):
        sp.lfc_hfc_ratios(counts, Count(0, 100))
    del ratios["HFC/0.4"]
    with pytest.raises(KeyError, match="HFC/0.4"):
        sp.high_frequency_bias(ratios)


def test_score_divides_each_rate_by_the_clean_rate_of_its_own_count():
    """The ratios are rates over rates: the clean rate is its own k / n, also when the clean
    count has another n than the filtered ones (6/8 clean, k/10 filtered)."""
    from repro.base.results import ConditionCount, ProbeResult

    names = [sp.condition_name(kind, c) for kind in ("low", "high") for c in sp.BIAS_CUTOFFS]
    conditions = [ConditionCount("clean", 6, 8)] + [
        ConditionCount(name, i % 7 + 1, 10) for i, name in enumerate(names)
    ]
    res = sp.score(ProbeResult("spectral", "v", None, conditions))
    for i, name in enumerate(names):
        assert res.values[name] == pytest.approx(((i % 7 + 1) / 10) / (6 / 8), rel=1e-12)
    low = [((i % 7 + 1) / 10) / 0.75 for i in range(len(sp.BIAS_CUTOFFS))]
    assert res.values["low_frequency_bias"] == pytest.approx(np.mean(low), rel=1e-12)

"""ImageNet-C / -C-bar aggregation: the published 19-corruption mean (quirk Q3) and C-bar
reproduce benchmark.csv from its own per-cell columns; the standard 15-corruption mean differs."""

from __future__ import annotations

import numpy as np
import pytest

from repro.base.errors import DataError, UnknownNameError
from repro.base.stats import Count
from repro.scoring import imagenet_c as ic

pytestmark = pytest.mark.unit


def test_corruption_lists():
    assert (
        len(ic.IMAGENET_C_15) == 15
        and len(ic.IMAGENET_C_19) == 19
        and len(ic.IMAGENET_CBAR_10) == 10
    )
    assert set(ic.IMAGENET_C_19) - set(ic.IMAGENET_C_15) == {
        "speckle_noise",
        "gaussian_blur",
        "spatter",
        "saturate",
    }
    assert not set(ic.IMAGENET_C_19) & set(ic.IMAGENET_CBAR_10)


def test_counts_give_the_mean_and_a_normal_interval():
    rng = np.random.default_rng(0)
    cells = {
        (c, s): Count(int(rng.integers(10_000, 40_000)), 50_000)
        for c in ic.IMAGENET_C_19
        for s in ic.SEVERITIES
    }
    summary = ic.aggregate(cells, "imagenet_c_published")
    rates = np.array([cells[cell].rate for cell in summary.cells])
    assert summary.n_cells == 95
    assert summary.mean == pytest.approx(rates.mean(), abs=1e-15)
    se = np.sqrt((rates * (1 - rates) / 50_000).sum()) / 95
    assert summary.interval == pytest.approx(
        (rates.mean() - 1.96 * se, rates.mean() + 1.96 * se), rel=1e-4
    )
    std = ic.aggregate(cells, "imagenet_c")
    assert std.n_cells == 75 and std.mean == pytest.approx(rates[:75].mean())


def test_table_has_each_corruption_with_its_severity_mean():
    cells = {(c, s): float(s) for c in ic.IMAGENET_C_15 for s in ic.SEVERITIES}
    t = ic.table(cells, ic.IMAGENET_C_15)
    assert list(t) == list(ic.IMAGENET_C_15)
    assert t["fog"] == {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0, 5: 5.0, 0: 3.0}


def test_missing_cells_and_unknown_variants_are_errors():
    cells = {(c, s): 50.0 for c in ic.IMAGENET_C_15 for s in ic.SEVERITIES}
    with pytest.raises(
        DataError,
        match=(
            r"imagenet_c_published: no accuracy for 20 of 95 cells \(first: speckle_noise "
            r"severity 1\)"
        ),
    ):
        ic.aggregate(cells, "imagenet_c_published")
    with pytest.raises(UnknownNameError, match="unknown ImageNet-C variant 'mce'"):
        ic.aggregate(cells, "mce")

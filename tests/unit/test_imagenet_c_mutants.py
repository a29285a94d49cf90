"""ImageNet-C aggregation edge cases: the default variant, the whole text of each error message
(unknown variant, missing cells, a cell that is not a number), and the parsing of benchmark.csv's
wide ``<prefix><corruption>_<severity>`` columns into cells (which columns count, which are
ignored)."""

from __future__ import annotations

import math

import pytest

from repro.base.errors import DataError, UnknownNameError
from repro.scoring import imagenet_c as ic

pytestmark = pytest.mark.unit

# METHODS.md Q3 / repro.datasets.specs: the 15 standard corruptions, then the 4 extra ones
STANDARD_15 = (
    "gaussian_noise shot_noise impulse_noise defocus_blur glass_blur motion_blur zoom_blur "
    "snow frost fog brightness contrast elastic_transform pixelate jpeg_compression"
).split()
EXTRA_4 = ["speckle_noise", "gaussian_blur", "spatter", "saturate"]


def _full_cells(corruptions, value=50.0):
    return {(c, s): value for c in corruptions for s in (1, 2, 3, 4, 5)}


def test_default_variant_is_the_published_19_corruption_mean():
    # 15 standard cells at 60, the 20 extra cells at 10: mean (75 * 60 + 20 * 10) / 95
    cells = _full_cells(STANDARD_15, 60.0) | _full_cells(EXTRA_4, 10.0)
    summary = ic.aggregate(cells)
    assert summary.variant == "imagenet_c_published"
    assert summary.n_cells == 95
    assert summary.mean == pytest.approx((75 * 60 + 20 * 10) / 95, abs=1e-12)
    assert summary.interval is None  # plain rates carry no interval


def test_unknown_variant_message_lists_the_known_variants():
    with pytest.raises(UnknownNameError) as exc:
        ic.aggregate(_full_cells(STANDARD_15), "mce")
    assert str(exc.value) == (
        "unknown ImageNet-C variant 'mce' (known: imagenet_c_published, imagenet_c, imagenet_cbar)"
    )


def test_missing_cells_message_lists_the_expected_corruptions():
    cells = _full_cells(STANDARD_15)
    del cells[("fog", 3)]
    with pytest.raises(DataError) as exc:
        ic.aggregate(cells, "imagenet_c")
    assert str(exc.value) == (
        "imagenet_c: no accuracy for 1 of 75 cells (first: fog severity 3); expected all of "
        + ", ".join(STANDARD_15)
        + " x severities 1..5"
    )


@pytest.mark.parametrize("bad_value", [float("nan"), float("inf")])
def test_a_cell_that_is_not_a_number_is_named(bad_value):
    cells = _full_cells(STANDARD_15)
    cells[("snow", 4)] = bad_value
    cells[("fog", 2)] = bad_value  # a second bad cell: the message names the first in order
    with pytest.raises(DataError) as exc:
        ic.aggregate(cells, "imagenet_c")
    assert str(exc.value) == "imagenet_c: accuracy of snow severity 4 is not a number"


def test_a_single_bad_cell_is_named():
    cells = _full_cells(STANDARD_15)
    cells[("jpeg_compression", 5)] = float("nan")
    with pytest.raises(DataError) as exc:
        ic.aggregate(cells, "imagenet_c")
    assert str(exc.value) == "imagenet_c: accuracy of jpeg_compression severity 5 is not a number"


def test_cells_from_columns_keeps_only_known_corruption_severity_columns():
    row = {
        "model": 0.0,  # no prefix, and first: the scan must go on past it
        "top5_acc/fog_3": 91.0,  # another prefix
        "top1_acc/imagenet-c": 50.0,  # an aggregate column, no "_<severity>"
        "top1_acc/fog_x": 1.0,  # severity not a number
        "top1_acc/fog_6": 2.0,  # severity out of 1..5
        "top1_acc/fog_0": 3.0,
        "top1_acc/unknown_2": 4.0,  # not a corruption
        "top1_acc/fog_3": 40.0,
        "top1_acc/speckle_noise_5": 20,  # name with "_": split at the LAST underscore
        "top1_acc/caustic_refraction_1": "12.5",  # ImageNet-C-bar, value as text
    }
    cells = ic.cells_from_columns(row)
    assert cells == {("fog", 3): 40.0, ("speckle_noise", 5): 20.0, ("caustic_refraction", 1): 12.5}
    assert all(type(v) is float for v in cells.values())


def test_cells_from_columns_with_another_prefix():
    row = {"top1_acc/fog_3": 40.0, "top5_acc/fog_3": 91.0, "top5_acc/sparkles_2": 80.0}
    assert ic.cells_from_columns(row, prefix="top5_acc/") == {
        ("fog", 3): 91.0,
        ("sparkles", 2): 80.0,
    }


def test_cells_from_columns_feeds_aggregate():
    # a whole benchmark.csv-like row: cell value = severity, so every corruption averages to 3
    row = {f"top1_acc/{c}_{s}": float(s) for c in STANDARD_15 + EXTRA_4 for s in range(1, 6)}
    summary = ic.aggregate(ic.cells_from_columns(row))
    assert summary.mean == 3.0 and not math.isnan(summary.mean)

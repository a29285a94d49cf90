"""Readers of the real stimulus sets in the data directory (cue-conflict, GraySplit, CBMSplit),
read through the data directory (``data_dir`` fixture) and never copied, and the layout errors on
small generated copies (empty files with generated names: validation reads names, not pixels)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repro.base.errors import DataError
from repro.datasets import open_dataset
from repro.datasets.critical_band_stimuli import (
    PER_SPLIT,
    SPLITS,
    cbm_condition,
    open_stimulus_set,
    scan,
)
from repro.datasets.specs import CATEGORIES16

pytestmark = pytest.mark.unit


def test_the_reader_grid_is_the_scoring_grid():
    """The conditions CBMSplit's names may carry are the critical-band grid (METHODS.md 3)."""
    from repro.datasets.critical_band_stimuli import CBM_BANDS, CBM_NOISE_SDS
    from repro.scoring.critical_band import N_BANDS, NOISE_SDS

    assert CBM_NOISE_SDS == NOISE_SDS == (0.0, 0.02, 0.04, 0.08, 0.16) and CBM_BANDS == N_BANDS == 7


def test_split_datasets_have_no_mini_copies(tmp_path):
    from repro.datasets import make_mini

    with pytest.raises(DataError, match=r"graysplit: no generated mini copies exist"):
        make_mini(tmp_path, datasets=["graysplit"])
    with pytest.raises(
        DataError, match=r"cbmsplit: there are no generated mini copies of this dataset"
    ):
        open_dataset("cbmsplit", tmp_path, mini=True)


# ------------------------------------------------------------------- generated copies: error paths
def make_copy(root: Path, kind: str = "gray", splits=SPLITS) -> Path:
    """Empty files with valid generated names: 210 per numbered split, 50 in train."""
    for split in splits:
        (root / split).mkdir(parents=True)
        for i in range(PER_SPLIT[split]):
            cat = CATEGORIES16[i % 16]
            if kind == "gray":
                name = f"{i}_color_gray_g_{cat}.JPEG"
            else:
                sd = (0, 0.02, 0.04, 0.08, 0.16)[i % 5]
                name = f"{i}_cbm_noise{sd:g}_freq{i % 7}_gray_g_{cat}.JPEG"
            (root / split / name).write_bytes(b"")
    return root


def test_generated_copy_passes_and_orders_by_index(tmp_path):
    root = make_copy(tmp_path / "g")
    items = scan("graysplit", root)
    assert len(items) == 1050 and items[2].name == "0/2_color_gray_g_bicycle.JPEG"
    assert [it.name.split("/")[1].split("_")[0] for it in items[:12]] == [
        str(i) for i in range(12)
    ]  # not "10" < "2"
    assert items[2].label == CATEGORIES16.index("bicycle")
    cbm = scan("cbmsplit", make_copy(tmp_path / "c", "cbm"), splits=("train",))
    assert len(cbm) == 50 and cbm_condition(cbm[3].name) == (0.08, 3)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda r: os.rename(r / "3", r / "three"),
            r"graysplit at .*/g: expected split folders 0, 1, 2, 3, 4, train; missing "
            r"3/; unexpected three/",
        ),
        (
            lambda r: (r / "1" / "2_color_gray_g_bicycle.JPEG").rename(
                r / "1" / "2_color_gray_g_bike.JPEG"
            ),
            r"1/2_color_gray_g_bike.JPEG: file name does not match "
            r"<i>_color_gray_g_<category>.JPEG with a 16-class category",
        ),
        (
            lambda r: (r / "0" / "7_color_gray_g_cat.JPEG").unlink(),
            r"graysplit at .*: 0/: expected 210 images, found 209",
        ),
        (
            lambda r: (r / "2" / "0_color_gray_g_dog.JPEG").write_bytes(b""),
            r"2/0_color_gray_g_dog.JPEG: image index 0 also used by 2/0_color_gray_g_airplane.JPEG",
        ),
        (
            lambda r: (r / "4" / "209_color_gray_g_bear.JPEG").rename(
                r / "4" / "210_color_gray_g_bear.JPEG"
            ),
            r"4/: expected image indices 0..209, index 209 is missing",
        ),
        (
            lambda r: (r / "0" / "extra").mkdir(),
            r"0/extra: unexpected sub-folder inside a split folder",
        ),
    ],
)
def test_graysplit_layout_errors_name_the_file(tmp_path, mutate, message):
    root = make_copy(tmp_path / "g")
    mutate(root)
    with pytest.raises(DataError, match=message):
        scan("graysplit", root)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "3_cbm_noise0.08_freq3_gray_g_bird.JPEG",
            "3_cbm_noise0.03_freq3_gray_g_bird.JPEG",
            r"train/3_cbm_noise0.03_freq3_gray_g_bird.JPEG: noise SD 0.03 is not one of "
            r"0, 0.02, 0.04, 0.08, 0.16",
        ),
        (
            "3_cbm_noise0.08_freq3_gray_g_bird.JPEG",
            "3_cbm_noise0.08_freq7_gray_g_bird.JPEG",
            r"train/3_cbm_noise0.08_freq7_gray_g_bird.JPEG: band 7 is not in 0..6",
        ),
        (
            "3_cbm_noise0.08_freq3_gray_g_bird.JPEG",
            "3_color_gray_g_bird.JPEG",
            r"train/3_color_gray_g_bird.JPEG: file name does not match "
            r"<i>_cbm_noise<sd>_freq<band>_gray_g_<category>.JPEG",
        ),
    ],
)
def test_cbmsplit_condition_errors_name_the_file(tmp_path, old, new, message):
    root = make_copy(tmp_path / "c", "cbm", splits=("train",))
    (root / "train" / old).rename(root / "train" / new)
    with pytest.raises(DataError, match=message):
        scan("cbmsplit", root, splits=("train",))


def test_unselected_splits_may_be_absent_but_bad_splits_are_refused(tmp_path):
    root = make_copy(tmp_path / "g", splits=("0",))
    assert len(scan("graysplit", root, splits=("0",))) == 210
    with pytest.raises(DataError, match=r"missing 1/, 2/, 3/, 4/"):
        scan("graysplit", root)
    with pytest.raises(
        DataError, match=r"splits \['5'\]: expected distinct names among 0, 1, 2, 3, 4, train"
    ):
        scan("graysplit", root, splits=("5",))
    with pytest.raises(DataError, match=r"graysplit at .*/absent: folder not found"):
        scan("graysplit", tmp_path / "absent")


def test_a_file_of_another_size_is_an_error_at_decode(tmp_path):
    from PIL import Image

    root = make_copy(tmp_path / "g", splits=("train",))
    bad = root / "train" / "0_color_gray_g_airplane.JPEG"
    Image.new("RGB", (100, 80)).save(bad, format="JPEG")
    src = open_stimulus_set("graysplit", root, splits=("train",))
    with pytest.raises(
        DataError, match=r"0_color_gray_g_airplane.JPEG: expected a 224x224 image .* found 100x80"
    ):
        next(src.batches(2))


def test_the_runner_finds_the_split_datasets_in_the_data_directory_it_was_given(
    tmp_path, monkeypatch
):
    """`measure` resolves the data directory once and passes it down: the registry counts a
    16-class measurement as runnable when its set lies there, and the default
    environment opens it."""
    from repro.measurements.registry import configured_roots, split_configured
    from repro.runner.jobs import Environment

    for var in ("REPRO_GRAYSPLIT_ROOT", "REPRO_CBMSPLIT_ROOT"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "none.toml").write_text("")
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "none.toml"))
    data = tmp_path / "data"
    make_copy(data / "critical-band-masking" / "GraySplit")
    runnable, missing = split_configured(
        ["critical_band_16", "critical_band_16_premade"], data_dir=data
    )
    assert runnable == ["critical_band_16"] and missing == {"critical_band_16_premade": "cbmsplit"}
    assert configured_roots(["graysplit"]) == {}  # no data directory handed down: nothing guessed
    src = Environment(data_dir=data).open_source("graysplit")
    assert len(src) == 1050 and src.name.startswith("graysplit")
    with pytest.raises(DataError, match=r"graysplit: no root configured"):
        Environment().open_source("graysplit")

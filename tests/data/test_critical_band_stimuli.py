"""The tests of tests/unit/test_critical_band_stimuli.py that read the published data directory, in
the data tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from repro.base.errors import DataError
from repro.datasets import open_dataset
from repro.datasets.critical_band_stimuli import (
    PROBE_SPLITS,
    SPLITS,
    category_of,
    cbm_condition,
    detect,
    open_stimulus_set,
)
from repro.datasets.specs import CATEGORIES16

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def cbm_root(data_dir) -> Path:
    root = data_dir / "critical-band-masking"
    if not root.is_dir():
        pytest.skip(f"{root}: the critical-band stimuli are not in the data directory")
    return root


# --------------------------------------------------------------------------- the real folders
def test_cue_conflict_reader_accepts_the_real_folder_and_counts_it(data_dir):
    src = open_dataset("cue_conflict", data_dir / "texture-vs-shape" / "cue-conflict", cache=False)
    assert len(src) == 1280 and len(set(src.names)) == 1280
    labels = Counter(src.labels.tolist())
    assert sorted(labels) == list(range(16)) and set(labels.values()) == {80}
    conflict = [
        n
        for n in src.names
        if n.split("-")[0].rstrip("0123456789")
        != n.split("-")[1].split(".")[0].rstrip("0123456789")
    ]
    assert len(conflict) == 1200  # 80 images whose shape and texture class agree are not trials


def test_graysplit_reads_splits_0_to_4_by_default(cbm_root):
    src = open_dataset("graysplit", cbm_root / "GraySplit", cache=False)
    assert len(src) == 1050 and PROBE_SPLITS == ("0", "1", "2", "3", "4")
    names = src.names
    assert names[0] == "0/0_color_gray_g_knife.JPEG" and names[-1].startswith("4/209_")
    assert len(set(names)) == 1050
    assert all(
        CATEGORIES16[y] == category_of(n) for n, y in zip(names, src.labels.tolist(), strict=True)
    )
    counts = Counter(CATEGORIES16[y] for y in src.labels.tolist())
    assert set(counts) == set(CATEGORIES16) and sum(counts.values()) == 1050
    every = open_stimulus_set("graysplit", cbm_root / "GraySplit", splits=SPLITS)
    assert len(every) == 1100
    train = open_stimulus_set("graysplit", cbm_root / "GraySplit", splits=("train",))
    assert len(train) == 50 and all(n.startswith("train/") for n in train.names)


def test_graysplit_default_root_is_the_data_directory_passed_down(cbm_root, monkeypatch, tmp_path):
    """Without a configured root the set is read from the data directory the CALLER passes (never
    looked up from settings here): REPRO_DATA_DIR pointing elsewhere changes nothing."""
    from repro.datasets.roots import dataset_root

    monkeypatch.delenv("REPRO_GRAYSPLIT_ROOT", raising=False)
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    monkeypatch.setenv("REPRO_DATA_DIR", str(tmp_path / "elsewhere"))
    assert len(open_dataset("graysplit", cache=False, data_dir=cbm_root.parent)) == 1050
    assert dataset_root("graysplit", cbm_root.parent) == cbm_root / "GraySplit"
    assert dataset_root("graysplit") is None and dataset_root("graysplit", tmp_path) is None
    with pytest.raises(
        DataError,
        match=r"graysplit: no root configured \(set REPRO_GRAYSPLIT_ROOT or \[datasets\] "
        r"graysplit = .* or put it in the data directory as critical-band-masking/GraySplit\)",
    ):
        open_dataset("graysplit", cache=False)
    monkeypatch.setenv(
        "REPRO_GRAYSPLIT_ROOT", str(cbm_root / "GraySplit")
    )  # a configured root wins
    assert dataset_root("graysplit", tmp_path) == cbm_root / "GraySplit"


def test_cbmsplit_conditions_from_file_names(cbm_root):
    src = open_dataset("cbmsplit", cbm_root / "CBMSplit", cache=False)
    gray = open_dataset("graysplit", cbm_root / "GraySplit", cache=False)
    assert len(src) == 1050
    # image <i> of a split is GraySplit's <i> of that split: same index and category
    for c, g in zip(src.names, gray.names, strict=True):
        assert c.split("_")[0] == g.split("_")[0] and category_of(c) == category_of(g)
    assert src.labels.tolist() == gray.labels.tolist()
    cells = Counter(cbm_condition(n) for n in src.names)
    assert set(cells) == {(sd, b) for sd in (0.0, 0.02, 0.04, 0.08, 0.16) for b in range(7)}
    assert sum(n for (sd, _), n in cells.items() if sd == 0) == 221  # the pooled sd=0 cell
    assert min(cells.values()) == 20 and max(cells.values()) == 41 and sum(cells.values()) == 1050


def test_images_decode_at_224_as_they_are(cbm_root):
    src = open_stimulus_set("cbmsplit", cbm_root / "CBMSplit", splits=("train",))
    batch = next(src.batches(4))
    assert batch.images.shape == (4, 3, 224, 224) and batch.images.dtype.name == "uint8"
    assert (batch.images[:, 0] == batch.images[:, 1]).mean() > 0.95  # grayscale stored as RGB


def test_detect_tells_the_two_sets_apart(cbm_root, data_dir):
    assert detect(cbm_root / "GraySplit") == "graysplit"
    assert detect(cbm_root / "CBMSplit") == "cbmsplit"
    assert detect(data_dir / "texture-vs-shape" / "cue-conflict") is None
    assert detect(cbm_root / "nowhere") is None

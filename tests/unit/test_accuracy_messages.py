"""Scoring messages and bounds (repro.scoring.accuracy, repro.scoring.imagenet_c).

The whole DataError text when the imagenet-x package or one of its annotation files is missing,
when a file name is not an ImageNet validation image (default source ``<predictions>``) and when a
label disagrees with the ImageNet validation labels; and the ImageNet-C interval clipped at 1.
"""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.scoring import accuracy
from repro.scoring.imagenet_c import IMAGENET_C_15, SEVERITIES, aggregate
from repro.scoring.predictions import Predictions

pytestmark = pytest.mark.unit

_NOT_INSTALLED = (
    "the imagenet-x package (imagenet-x==0.0.7) is not installed; it ships the ImageNet-X "
    "annotations, ImageNet val labels and ReaL labels"
)


def _fake_find_spec(monkeypatch, spec):
    """``importlib.util.find_spec("imagenet_x")`` answers ``spec``."""
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return spec if name == "imagenet_x" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_package_not_found_is_a_data_error_saying_it_is_not_installed(monkeypatch):
    _fake_find_spec(monkeypatch, None)
    with pytest.raises(DataError) as exc:
        accuracy.annotation_path("filename_label.csv")
    assert str(exc.value) == _NOT_INSTALLED


def test_module_that_is_not_a_package_is_not_installed_either(monkeypatch):
    # a plain module (no submodule search locations) cannot ship the annotations folder
    _fake_find_spec(monkeypatch, SimpleNamespace(submodule_search_locations=[]))
    with pytest.raises(DataError) as exc:
        accuracy.annotation_path("filename_label.csv")
    assert str(exc.value) == _NOT_INSTALLED


def test_file_missing_from_the_package_names_its_path(monkeypatch, tmp_path):
    _fake_find_spec(monkeypatch, SimpleNamespace(submodule_search_locations=[str(tmp_path)]))
    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "present.csv").write_text("file_name,label\n")
    assert accuracy.annotation_path("present.csv") == tmp_path / "annotations" / "present.csv"
    with pytest.raises(DataError) as exc:
        accuracy.annotation_path("absent.csv")
    assert str(exc.value) == (
        f"{tmp_path / 'annotations' / 'absent.csv'}: missing from the installed imagenet-x "
        "package (expected version 0.0.7)"
    )


def test_unknown_file_name_without_a_source_is_named_predictions():
    with pytest.raises(DataError) as exc:
        accuracy.val_index(np.array(["ILSVRC2012_val_00000001.JPEG", "cat.jpg"], dtype=object))
    # the second row is line 3 (the header is line 1)
    assert str(exc.value) == (
        "<predictions>: row 2 (line 3): unknown file_name 'cat.jpg' (expected an ImageNet "
        "validation image ILSVRC2012_val_00000001.JPEG .. ILSVRC2012_val_00050000.JPEG)"
    )


def _shipped_label(file_name: str) -> int:
    """The label of one validation image, read with the csv module from the imagenet-x
    package's ``annotations/filename_label.csv`` (the package data, not the code under test)."""
    spec = importlib.util.find_spec("imagenet_x")
    path = Path(next(iter(spec.submodule_search_locations))) / "annotations" / "filename_label.csv"
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            if row["file_name"] == file_name:
                return int(row["label"])
    raise AssertionError(f"{file_name} not in {path}")


def test_label_that_disagrees_with_the_validation_labels_is_named():
    name = "ILSVRC2012_val_00000001.JPEG"
    true = _shipped_label(name)
    wrong = (true + 1) % 1000
    predictions = Predictions(
        file_name=np.array([name], dtype=object),
        predicted_class=np.array([true], dtype=np.int64),
        predicted_probability=np.array([0.9]),
        label=np.array([wrong], dtype=np.int64),
        source="preds.csv",
    )
    with pytest.raises(DataError) as exc:
        accuracy.imagenet_val(predictions, require_complete=False)
    assert str(exc.value) == (
        f"preds.csv: row 1 (line 2): label = {wrong} but {name} is class {true} in the ImageNet "
        "validation labels"
    )


def test_imagenet_c_interval_is_clipped_at_one():
    # 74 of the 75 standard cells at 2/2 correct, one at 1/2: mean = (74 + 0.5) / 75; the
    # variance of the mean is only that cell's 0.5 * 0.5 / 2 / 75**2, so the half width
    # 1.96 * sqrt(0.125) / 75 ~ 0.00924 exceeds 1 - mean = 0.5 / 75 ~ 0.00667: the upper bound
    # mean + half is above 1 and is clipped to 1.0
    cells = {(c, s): Count(2, 2) for c in IMAGENET_C_15 for s in SEVERITIES}
    cells[(IMAGENET_C_15[0], SEVERITIES[0])] = Count(1, 2)
    summary = aggregate(cells, "imagenet_c")
    mean = (74 + 0.5) / 75
    half = 1.959963984540054 * math.sqrt(0.125) / 75
    assert mean + half > 1.0
    assert summary.mean == pytest.approx(mean, abs=1e-15)
    assert summary.interval[0] == pytest.approx(mean - half, abs=1e-15)
    assert summary.interval[1] == 1.0

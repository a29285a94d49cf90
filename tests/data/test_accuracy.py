"""The tests of tests/unit/test_accuracy.py that read the published data directory, in the data
tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import json

import pytest

from repro.base.errors import DataError, UnknownNameError
from repro.base.stats import Count
from repro.datasets import class_subsets
from repro.scoring import accuracy

pytestmark = pytest.mark.data


def test_resnet50_imagenet_top1_is_the_published_count(resnet50):
    c = accuracy.score("imagenet", resnet50)
    assert c == Count(38_065, 50_000)
    assert round(100 * c.rate, 3) == 76.130
    lo, hi = c.interval()
    assert lo < 0.7613 < hi and hi - lo < 0.008


def test_labelled_benchmarks_need_the_columns(resnet50):
    with pytest.raises(DataError, match="benchmark imagenet-v2 needs a 'label' column"):
        accuracy.score("imagenet-v2", resnet50)
    with pytest.raises(DataError, match="needs the top-5 columns"):
        accuracy.score("imagenet_top5", resnet50)
    with pytest.raises(UnknownNameError, match="did you mean 'real'"):
        accuracy.score("reel", resnet50)


def test_class_subsets_equal_the_reference_file(data_dir):
    ref = json.loads((data_dir / "imagenet" / "class_subsets.json").read_text())
    assert list(class_subsets.IMAGENET_WNIDS) == ref["wnids"]
    assert list(class_subsets.IMAGENET_A_CLASSES) == sorted(ref["imagenet_a_indices"])
    assert list(class_subsets.IMAGENET_R_CLASSES) == sorted(ref["imagenet_r_indices"])
    assert len(class_subsets.IMAGENET_A_CLASSES) == len(class_subsets.IMAGENET_R_CLASSES) == 200
    assert (
        class_subsets.render_table(data_dir / "imagenet" / "class_subsets.json")
        == class_subsets.TABLE.read_text()
    )

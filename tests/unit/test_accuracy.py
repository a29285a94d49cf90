"""Benchmark scoring as counts: ImageNet top-1/top-5 on real ResNet-50 predictions, the
labelled variants, the 200-class subsets (and their package data vs the reference file), and
the validation labels/order the other scorers rest on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.datasets import class_subsets
from repro.scoring import accuracy
from repro.scoring.predictions import from_frame, predictions_from_probabilities

pytestmark = pytest.mark.unit


def test_val_labels_are_the_ilsvrc2012_labels():
    labels = accuracy.imagenet_val_labels()
    assert labels.shape == (50_000,)
    assert np.bincount(labels, minlength=1000).tolist() == [50] * 1000  # 50 images per class
    # well-known first images: val_00000001 is a snake (65), 00000002 a ski (970)
    assert labels[:3].tolist() == [65, 970, 230]


def test_torchvision_order_is_class_then_file_name():
    order = accuracy.torchvision_val_order()
    labels = accuracy.imagenet_val_labels()
    assert sorted(order.tolist()) == list(range(50_000))
    assert (np.diff(labels[order]) >= 0).all()
    same = np.diff(labels[order]) == 0
    assert (np.diff(order)[same] > 0).all()


def _val_frame(pred, n=20, **extra):
    return pd.DataFrame(
        {
            "file_name": [accuracy.val_file_name(i + 1) for i in range(n)],
            "predicted_class": pred,
            "predicted_probability": 0.5,
            **extra,
        }
    )


def test_top1_and_top5_counts_on_synthetic_predictions():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 1000, 300)
    probs = rng.random((300, 1000))
    probs[np.arange(300), labels] += rng.choice(
        [0.0, 0.99, 2.0], size=300
    )  # some top-1, some top-5
    p = predictions_from_probabilities([f"x{i}.png" for i in range(300)], probs, labels)
    rank = (probs > probs[np.arange(300), labels][:, None]).sum(axis=1)
    assert accuracy.score("imagenet-v2", p) == Count(int((rank == 0).sum()), 300)
    assert accuracy.score("imagenet-sketch_top5", p) == Count(int((rank < 5).sum()), 300)
    assert (rank < 5).sum() > (rank == 0).sum() > 0


def test_unlabelled_rows_are_accepted_but_not_scored_as_labelled():
    f = _val_frame(imagenet_val_labels_head(), label=[-1] * 20)
    p = from_frame(f, source="unl.csv")
    assert p.label.tolist() == [-1] * 20
    accuracy.imagenet_val(p, require_complete=False)  # -1 is not checked against the val labels
    with pytest.raises(
        DataError,
        match=(
            r"unl\.csv: row 1 \(line 2\): label = -1 \(unlabelled\), but benchmark "
            r"imagenet-v2 needs"
        ),
    ):
        accuracy.score("imagenet-v2", p)


def imagenet_val_labels_head():
    return accuracy.imagenet_val_labels()[:20]


def test_imagenet_rejects_incomplete_foreign_or_mislabelled_predictions():
    labels = accuracy.imagenet_val_labels()
    p = from_frame(_val_frame(labels[:20]), source="part.csv")
    with pytest.raises(
        DataError,
        match=(
            r"part\.csv: predictions for 20 of the 50000 ImageNet validation images \(first "
            r"missing: ILSVRC2012_val_00000021"
        ),
    ):
        accuracy.score("imagenet", p)
    assert accuracy.top1(p.predicted_class, labels[:20]) == Count(20, 20)
    f = _val_frame(0)
    f.loc[4, "file_name"] = "ILSVRC2012_val_00050001.JPEG"
    with pytest.raises(
        DataError,
        match=r"foreign\.csv: row 5 \(line 6\): unknown file_name 'ILSVRC2012_val_00050001.JPEG'",
    ):
        accuracy.score("imagenet", from_frame(f, source="foreign.csv"))
    wrong = labels[:20].copy()
    wrong[7] = (wrong[7] + 1) % 1000
    with pytest.raises(DataError, match=r"row 8 \(line 9\): label = .* is class"):
        accuracy.imagenet_val(
            from_frame(_val_frame(0, label=wrong), source="lab.csv"), require_complete=False
        )


@pytest.mark.parametrize(
    "name,subset", [("imagenet-a", "imagenet_a"), ("imagenet-r", "imagenet_r")]
)
def test_200_class_benchmarks_score_within_their_subset(name, subset):
    classes = np.asarray(class_subsets.subset(subset))
    rng = np.random.default_rng(2)
    labels = rng.choice(classes, 100)
    probs = rng.random((100, 1000))
    probs[:, 0] = 5.0  # class 0 is in neither subset: must never be chosen
    p = predictions_from_probabilities(
        [f"{i}.jpg" for i in range(100)], probs, labels, class_subset=classes
    )
    best = classes[probs[:, classes].argmax(axis=1)]
    assert accuracy.score(name, p) == Count(int((best == labels).sum()), 100)
    unrestricted = predictions_from_probabilities([f"{i}.jpg" for i in range(100)], probs, labels)
    with pytest.raises(
        DataError,
        match=rf"row 1 \(line 2\): predicted_class = 0 is not one of the 200 {subset} classes",
    ):
        accuracy.score(name, unrestricted)


def test_wnids_are_sorted_and_agree_with_the_imagenetx_label_list():
    wnids = list(class_subsets.IMAGENET_WNIDS)
    assert wnids == sorted(wnids) and len(set(wnids)) == 1000
    listed = [
        line.split(",")[0]
        for line in accuracy.annotation_path("imagenet_labels.txt").read_text().splitlines()
    ]
    assert listed == wnids

"""ImageNet-X scoring edge cases: the three correctness rules (class, metaclass, ReaL set) on
hand-picked images, the unknown-rule message, the worst-k-classes mean on a hand-built example,
the options and defaults of ``factor_accuracies`` checked against counts computed here with
pandas from the imagenet-x package's shipped annotation files, and predictions that cover one
or no annotated image or carry a bad file name."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import ConfigError, DataError
from repro.base.stats import Count
from repro.scoring import imagenet_x as ix
from repro.scoring.accuracy import annotation_path, imagenet_val_labels, val_file_names
from repro.scoring.predictions import Predictions

pytestmark = pytest.mark.unit

# the 16 kept metaclasses (any other of the 100 is "other"), as in the imagenet_x package
KEPT = (
    "device dog commodity bird structure covering wheeled_vehicle food equipment insect "
    "vehicle furniture primate vessel snake natural_object"
).split()


def _meta_of_class():
    """Metaclass name of each of the 1000 classes, read here with pandas."""
    names = pd.read_csv(annotation_path("imagenet_1k_classes_to_100_metaclasses.csv"))["name"]
    return [n if n in KEPT else "other" for n in names]


def _annotations(image_index, label):
    """Hand-built annotations: the given images and labels, no factor, metaclass from the CSV."""
    meta = _meta_of_class()
    label = np.asarray(label, dtype=np.int64)
    return ix.Annotations(
        image_index=np.asarray(image_index, dtype=np.int64),
        label=label,
        factors=np.zeros((len(label), 16), dtype=bool),
        metaclass=np.array([ix.METACLASSES.index(meta[c]) for c in label], dtype=np.int64),
    )


def _frame(which="top"):
    """The annotation file as a DataFrame, with the 0-based image number."""
    frame = pd.read_json(annotation_path(f"imagenet_x_val_{which}_factor.jsonl"), lines=True)
    frame["image"] = [int(f[15:23]) - 1 for f in frame["file_name"]]
    return frame


def _prototypes():
    return set(pd.read_csv(annotation_path("prototypical_paths.csv"))["file_name"])


def _predictions(correct_image, names=None, source="preds.csv"):
    """Val images (all, or `names`) predicted right (the label) where correct_image, else
    label + 1."""
    labels = np.asarray(imagenet_val_labels())
    predicted = np.where(correct_image, labels, (labels + 1) % 1000)
    all_names = np.asarray(val_file_names(), dtype=object)
    if names is None:
        keep = np.arange(len(all_names))
    else:
        keep = np.array([int(n[15:23]) - 1 for n in names], dtype=np.int64)
    return Predictions(
        file_name=all_names[keep],
        predicted_class=predicted[keep].astype(np.int64),
        predicted_probability=np.full(len(keep), 0.5),
        top5=None,
        label=None,
        source=source,
    )


# -- correctness rules ---------------------------------------------------------------------


def test_metaclass_correctness_accepts_any_class_of_the_label_metaclass():
    meta = _meta_of_class()
    dogs = [c for c in range(1000) if meta[c] == "dog"]
    birds = [c for c in range(1000) if meta[c] == "bird"]
    others = [c for c in range(1000) if meta[c] == "other"]
    labels = [dogs[0], dogs[1], others[0], birds[0]]
    predicted = np.array([dogs[0], dogs[2], others[1], dogs[3]], dtype=np.int64)
    ann = _annotations([0, 1, 2, 3], labels)
    rows = np.arange(4)
    # same class; another dog; another "other" class; a dog for a bird
    got = ix._correct(predicted, rows, ann, "metaclass")
    assert got.tolist() == [True, True, True, False]
    assert ix._correct(predicted, rows, ann, "class").tolist() == [True, False, False, False]


def test_real_class_correctness_is_membership_in_the_real_label_set():
    raw = json.loads(annotation_path("imagenet_real_labels.jsonl").read_text())
    labels = np.asarray(imagenet_val_labels())
    # an image whose ReaL set holds a class other than its ImageNet label
    multi = next(i for i, s in enumerate(raw) if any(c != labels[i] for c in s))
    other_real = next(c for c in raw[multi] if c != labels[multi])
    empty = next(i for i, s in enumerate(raw) if not s)  # no ReaL label: never correct
    single = next(i for i, s in enumerate(raw) if len(s) == 1 and s[0] == labels[i])
    images = [multi, empty, single, single]
    predicted = np.array(
        [other_real, labels[empty], (labels[single] + 1) % 1000, labels[single]], dtype=np.int64
    )
    ann = _annotations(images, labels[images])
    # rows 1..3 only: the annotation rows select the images
    got = ix._correct(predicted[1:], np.arange(1, 4), ann, "real_class")
    assert got.tolist() == [False, False, True]
    got = ix._correct(predicted, np.arange(4), ann, "real_class")
    assert got.tolist() == [True, False, False, True]
    assert ix._correct(predicted, np.arange(4), ann, "class").tolist() == [
        False,
        True,
        False,
        True,
    ]


def test_unknown_correctness_names_the_choices():
    ann = _annotations([0], [0])
    with pytest.raises(ConfigError) as exc:
        ix._correct(np.array([0]), np.arange(1), ann, "top5")
    assert (
        str(exc.value)
        == "unknown correctness 'top5' (expected one of class, metaclass, real_class)"
    )


# -- worst classes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        (1, 1 / 3),  # class 9: 1 of 3
        (2, 2 / 5),  # classes 9 and 5: (1 + 1) of (3 + 2)
        # classes 2 and 7 tie at accuracy 1; the lower index (2, two images) goes first
        (3, 4 / 7),
        (4, 5 / 8),  # every image
        (10, 5 / 8),
    ],
)
def test_worst_classes_is_the_mean_over_the_images_of_the_k_worst_classes(k, expected):
    correct = np.array([1, 0, 1, 1, 0, 0, 1, 1], dtype=bool)
    label = np.array([5, 5, 2, 2, 9, 9, 9, 7])
    assert ix._worst_classes(correct, label, k) == pytest.approx(expected, rel=1e-12)


# -- factor_accuracies on the shipped annotations ---------------------------------------------


def _expected(frame, correct_image, k_worst):
    """Overall, per-factor counts and worst-k mean over `frame`, computed with pandas."""
    ok = np.asarray(correct_image)[frame["image"].to_numpy()]
    overall = Count(int(ok.sum()), len(frame))
    factors = {
        f: Count(int((ok & (frame[f] == 1)).sum()), int((frame[f] == 1).sum())) for f in ix.FACTORS
    }
    per_class = pd.DataFrame({"c": frame["class"].to_numpy(), "ok": ok}).groupby("c")["ok"]
    stats = pd.DataFrame({"hits": per_class.sum(), "n": per_class.size()})
    stats["acc"] = stats["hits"] / stats["n"]
    worst = stats.reset_index().sort_values(["acc", "c"]).head(k_worst)
    return overall, factors, worst["hits"].sum() / worst["n"].sum()


def test_factor_accuracies_defaults_drop_prototypes_and_score_worst_100_classes():
    frame = _frame()
    frame = frame[~frame["file_name"].isin(_prototypes())]
    correct_image = (np.arange(1, 50_001) % 3) != 0
    r = ix.factor_accuracies(_predictions(correct_image))
    overall, factors, worst = _expected(frame, correct_image, 100)
    assert r.overall == overall and overall.n == 46_110
    assert r.factors == factors
    assert list(r.worst_classes) == [100]
    assert r.worst_classes[100] == pytest.approx(worst, rel=1e-12)


def test_factor_accuracies_can_keep_prototypes_and_several_worst_k():
    frame = _frame()  # every annotated image, prototypes included
    correct_image = (np.arange(1, 50_001) % 3) != 0
    r = ix.factor_accuracies(
        _predictions(correct_image), filter_prototypes=False, worst_k_classes=(10, 1000)
    )
    overall, factors, worst10 = _expected(frame, correct_image, 10)
    assert r.overall == overall and overall.n == 48_868
    assert r.factors == factors
    assert list(r.worst_classes) == [10, 1000]
    assert r.worst_classes[10] == pytest.approx(worst10, rel=1e-12)
    # all classes: the overall accuracy
    assert r.worst_classes[1000] == pytest.approx(overall.k / overall.n, rel=1e-12)


def test_factor_accuracies_requires_every_annotated_image_by_default():
    frame = _frame()
    frame = frame[~frame["file_name"].isin(_prototypes())]
    dropped = frame["file_name"].min()
    names = [n for n in val_file_names() if n != dropped]
    preds = _predictions(np.ones(50_000, dtype=bool), names)
    with pytest.raises(DataError) as exc:
        ix.factor_accuracies(preds)
    assert str(exc.value) == (
        f"preds.csv: no prediction for 1 of the 46,110 ImageNet-X annotated images "
        f"(first: {dropped}); expected predictions for all 50,000 validation images"
    )
    assert ix.factor_accuracies(preds, require_complete=False).overall == Count(46_109, 46_109)


# -- predictions covering one or no annotated image, bad file names -----------------------------


def test_a_single_annotated_prediction_is_scored():
    frame = _frame()
    frame = frame[~frame["file_name"].isin(_prototypes())]
    first = frame.sort_values("file_name").iloc[0]
    preds = _predictions(np.ones(50_000, dtype=bool), [first["file_name"]])
    r = ix.factor_accuracies(preds, require_complete=False)
    assert r.overall == Count(1, 1)
    assert r.factors == {f: Count(int(first[f]), int(first[f])) for f in ix.FACTORS}
    assert r.worst_classes == {100: 1.0}


def test_predictions_without_an_annotated_image_are_an_error():
    annotated = set(_frame()["file_name"])
    unannotated = [n for n in val_file_names() if n not in annotated][:2]
    preds = _predictions(np.ones(50_000, dtype=bool), unannotated, source="few.csv")
    with pytest.raises(DataError) as exc:
        ix.factor_accuracies(preds, require_complete=False)
    assert str(exc.value) == "few.csv: none of the predicted images is ImageNet-X annotated"


def test_a_bad_file_name_is_reported_with_the_predictions_source():
    preds = _predictions(np.ones(50_000, dtype=bool), list(val_file_names()[:2]), source="p.csv")
    preds = Predictions(
        file_name=np.array([preds.file_name[0], "cat.jpg"], dtype=object),
        predicted_class=preds.predicted_class,
        predicted_probability=preds.predicted_probability,
        top5=None,
        label=None,
        source="p.csv",
    )
    with pytest.raises(DataError) as exc:
        ix.factor_accuracies(preds, require_complete=False)
    assert str(exc.value) == (
        "p.csv: row 2 (line 3): unknown file_name 'cat.jpg' (expected an ImageNet validation "
        "image ILSVRC2012_val_00000001.JPEG .. ILSVRC2012_val_00050000.JPEG)"
    )

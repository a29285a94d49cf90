"""Per-image decisions (repro.scoring.per_image): each benchmark's images and decisions count what
repro.scoring.accuracy counts, and two sides' decisions pair on the images both count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import DataError
from repro.scoring import accuracy, real
from repro.scoring.per_image import Decisions, paired_counts, per_image
from repro.scoring.predictions import from_frame

pytestmark = pytest.mark.unit


def _predictions(seed: int, rate: float, drop: np.ndarray | None = None):
    """Predictions of the 50,000 val images: the label for a share ``rate``, else another class
    (not one of the image's ReaL labels where it has any), rows shuffled, ``drop`` left out."""
    rng = np.random.default_rng(seed)
    truth = accuracy.imagenet_val_labels()
    right = rng.random(truth.size) < rate
    wrong = (truth + 1 + rng.integers(0, 998, truth.size)) % 1000
    pred = np.where(right, truth, wrong)
    images = np.arange(truth.size)
    if drop is not None:
        images = np.setdiff1d(images, drop)
    order = rng.permutation(images)
    frame = pd.DataFrame(
        {
            "file_name": [accuracy.val_file_name(i + 1) for i in order],
            "predicted_class": pred[order],
            "predicted_probability": 0.5,
        }
    )
    return from_frame(frame, source=f"seed {seed}")


@pytest.mark.parametrize("seed", [0, 1])
def test_each_benchmark_counts_what_the_score_counts(seed):
    p = _predictions(seed, 0.7)
    for name in ("imagenet", "real", "real_last_batch"):
        d = per_image(name, p)
        count = accuracy.score(name, p)
        assert (d.k, d.n) == (count.k, count.n), name
        assert np.all(np.diff(d.images) > 0)  # ascending, each image once
    assert per_image("real_last_batch", p).n == 326  # the labelled images of the last batch
    # the decisions are the images' own: the last batch's correct images are the ReaL hits
    d = per_image("real_last_batch", p)
    labels = real.real_label_matrix()[d.images]
    by_image = dict(zip(p.file_name, p.predicted_class, strict=True))
    predicted = np.array([by_image[accuracy.val_file_name(i + 1)] for i in d.images])
    assert np.array_equal(d.correct, (labels == predicted[:, None]).any(axis=1))


def test_paired_counts_are_the_two_by_two_table_of_the_shared_images():
    first = Decisions(np.array([1, 2, 3, 4, 5, 9]), np.array([1, 1, 0, 0, 1, 1], dtype=bool))
    second = Decisions(np.array([0, 2, 3, 4, 5]), np.array([1, 0, 1, 0, 1], dtype=bool))
    table, only_first, only_second = paired_counts(first, second)
    # shared 2, 3, 4, 5: (1, 0), (0, 1), (0, 0), (1, 1)
    assert (table.both, table.first_only, table.second_only, table.neither) == (1, 1, 1, 1)
    assert (only_first, only_second) == (2, 1) and table.n == 4


def test_paired_counts_of_two_prediction_sets_follow_their_flips():
    a, b = _predictions(3, 0.76), _predictions(3, 0.76)
    da, db = per_image("imagenet", a), per_image("imagenet", b)
    table, *_ = paired_counts(da, db)
    assert table.first_only == table.second_only == 0 and table.n == 50_000
    # b flips 7 of a's correct images to wrong and 2 wrong to right: 7 a-only, 2 b-only
    correct = np.flatnonzero(da.correct)[:7]
    wrong = np.flatnonzero(~da.correct)[:2]
    flipped = Decisions(db.images, db.correct.copy())
    flipped.correct[correct] = False
    flipped.correct[wrong] = True
    table, *_ = paired_counts(da, flipped)
    assert (table.first_only, table.second_only) == (7, 2)
    assert table.both + table.first_only == da.k


def test_a_missing_last_batch_image_and_an_unknown_benchmark_are_named():
    last = real.last_batch_images()
    p = _predictions(4, 0.7, drop=last[5:6])
    with pytest.raises(DataError, match=accuracy.val_file_name(int(last[5]) + 1)):
        per_image("real_last_batch", p)
    assert per_image("imagenet", p).n == 49_999  # the other benchmarks count what is there
    with pytest.raises(DataError, match="'imagenet_top5' has no per-image decisions"):
        per_image("imagenet_top5", p)

"""Per-image decisions (repro.scoring.per_image) on incomplete predictions and their errors.

Checks that the ``real`` and ``real_last_batch`` decisions accept predictions that leave out
images outside what they count, that a last-batch image on the first prediction row (row 0) is
found, and the whole text of the errors for a missing last-batch image and an unknown benchmark.
Expected values come from the ReaL label matrix and the validation labels read directly here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import DataError
from repro.scoring import accuracy, real
from repro.scoring.per_image import per_image
from repro.scoring.predictions import from_frame

pytestmark = pytest.mark.unit


def _truth_predictions(order: np.ndarray, source: str = "test predictions"):
    """Predictions of the images ``order`` (0-based, in this row order), each its true label."""
    truth = accuracy.imagenet_val_labels()
    frame = pd.DataFrame(
        {
            "file_name": [accuracy.val_file_name(int(i) + 1) for i in order],
            "predicted_class": truth[order],
            "predicted_probability": 0.5,
        }
    )
    return from_frame(frame, source=source)


def _order_with_first(first: int, drop: np.ndarray) -> np.ndarray:
    """All val images except ``drop``, ascending, with ``first`` moved to row 0."""
    rest = np.setdiff1d(np.arange(accuracy.N_VAL), np.append(drop, first))
    return np.concatenate([[first], rest])


def _expected_real(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(images with a ReaL set, ascending; whether the true label is in the set) from the matrix."""
    labels = real.real_label_matrix()
    truth = accuracy.imagenet_val_labels()
    images = np.sort(images)
    kept = images[labels[images, 0] >= 0]
    hit = np.array([truth[i] in set(labels[i][labels[i] >= 0].tolist()) for i in kept])
    return kept, hit


def test_real_decisions_accept_predictions_that_leave_out_images():
    last = real.last_batch_images()
    # leave out two images outside the last batch: 7 and 8 are not among the last 336
    drop = np.setdiff1d(np.array([7, 8]), last)
    assert drop.size == 2
    p = _truth_predictions(_order_with_first(int(last[0]), drop))
    present = np.setdiff1d(np.arange(accuracy.N_VAL), drop)

    d = per_image("real", p)
    images, hit = _expected_real(present)
    assert np.array_equal(d.images, images)
    assert np.array_equal(d.correct, hit)
    assert d.correct.dtype == bool

    # the last batch is all there, and its first image is on row 0 of the predictions
    d = per_image("real_last_batch", p)
    images, hit = _expected_real(last)
    assert d.n == 326  # quirk Q1: 326 of the last 336 images have ReaL labels
    assert np.array_equal(d.images, images)
    assert np.array_equal(d.correct, hit)


def test_a_missing_last_batch_image_is_named_even_when_another_is_on_row_zero():
    last = real.last_batch_images()
    missing = int(last[5])
    p = _truth_predictions(_order_with_first(int(last[0]), np.array([missing])), "preds.csv")
    with pytest.raises(DataError) as exc:
        per_image("real_last_batch", p)
    name = accuracy.val_file_name(missing + 1)
    assert str(exc.value) == (
        f"preds.csv: no prediction for {name}, an image of the study's last batch "
        "(336 images in torchvision order, quirk Q1); expected all of them"
    )


def test_an_unknown_benchmark_lists_the_known_ones():
    p = _truth_predictions(np.arange(3))
    with pytest.raises(DataError) as exc:
        per_image("imagenet_top5", p)
    assert str(exc.value) == (
        "benchmark 'imagenet_top5' has no per-image decisions here "
        "(known: imagenet, real, real_last_batch)"
    )

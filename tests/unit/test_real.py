"""ImageNet-ReaL: the standard metric and the published last-batch variant (quirk Q1), on real
ResNet-50 predictions and against benchmark.csv."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.base.stats import Count
from repro.scoring import accuracy, real
from repro.scoring.predictions import from_frame

pytestmark = pytest.mark.unit


def test_real_label_sets():
    m = real.real_label_matrix()
    has = m[:, 0] >= 0
    assert int(has.sum()) == 46_837  # 3,163 images have an empty ReaL set
    assert m[0, 0] == -1 and sorted(m[1][m[1] >= 0].tolist()) == [
        795,
        970,
    ]  # val_00000001: [], 00000002: [970, 795]


def test_last_batch_is_the_last_336_images_in_torchvision_order_326_labelled():
    images = real.last_batch_images()
    assert images.size == 50_000 % 512 == 336
    labels = accuracy.imagenet_val_labels()[images]
    assert labels.min() >= 993 and labels[-1] == 999  # the tail of the class-sorted order
    assert int((real.real_label_matrix()[images, 0] >= 0).sum()) == 326


def test_oracle_perfect_and_adversarial_predictions():
    """Predicting the first ReaL label scores every labelled image; an impossible class none."""
    m = real.real_label_matrix()
    pred = np.where(m[:, 0] >= 0, m[:, 0], 0)
    frame = pd.DataFrame(
        {
            "file_name": list(accuracy.val_file_names()),
            "predicted_class": pred,
            "predicted_probability": 1.0,
        }
    )
    p = from_frame(frame, source="oracle")
    assert accuracy.score("real", p) == Count(46_837, 46_837)
    assert accuracy.score("real_last_batch", p) == Count(326, 326)
    shifted = from_frame(frame.assign(predicted_class=(pred + 500) % 1000), source="shifted")
    # independent count from the raw JSON lists
    import json

    raw = json.loads(accuracy.annotation_path("imagenet_real_labels.jsonl").read_text())
    expected = sum(1 for i, s in enumerate(raw) if s and (int(pred[i]) + 500) % 1000 in s)
    assert accuracy.score("real", shifted) == Count(expected, 46_837)
    assert 0 < expected < 46_837

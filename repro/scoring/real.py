"""ImageNet-ReaL accuracy from stored predictions (pipeline stage: scoring).

ReaL labels (Beyer et al. 2020, "Are we done with ImageNet?") are a list of acceptable
classes per validation image, possibly empty. They come from the ``imagenet-x`` package
(``annotations/imagenet_real_labels.jsonl``: one JSON list, entry i for validation image
i + 1, the ``real.json`` of google-research/reassessed-imagenet).

Two metrics, selectable by name in ``repro.scoring.accuracy``:

- ``real`` (standard): over the images with a non-empty ReaL set, correct when the top-1
  class is in the set. ResNet-50 V1: 38,855 / 46,837.
- ``real_last_batch`` (published, METHODS.md quirk Q1): the study's script logged the
  accuracy of its LAST batch only: the last ``50,000 mod 512 = 336`` images in torchvision's
  validation order, of which 326 have ReaL labels; every published value is k/326.
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.scoring.accuracy import N_VAL, annotation_path, imagenet_val, torchvision_val_order
from repro.scoring.predictions import Predictions

PUBLISHED_BATCH_SIZE = 512  # eval_imagenet_real.py's batch size: 50,000 = 97 x 512 + 336


@lru_cache(maxsize=1)
def real_label_matrix() -> np.ndarray:
    """(50000, max_labels) int64 ReaL labels of validation image i + 1, padded with -1."""
    path = annotation_path("imagenet_real_labels.jsonl")
    raw = json.loads(path.read_text())
    if not isinstance(raw, list) or len(raw) != N_VAL:
        raise DataError(f"{path}: expected a JSON list of {N_VAL} label lists")
    width = max(len(v) for v in raw)
    out = np.full((N_VAL, width), -1, dtype=np.int64)
    for i, labels in enumerate(raw):
        out[i, : len(labels)] = labels
    out.setflags(write=False)
    return out


def real_correct(image_index: np.ndarray, predicted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(has ReaL labels, top-1 in the ReaL set) per row; rows without labels are never correct."""
    labels = real_label_matrix()[image_index]
    has = labels[:, 0] >= 0
    correct = (labels == np.asarray(predicted)[:, None]).any(axis=1)
    return has, correct


def real_count(predictions: Predictions) -> Count:
    """Standard ReaL accuracy over the images with a non-empty ReaL label set."""
    idx, _ = imagenet_val(predictions)
    has, correct = real_correct(idx, predictions.predicted_class)
    return Count(int(np.count_nonzero(correct & has)), int(np.count_nonzero(has)))


def last_batch_images(batch_size: int = PUBLISHED_BATCH_SIZE) -> np.ndarray:
    """0-based image numbers of the last (partial) batch in torchvision's validation order."""
    size = N_VAL % batch_size or batch_size
    return torchvision_val_order()[-size:]


def real_last_batch_count(
    predictions: Predictions, batch_size: int = PUBLISHED_BATCH_SIZE
) -> Count:
    """Published ReaL variant (quirk Q1): ReaL accuracy of the last batch only."""
    idx, _ = imagenet_val(predictions)
    row_of_image = np.full(N_VAL, -1, dtype=np.int64)
    row_of_image[idx] = np.arange(len(idx))
    images = last_batch_images(batch_size)
    rows = row_of_image[images]
    has, correct = real_correct(images, predictions.predicted_class[rows])
    return Count(int(np.count_nonzero(correct & has)), int(np.count_nonzero(has)))

"""Per-image decisions of a benchmark: which images it counts and whether each is correct.

The per-image form of ``repro.scoring.accuracy``'s counts, for paired comparisons of two sets of
predictions of the same images (``repro.diagnostics.independent_paired``). Each benchmark here
gives, for a ``Predictions`` of ImageNet validation images, the 0-based image numbers it counts and
a boolean per image; its number of True values is the benchmark's k, exactly as ``score`` counts
it (``tests/unit/test_per_image.py``):

- ``imagenet``: every image of the predictions, correct when the top-1 class is the label;
- ``real``: the images with a non-empty ReaL label set, correct when the top-1 class is in it;
- ``real_last_batch``: those of the study's last batch of 336 in torchvision order (quirk Q1: 326
  of them have ReaL labels); every one of them must be predicted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from repro.base.errors import DataError
from repro.scoring.accuracy import N_VAL, imagenet_val, val_file_name
from repro.scoring.predictions import Predictions


@dataclass(frozen=True)
class Decisions:
    """Per image: its 0-based validation number (ascending) and whether it was decided correctly."""

    images: np.ndarray
    correct: np.ndarray

    @property
    def k(self) -> int:
        return int(np.count_nonzero(self.correct))

    @property
    def n(self) -> int:
        return len(self.images)


def _sorted(images: np.ndarray, correct: np.ndarray) -> Decisions:
    order = np.argsort(images, kind="stable")
    return Decisions(np.asarray(images)[order], np.asarray(correct, dtype=bool)[order])


def _imagenet(p: Predictions) -> Decisions:
    idx, truth = imagenet_val(p, require_complete=False)
    return _sorted(idx, p.predicted_class == truth)


def _real(p: Predictions) -> Decisions:
    from repro.scoring.real import real_correct

    idx, _ = imagenet_val(p, require_complete=False)
    has, correct = real_correct(idx, p.predicted_class)
    return _sorted(idx[has], correct[has])


def _real_last_batch(p: Predictions) -> Decisions:
    from repro.scoring.real import last_batch_images, real_correct

    idx, _ = imagenet_val(p, require_complete=False)
    row_of_image = np.full(N_VAL, -1, dtype=np.int64)
    row_of_image[idx] = np.arange(len(idx))
    images = last_batch_images()
    rows = row_of_image[images]
    if (rows < 0).any():
        missing = int(images[np.flatnonzero(rows < 0)[0]])
        raise DataError(
            f"{p.source}: no prediction for {val_file_name(missing + 1)}, an image of the study's "
            f"last batch ({len(images)} images in torchvision order, quirk Q1); expected all of "
            "them"
        )
    has, correct = real_correct(images, p.predicted_class[rows])
    return _sorted(images[has], correct[has])


PER_IMAGE: dict[str, Callable[[Predictions], Decisions]] = {
    "imagenet": _imagenet,
    "real": _real,
    "real_last_batch": _real_last_batch,
}


def per_image(benchmark: str, predictions: Predictions) -> Decisions:
    """``benchmark``'s per-image decisions of ``predictions`` (DataError for one without)."""
    try:
        fn = PER_IMAGE[benchmark]
    except KeyError:
        raise DataError(
            f"benchmark {benchmark!r} has no per-image decisions here (known: "
            f"{', '.join(PER_IMAGE)})"
        ) from None
    return fn(predictions)


@dataclass(frozen=True)
class PairedCounts:
    """Two sides' decisions on the images both counted: both correct, only one, neither."""

    both: int
    first_only: int
    second_only: int
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.first_only + self.second_only + self.neither


def paired_counts(first: Decisions, second: Decisions) -> tuple[PairedCounts, int, int]:
    """The 2x2 table over the images both sides count, and how many each counts alone."""
    common, i, j = np.intersect1d(first.images, second.images, return_indices=True)
    a, b = first.correct[i], second.correct[j]
    table = PairedCounts(
        int(np.count_nonzero(a & b)),
        int(np.count_nonzero(a & ~b)),
        int(np.count_nonzero(~a & b)),
        int(np.count_nonzero(~a & ~b)),
    )
    return table, first.n - len(common), second.n - len(common)

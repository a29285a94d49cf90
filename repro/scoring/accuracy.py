"""Benchmark accuracies from stored predictions, as counts (pipeline stage: scoring).

Every benchmark score is a ``repro.base.stats.Count`` (k correct of n images; ``.rate`` is a
FRACTION in [0, 1], ``.interval()`` its Wilson 95% interval). Benchmarks, by name
(``BENCHMARKS``; ``score(name, predictions)``):

- ``imagenet``, ``imagenet_top5``: ImageNet val (50,000 images). True labels come from the
  ``imagenet-x`` package annotations (``annotations/filename_label.csv``: the standard ILSVRC2012
  validation labels, keyed by file name); a ``label`` column, when present, must agree.
- ``imagenet-v2``, ``imagenet-sketch`` (+ ``_top5``): labels from the ``label`` column.
- ``imagenet-a``, ``imagenet-r``: top-1 over the 200 classes of the variant; predictions must
  already be restricted to those classes (``predictions_from_probabilities(...,
  class_subset=...)``), and the ``label`` column must lie in the subset.
- ``real``, ``real_last_batch``: ImageNet-ReaL (``repro.scoring.real``): the standard metric
  and the published last-batch variant (METHODS.md quirk Q1).

Top-5 needs the ``top5_class_*`` columns.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from repro.base.errors import DataError
from repro.base.registry import Registry
from repro.base.stats import Count
from repro.scoring.predictions import UNLABELLED, Predictions

N_VAL = 50_000
VAL_NAME = re.compile(r"^ILSVRC2012_val_(\d{8})\.JPEG$")


def annotation_path(name: str) -> Path:
    """A file shipped in the ``imagenet_x`` package's ``annotations/`` folder.

    The package is located, not imported: importing it pulls in tqdm, scipy and its plotting code.
    """
    spec = importlib.util.find_spec("imagenet_x")
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            "the imagenet-x package (imagenet-x==0.0.7) is not installed; it ships the "
            "ImageNet-X annotations, ImageNet val labels and ReaL labels"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "annotations" / name
    if not path.is_file():
        raise DataError(
            f"{path}: missing from the installed imagenet-x package (expected version 0.0.7)"
        )
    return path


def val_file_name(number: int) -> str:
    """ImageNet validation file name of image ``number`` (1-based, as in the ILSVRC files)."""
    return f"ILSVRC2012_val_{number:08d}.JPEG"


@lru_cache(maxsize=1)
def val_file_names() -> tuple[str, ...]:
    """The 50,000 validation file names, by image number (index i is image i + 1)."""
    return tuple(val_file_name(i + 1) for i in range(N_VAL))


def val_index(file_names: np.ndarray, source: str = "<predictions>") -> np.ndarray:
    """0-based image numbers of validation file names (DataError naming the row otherwise)."""
    idx = np.empty(len(file_names), dtype=np.int64)
    for i, name in enumerate(file_names):
        m = VAL_NAME.match(name)
        number = int(m.group(1)) if m else 0
        if not 1 <= number <= N_VAL:
            raise DataError(
                f"{source}: row {i + 1} (line {i + 2}): unknown file_name {name!r} "
                f"(expected an ImageNet validation image ILSVRC2012_val_00000001.JPEG .. "
                f"ILSVRC2012_val_{N_VAL:08d}.JPEG)"
            )
        idx[i] = number - 1
    return idx


@lru_cache(maxsize=1)
def imagenet_val_labels() -> np.ndarray:
    """(50000,) int64 true class of validation image i + 1 (from the imagenet-x annotations)."""
    import pandas as pd

    path = annotation_path("filename_label.csv")
    frame = pd.read_csv(path)
    idx = val_index(frame["file_name"].to_numpy(dtype=object), str(path))
    labels = np.full(N_VAL, -1, dtype=np.int64)
    labels[idx] = frame["label"].to_numpy(dtype=np.int64)
    if (labels < 0).any() or len(frame) != N_VAL:
        raise DataError(f"{path}: expected one label for each of the {N_VAL} validation images")
    labels.setflags(write=False)
    return labels


@lru_cache(maxsize=1)
def torchvision_val_order() -> np.ndarray:
    """0-based image numbers in torchvision's ``ImageNet(split='val')`` order.

    Class folders in class-index order, files sorted by name within a folder."""
    labels = imagenet_val_labels()
    order = np.lexsort((np.arange(N_VAL), labels))
    order.setflags(write=False)
    return order


def imagenet_val(
    predictions: Predictions, *, require_complete: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(image numbers (0-based), true labels) of the prediction rows.

    Checked against the val set."""
    idx = val_index(predictions.file_name, predictions.source)
    truth = imagenet_val_labels()[idx]
    if require_complete and len(idx) != N_VAL:
        have = np.zeros(N_VAL, dtype=bool)
        have[idx] = True
        first = int(np.flatnonzero(~have)[0])
        raise DataError(
            f"{predictions.source}: predictions for {len(idx)} of the {N_VAL} ImageNet "
            f"validation images (first missing: {val_file_name(first + 1)}); "
            "expected all of them"
        )
    if predictions.label is not None:
        bad = (predictions.label != truth) & (predictions.label != UNLABELLED)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"{predictions.source}: row {i + 1} (line {i + 2}): label = "
                f"{predictions.label[i]} but {predictions.file_name[i]} is class {truth[i]} "
                "in the ImageNet validation labels"
            )
    return idx, truth


def top1(predicted: np.ndarray, labels: np.ndarray) -> Count:
    """Top-1 count: predicted class equals the label."""
    return Count(
        int(np.count_nonzero(np.asarray(predicted) == np.asarray(labels))), int(len(labels))
    )


def top5(top5_classes: np.ndarray, labels: np.ndarray) -> Count:
    """Top-5 count: the label is among the five classes of its row."""
    hit = (np.asarray(top5_classes) == np.asarray(labels)[:, None]).any(axis=1)
    return Count(int(np.count_nonzero(hit)), int(len(labels)))


def _need_label(p: Predictions, benchmark: str) -> np.ndarray:
    if p.label is None:
        raise DataError(
            f"{p.source}: benchmark {benchmark} needs a 'label' column with the true class"
        )
    missing = p.label == UNLABELLED
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise DataError(
            f"{p.source}: row {i + 1} (line {i + 2}): label = {UNLABELLED} (unlabelled), but "
            f"benchmark {benchmark} needs the true class of every image"
        )
    return p.label


def _need_top5(p: Predictions, benchmark: str) -> np.ndarray:
    if p.top5 is None:
        raise DataError(
            f"{p.source}: benchmark {benchmark} needs the top-5 columns "
            "top5_class_1 .. top5_class_5"
        )
    return p.top5


def _imagenet(p: Predictions) -> Count:
    _, truth = imagenet_val(p)
    return top1(p.predicted_class, truth)


def _imagenet_top5(p: Predictions) -> Count:
    t5 = _need_top5(p, "imagenet_top5")
    _, truth = imagenet_val(p)
    return top5(t5, truth)


def _labelled(name: str, k: int) -> Callable[[Predictions], Count]:
    def score(p: Predictions) -> Count:
        label = _need_label(p, name)
        return top1(p.predicted_class, label) if k == 1 else top5(_need_top5(p, name), label)

    score.__doc__ = f"{name}: top-{k} against the label column"
    return score


def subset_top1(p: Predictions, subset_name: str) -> Count:
    """Top-1 over a 200-class label space.

    Rows must predict, and be labelled with, subset classes."""
    from repro.datasets.class_subsets import subset

    classes = np.asarray(subset(subset_name))
    label = _need_label(p, subset_name)
    for column, values in (("predicted_class", p.predicted_class), ("label", label)):
        outside = ~np.isin(values, classes)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise DataError(
                f"{p.source}: row {i + 1} (line {i + 2}): {column} = {values[i]} is not one of "
                f"the 200 {subset_name} classes (expected predictions restricted to the subset)"
            )
    return top1(p.predicted_class, label)


# name -> scorer; the ReaL scorers are lazy references, since repro.scoring.real builds on this
# module
BENCHMARKS: Registry[Callable[[Predictions], Count]] = Registry("benchmark")
_SCORERS: dict[str, Callable[[Predictions], Count] | str] = {
    "imagenet": _imagenet,
    "imagenet_top5": _imagenet_top5,
    "imagenet-v2": _labelled("imagenet-v2", 1),
    "imagenet-v2_top5": _labelled("imagenet-v2", 5),
    "imagenet-sketch": _labelled("imagenet-sketch", 1),
    "imagenet-sketch_top5": _labelled("imagenet-sketch", 5),
    "imagenet-a": lambda p: subset_top1(p, "imagenet_a"),
    "imagenet-r": lambda p: subset_top1(p, "imagenet_r"),
    "real": "repro.scoring.real:real_count",
    "real_last_batch": "repro.scoring.real:real_last_batch_count",
}
for _name, _scorer in _SCORERS.items():
    BENCHMARKS.register(_name, _scorer)


def score(benchmark: str, predictions: Predictions) -> Count:
    """The benchmark's count for these predictions (see the module docstring for the names)."""
    return BENCHMARKS.get(benchmark)(predictions)

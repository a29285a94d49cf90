"""Benchmarks stage (torch): the decision rule of classification (``Classify``).

From the logits of each image to per-image prediction records, the one format every generalization
benchmark is stored in; the scorer is ``repro.scoring.benchmarks.score_classify``.

A record is a row of ``repro.scoring.predictions`` (``PREDICTION_COLUMNS``): the ImageNet-X
prediction row (``file_name, predicted_class, predicted_probability``) plus the top-5 classes
(``top5_class_1`` .. ``top5_class_5``, best first) and the true ``label``, so accuracy, ReaL,
ImageNet-X factor errors and per-class errors can all be recomputed from stored predictions
without running the model again (``repro.scoring.predictions.from_records`` validates them).

With ``class_subset`` (ImageNet-A / -R: 200 class indices) the decision is the argmax over
those logits only (``eval_imagenet_ood.py``); the classes are still reported as ImageNet-1k
indices and ``predicted_probability`` is the full 1000-way softmax probability of the chosen
class (the convention of ``predictions_from_probabilities``). Ties go to the lower class index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from repro.base.errors import ConfigError, ReproError
from repro.base.results import ConditionCount, Counts
from repro.datasets.base import ImageBatch, ImageSource
from repro.scoring.predictions import PREDICTION_COLUMNS, TOP5_COLUMNS

VERSION = "1"
#: Columns of a prediction record, in order. ``label`` is -1 for an unlabelled item of a
#: labelled source, and absent when no item of the source has a label.
RECORD_COLUMNS: tuple[str, ...] = PREDICTION_COLUMNS

TOP_K = 5


def _check_subset(class_subset: Sequence[int] | None, n_classes: int) -> torch.Tensor | None:
    if class_subset is None:
        return None
    idx = [int(i) for i in class_subset]
    if not idx:
        raise ConfigError("class_subset: expected at least one class index, got an empty list")
    bad = [i for i in idx if not 0 <= i < n_classes]
    if bad:
        raise ConfigError(
            f"class_subset: index {bad[0]} out of range for a model with {n_classes} logits"
        )
    if len(set(idx)) != len(idx):
        dup = next(i for i in idx if idx.count(i) > 1)
        raise ConfigError(f"class_subset: index {dup} appears more than once")
    return torch.tensor(sorted(idx), dtype=torch.int64)  # sorted: ties go to the lower class index


def to_float(images: np.ndarray, device: str | torch.device) -> torch.Tensor:
    """uint8 (N, 3, H, W) -> float32 in [0, 1] on ``device`` (ToTensor's ``x / 255``).

    The uint8 array travels to the device first (4x less transfer than float)."""
    return torch.from_numpy(np.ascontiguousarray(images)).to(device).float().div_(255)


class Classify:
    """Classification of every image: the decision rule of the generalization benchmarks.

    Run by ``repro.measurements.loop`` on the images as they are: top-1 and top-5 counts among the
    labelled items (label >= 0) and one prediction record per image (``RECORD_COLUMNS``); on a
    multi-part dataset (ImageNet-C) the top-1 count of each part and no records (95 x 50,000
    predictions per model would dwarf the rest of the store). The model maps float input in [0, 1]
    to logits (normalization inside); ``class_subset`` restricts the decision to those classes (see
    the module docstring)."""

    version = VERSION

    def __init__(
        self,
        source: ImageSource,
        model: Any = None,
        *,
        conditions: Sequence[str] = (),
        class_subset: Sequence[int] | None = None,
        **_: Any,
    ):
        self.source = source
        self.class_subset = class_subset
        self.subset: torch.Tensor | None = None
        self.subset_checked = False
        self.tally = Counts(conditions)
        self.records: list[dict[str, Any]] = []

    def labels(self, batch: ImageBatch) -> np.ndarray:
        return np.asarray(batch.labels, dtype=np.int64)

    def add(
        self, condition: str | None, batch: ImageBatch, labels: np.ndarray, logits: torch.Tensor
    ) -> np.ndarray:
        logits = logits.float()
        if logits.ndim != 2 or logits.shape[0] != len(labels):
            raise ReproError(
                f"{self.source.name}: model returned logits of shape {tuple(logits.shape)}, "
                f"expected ({len(labels)}, n_classes)"
            )
        if not self.subset_checked:
            self.subset = _check_subset(self.class_subset, logits.shape[1])
            self.subset_checked = True
        subset = self.subset
        probs = torch.softmax(logits, dim=1)
        scores = logits if subset is None else logits.index_select(1, subset.to(logits.device))
        # rank by logits (probabilities can tie after rounding); stable descending sort:
        # exact ties keep the lower class index first
        order = torch.sort(scores, dim=1, descending=True, stable=True).indices[:, :TOP_K]
        top_i = order if subset is None else subset.to(order.device)[order]
        top_p_np = probs.gather(1, top_i[:, :1]).squeeze(1).cpu().numpy()
        top_i_np = top_i.cpu().numpy()
        labelled = labels >= 0
        hit1 = top_i_np[:, 0] == labels
        if condition is not None:  # a part of a multi-part dataset
            self.tally.add(condition, int((hit1 & labelled).sum()), int(labelled.sum()))
            return top_i_np[:, 0]
        hit5 = (top_i_np == labels[:, None]).any(axis=1)
        self.tally.add("top1", int((hit1 & labelled).sum()), int(labelled.sum()))
        self.tally.add("top5", int((hit5 & labelled).sum()), int(labelled.sum()))
        for name, row, p, y in zip(batch.names, top_i_np, top_p_np, labels, strict=True):
            rec: dict[str, Any] = {
                "file_name": name,
                "predicted_class": int(row[0]),
                "predicted_probability": float(p),
            }
            rec.update({col: int(c) for col, c in zip(TOP5_COLUMNS, row, strict=False)})
            rec["label"] = int(y)
            self.records.append(rec)
        return top_i_np[:, 0]

    def counts(self) -> list[ConditionCount]:
        return self.tally.counts()

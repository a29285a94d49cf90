"""Benchmarks stage (torch): batched classification of an ImageSource into per-image prediction
records, the one format every generalization benchmark is stored in.

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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from repro.base.errors import ConfigError, ReproError
from repro.base.results import ConditionCount, ProbeResult
from repro.datasets.base import ImageSource
from repro.scoring.predictions import PREDICTION_COLUMNS, TOP5_COLUMNS

VERSION = "1"
MEASUREMENT = "classify"

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
        raise ConfigError(f"class_subset: index {bad[0]} out of range for a model with {n_classes} logits")
    if len(set(idx)) != len(idx):
        dup = next(i for i in idx if idx.count(i) > 1)
        raise ConfigError(f"class_subset: index {dup} appears more than once")
    return torch.tensor(sorted(idx), dtype=torch.int64)  # sorted: ties go to the lower class index


def to_float(images: np.ndarray, device: str | torch.device) -> torch.Tensor:
    """uint8 (N, 3, H, W) -> float32 in [0, 1] on ``device`` (ToTensor's ``x / 255``).

    The uint8 array travels to the device first (4x less transfer than float)."""
    return torch.from_numpy(np.ascontiguousarray(images)).to(device).float().div_(255)


def run(
    model: torch.nn.Module,
    source: ImageSource,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 256,
    seed: int = 0,
    progress: Callable[[int], Any] | None = None,
    class_subset: Sequence[int] | None = None,
    amp: bool = False,
) -> ProbeResult:
    """Classify every image of ``source``; return per-image records and top-1/top-5 counts.

    The model maps float input in [0, 1] to logits (normalization inside). Conditions
    ``top1`` and ``top5`` count correct items among the labelled ones (label >= 0); the
    headline ``value`` is top-1 accuracy as a fraction in [0, 1] (the scoring convention). ``seed`` is accepted for the common
    interface but unused (inference is deterministic; the result records ``seed=None``).
    ``amp`` runs the forward pass under autocast (float16 on CUDA, bfloat16 on CPU); off by
    default, because it can move predictions. ``progress`` is called with the cumulative
    number of images done after each batch.
    """
    del seed
    if batch_size <= 0:
        raise ConfigError(f"batch_size: expected a positive integer, got {batch_size}")
    device = torch.device(device)
    was_training = model.training
    model.eval()
    records: list[dict[str, Any]] = []
    k1 = k5 = n_labelled = 0
    subset: torch.Tensor | None = None
    subset_checked = False
    try:
        with torch.inference_mode():
            for batch in source.batches(batch_size):
                x = to_float(batch.images, device)
                if amp:
                    dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
                    with torch.autocast(device_type=device.type, dtype=dtype):
                        logits = model(x)
                else:
                    logits = model(x)
                logits = logits.float()
                if logits.ndim != 2 or logits.shape[0] != len(x):
                    raise ReproError(f"{source.name}: model returned logits of shape {tuple(logits.shape)}, "
                                     f"expected ({len(x)}, n_classes)")
                if not subset_checked:
                    subset = _check_subset(class_subset, logits.shape[1])
                    subset_checked = True
                probs = torch.softmax(logits, dim=1)
                scores = logits if subset is None else logits.index_select(1, subset.to(logits.device))
                # rank by logits (probabilities can tie after rounding); stable descending sort:
                # exact ties keep the lower class index first
                order = torch.sort(scores, dim=1, descending=True, stable=True).indices[:, :TOP_K]
                top_i = order if subset is None else subset.to(order.device)[order]
                top_p_np = probs.gather(1, top_i[:, :1]).squeeze(1).cpu().numpy()
                top_i_np = top_i.cpu().numpy()
                labels = np.asarray(batch.labels, dtype=np.int64)
                labelled = labels >= 0
                hit1 = top_i_np[:, 0] == labels
                hit5 = (top_i_np == labels[:, None]).any(axis=1)
                k1 += int((hit1 & labelled).sum())
                k5 += int((hit5 & labelled).sum())
                n_labelled += int(labelled.sum())
                for name, row, p, y in zip(batch.names, top_i_np, top_p_np, labels, strict=True):
                    rec: dict[str, Any] = {"file_name": name, "predicted_class": int(row[0]),
                                           "predicted_probability": float(p)}
                    rec.update({col: int(c) for col, c in zip(TOP5_COLUMNS, row, strict=False)})
                    rec["label"] = int(y)
                    records.append(rec)
                if progress is not None:
                    progress(len(records))
    finally:
        model.train(was_training)
    if records and n_labelled == 0:  # an unlabelled source: no label column (valid predictions file)
        for rec in records:
            del rec["label"]
    conditions = [ConditionCount("top1", k1, n_labelled), ConditionCount("top5", k5, n_labelled)]
    value = k1 / n_labelled if n_labelled else None
    values: dict[str, float | None] = {
        "top1": value,
        "top5": k5 / n_labelled if n_labelled else None,
    }
    return ProbeResult(measurement=MEASUREMENT, version=VERSION, seed=None, conditions=conditions,
                       value=value, values=values, records=records)

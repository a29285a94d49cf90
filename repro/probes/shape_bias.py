"""Probe stage, shape bias: run a model on cue-conflict images (model-vs-human's 1,280
style-transfer images, 224 px) and record one 16-class decision per image.

Model work only: ToTensor (uint8 -> [0, 1]; normalization is inside the model), no resize,
softmax over the 1000 logits. The decision mapping, the texture/shape parsing and the score
are the pure functions of ``repro.scoring.shape_bias``. The per-trial rows use
model-vs-human's CSV schema, so ``write_decisions_csv`` output can be re-scored offline
(``python -m repro score shape-bias FILE.csv``) and compared with the human subjects.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro.base.errors import DataError
from repro.base.results import ConditionCount, ProbeResult
from repro.datasets.categories16 import CategoryMapping, get_mapping
from repro.scoring.shape_bias import (
    decision_from_probabilities,
    decision_rows,
    shape_bias,
    shape_class,
    texture_class,
)
from repro.scoring.shape_bias import write_decisions_csv as _write_rows

if TYPE_CHECKING:  # torch is imported inside run()
    from torch import nn

    from repro.datasets.base import ImageSource

VERSION = "1"
MEASUREMENT = "shape_bias"


def _shape_of(name: str, label: int, categories: tuple[str, ...], source_name: str) -> str:
    """The shape class: the label (index into the 16 categories) or, without one, the name's first token."""
    parsed = shape_class(name)
    if label >= 0:
        if label >= len(categories):
            raise DataError(f"{source_name}: image {name}: label {label} is not a 16-class index (0..{len(categories) - 1})")
        if parsed in categories and parsed != categories[label]:
            raise DataError(
                f"{source_name}: image {name}: label {label} ({categories[label]}) disagrees with the "
                f"shape class in its name ({parsed})"
            )
        return categories[label]
    if parsed not in categories:
        raise DataError(
            f"{source_name}: image {name}: cannot read a shape class from the name; expected "
            "<shape><n>-<texture><n>.png with 16-class names (e.g. airplane1-bicycle2.png)"
        )
    return parsed


def run(
    model: nn.Module,
    source: ImageSource,
    *,
    device: str = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], Any] | None = None,
    subj: str | None = None,
    mapping: CategoryMapping | str | None = None,
) -> ProbeResult:
    """Decisions of ``model`` on every cue-conflict image of ``source``, and the shape bias.

    ``subj`` names the model in the per-trial rows (default: the model's class name).
    Returns counts: ``shape_bias`` (k = shape decisions, n = shape + texture decisions; its
    rate is the shape bias), ``shape`` and ``texture`` (k of the n conflict trials).
    """
    import torch

    m = get_mapping() if mapping is None else (get_mapping(mapping) if isinstance(mapping, str) else mapping)
    categories = m.categories
    torch.manual_seed(seed)
    model = model.eval().to(device)
    subj = subj or type(model).__name__
    records: list[dict[str, Any]] = []
    done = 0
    with torch.inference_mode():
        for batch in source.batches(batch_size):
            x = torch.from_numpy(batch.images).to(device).float().div_(255.0)
            logits = model(x)
            if logits.ndim != 2 or logits.shape[1] != 1000:
                raise ValueError(f"model must return (N, 1000) logits, got {tuple(logits.shape)}")
            probs = torch.softmax(logits.float(), dim=1).cpu().numpy()
            decisions = decision_from_probabilities(probs, m)
            names = [os.path.basename(n) for n in batch.names]
            shapes = [_shape_of(n, int(lab), categories, source.name) for n, lab in zip(names, batch.labels.tolist(), strict=True)]
            for name in names:
                if texture_class(name) not in categories:
                    raise DataError(
                        f"{source.name}: image {name}: cannot read a texture class from the name; expected "
                        "<shape><n>-<texture><n>.png with 16-class names (e.g. airplane1-bicycle2.png)"
                    )
            for row, shape in zip(decision_rows(decisions, names, subj=subj), shapes, strict=True):
                row["trial"] = len(records) + 1
                row["category"] = shape
                records.append(row)
            done += len(names)
            if progress is not None:
                progress(done)
    score = shape_bias(records)
    decided = score.shape + score.texture
    return ProbeResult(
        measurement=MEASUREMENT,
        version=VERSION,
        seed=seed,
        conditions=[
            ConditionCount("shape_bias", score.shape, decided),
            ConditionCount("shape", score.shape, score.n),
            ConditionCount("texture", score.texture, score.n),
        ],
        value=score.shape_bias,
        values={"n": float(score.n), "shape": float(score.shape), "texture": float(score.texture)},
        records=records,
    )


def write_decisions_csv(result: ProbeResult, path: str | os.PathLike[str]) -> Path:
    """Write a shape-bias ProbeResult's per-trial rows in model-vs-human's CSV schema."""
    if result.measurement != MEASUREMENT:
        raise ValueError(f"not a shape-bias result: {result.measurement!r}")
    return _write_rows(result.records, path)

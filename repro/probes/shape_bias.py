"""Probe stage, shape bias: the decision rule of the shape-bias measurement.

One 16-class decision per cue-conflict image (model-vs-human's 1,280 style-transfer images, 224 px,
shown as they are by the probe loop, ``repro.measurements.loop``).

Model work only: the images in [0, 1] (normalization is inside the model), no resize, softmax
over the 1000 logits. The decision mapping, the texture/shape parsing and the score are the
pure functions of ``repro.scoring.shape_bias``. The per-trial rows use
model-vs-human's CSV schema, so ``write_decisions_csv`` output can be re-scored offline
(``python -m repro score shape-bias FILE.csv``) and compared with the human subjects.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from repro.base.errors import DataError
from repro.base.results import ConditionCount, ProbeResult
from repro.datasets.categories16 import CategoryMapping, get_mapping
from repro.scoring.shape_bias import decision_rows, shape_class, texture_class
from repro.scoring.shape_bias import write_decisions_csv as _write_rows

if TYPE_CHECKING:  # torch is imported inside ShapeBias.add
    from repro.datasets.base import ImageBatch, ImageSource

VERSION = "1"
MEASUREMENT = "shape_bias"


def _shape_of(name: str, label: int, categories: tuple[str, ...], source_name: str) -> str:
    """The shape class of an image: its label, or without one the first token of its name.

    The label is an index into the 16 categories."""
    parsed = shape_class(name)
    if label >= 0:
        if label >= len(categories):
            raise DataError(
                f"{source_name}: image {name}: label {label} is not a 16-class index "
                f"(0..{len(categories) - 1})"
            )
        if parsed in categories and parsed != categories[label]:
            raise DataError(
                f"{source_name}: image {name}: label {label} ({categories[label]}) disagrees with "
                f"the shape class in its name ({parsed})"
            )
        return categories[label]
    if parsed not in categories:
        raise DataError(
            f"{source_name}: image {name}: cannot read a shape class from the name; expected "
            "<shape><n>-<texture><n>.png with 16-class names (e.g. airplane1-bicycle2.png)"
        )
    return parsed


class ShapeBias:
    """The shape-bias probe's decision rule: one 16-class decision per cue-conflict image.

    Softmax over the 1000 logits, mean probability per category, argmax; each decision is kept as
    a per-trial row in model-vs-human's schema, named ``subj`` (default: the model's class name);
    the shape and texture class of each image come from its label and name (checked against each
    other). The counts are the scorer's (``repro.scoring.shape_bias.score``:
    shape / (shape + texture))."""

    version = VERSION

    def __init__(
        self,
        source: ImageSource,
        model: Any,
        *,
        subj: str | None = None,
        mapping: CategoryMapping | str | None = None,
        **_: Any,
    ):
        self.source = source
        self.mapping = (
            get_mapping()
            if mapping is None
            else (get_mapping(mapping) if isinstance(mapping, str) else mapping)
        )
        self.subj = subj or type(model).__name__
        self.records: list[dict[str, Any]] = []

    def labels(self, batch: ImageBatch) -> tuple[list[str], list[str]]:
        """(image names, shape classes) of a batch.

        A one-line DataError for an image whose label, shape or texture class cannot be read."""
        categories = self.mapping.categories
        names = [os.path.basename(n) for n in batch.names]
        shapes = [
            _shape_of(n, int(lab), categories, self.source.name)
            for n, lab in zip(names, batch.labels.tolist(), strict=True)
        ]
        for name in names:
            if texture_class(name) not in categories:
                raise DataError(
                    f"{self.source.name}: image {name}: cannot read a texture class from the name; "
                    "expected <shape><n>-<texture><n>.png with 16-class names (e.g. "
                    "airplane1-bicycle2.png)"
                )
        return names, shapes

    def add(
        self,
        condition: str | None,
        batch: ImageBatch,
        labels: tuple[list[str], list[str]],
        logits: Any,
    ) -> np.ndarray:
        import torch

        if logits.ndim != 2 or logits.shape[1] != 1000:
            raise ValueError(f"model must return (N, 1000) logits, got {tuple(logits.shape)}")
        probs = torch.softmax(logits.float(), dim=1).cpu().numpy()
        decisions = np.argmax(
            self.mapping.category_scores(probs), axis=1
        )  # decision_from_probabilities
        names, shapes = labels
        rows = decision_rows([self.mapping.categories[d] for d in decisions], names, subj=self.subj)
        for row, shape in zip(rows, shapes, strict=True):
            row["trial"] = len(self.records) + 1
            row["category"] = shape
            self.records.append(row)
        return decisions

    def counts(self) -> list[ConditionCount]:
        return []


def write_decisions_csv(result: ProbeResult, path: str | os.PathLike[str]) -> Path:
    """Write a shape-bias ProbeResult's per-trial rows in model-vs-human's CSV schema."""
    if result.measurement != MEASUREMENT:
        raise ValueError(f"not a shape-bias result: {result.measurement!r}")
    return _write_rows(result.records, path)

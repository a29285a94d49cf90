"""Benchmark, Stylized-ImageNet (model work): the decision rule of 16-class decisions.

On model-vs-human's stylized images, a decision is correct when it is the image's category
(``top1_acc/stylized``; the scorer is ``repro.scoring.benchmarks.score_stylized``).

Same decision rule as the shape-bias probe (softmax over 1000 classes, mean probability per
16-class category, argmax; ``repro.scoring.shape_bias.decision_from_probabilities``), but
scored against the label (the category index of ``repro.datasets.specs.CATEGORIES16``),
since stylized file names carry no texture class.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from repro.base.errors import DataError
from repro.base.results import ConditionCount, Counts
from repro.datasets.categories16 import get_mapping

VERSION = "1"


class Stylized:
    """One 16-class decision per image, right when it is the image's category.

    One record per image (file name, category, decision)."""

    version = VERSION

    def __init__(self, source: Any, model: Any = None, **_: Any):
        self.source = source
        self.mapping = get_mapping()
        self.tally = Counts(("top1",))
        self.records: list[dict[str, Any]] = []

    def labels(self, batch: Any) -> np.ndarray:
        n = len(self.mapping.categories)
        for name, label in zip(batch.names, batch.labels.tolist(), strict=True):
            if not 0 <= label < n:
                raise DataError(
                    f"{self.source.name}: image {name}: label {label} is not a 16-class index "
                    f"(0..{n - 1})"
                )
        return np.asarray(batch.labels, dtype=np.int64)

    def add(self, condition: Any, batch: Any, labels: np.ndarray, logits: Any) -> np.ndarray:
        import torch

        probs = torch.softmax(logits.float(), dim=1).cpu().numpy()
        decisions = np.argmax(
            self.mapping.category_scores(probs), axis=1
        )  # decision_from_probabilities
        categories = self.mapping.categories
        k = 0
        for name, label, decision in zip(
            batch.names, labels.tolist(), decisions.tolist(), strict=True
        ):
            k += categories[decision] == categories[label]
            self.records.append(
                {"file_name": name, "category": categories[label], "decision": categories[decision]}
            )
        self.tally.add("top1", int(k), len(batch.names))
        return decisions

    def counts(self) -> list[ConditionCount]:
        return self.tally.counts()

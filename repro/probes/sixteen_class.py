"""Probe stage, the 16-class protocol of Subramanian et al. 2023: its decision rules.

The protocol is the critical band's origin, a named variant next to the study's 1000-class
ImageNet-val protocol (which stays the default); ``repro.measurements.loop`` runs its decision
rules.

The decision is the shape-bias probe's: softmax over the 1000 logits (float32), then the
MEAN probability over each of the 16 model-vs-human categories' ImageNet classes
(``repro.datasets.categories16``), argmax (ties to the first category). Labels are category
indices (``repro.datasets.specs.CATEGORIES16``), as the GraySplit/CBMSplit readers give them.
Images go in as they are (224 px, no resize); the model normalizes inside (its zoo spec).

- ``Sixteen``: correct decisions per condition (``spectral_16``: the spectral probe's clean + 22
  filtered conditions on GraySplit);
- ``SixteenRecorded``: the same and one record per (image, condition), so that the cells can be
  compared image by image with the pre-made ones (``critical_band_16``: the 29 conditions of
  ``repro.probes.critical_band`` synthesised by our code on GraySplit; ``critical_band_16_matched``:
  one named condition per image);
- ``Premade``: the authors' pre-made CBMSplit stimuli, classified as they are; each file is one
  (SD, band) cell, read from its name; the SD-0 files of all bands pool into ``sd=0``. About 30
  images per cell over splits 0-4.

Each result is the usual ProbeResult (conditions named as the 1000-class probes name them),
under its own measurement name, so a store never mixes the two protocols.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from repro.base.errors import DataError
from repro.base.results import ConditionCount, Counts
from repro.datasets.base import ImageBatch, ImageSource
from repro.datasets.categories16 import CategoryMapping, get_mapping
from repro.datasets.critical_band_stimuli import cbm_condition
from repro.scoring.critical_band import CLEAN, condition_name

from . import critical_band as cb
from . import spectral as sp

# the 16-class decision and the grids' bookkeeping; 2: the synthesised grid keeps per-image records
OWN_VERSION = "2"
# what a stored 16-class record depends on (``repro.measurements`` reads it): this module and the
# noise synthesis / spectral filters it reuses, so a change of either makes stored records stale
VERSION = f"16c{OWN_VERSION}.cb{cb.VERSION}.sp{sp.VERSION}"


def _mapping(mapping: CategoryMapping | str | None) -> CategoryMapping:
    if mapping is None:
        return get_mapping()
    return get_mapping(mapping) if isinstance(mapping, str) else mapping


@torch.no_grad()
def decide(logits: torch.Tensor, mapping: CategoryMapping) -> np.ndarray:
    """Category indices (N,) from (N, 1000) logits: float32 softmax, mean per category, argmax.

    Exactly the shape-bias probe's ``decision_from_probabilities``."""
    if logits.ndim != 2 or logits.shape[1] != 1000:
        raise ValueError(f"model must return (N, 1000) logits, got {tuple(logits.shape)}")
    probs = torch.softmax(logits.float(), dim=1).cpu().numpy()
    return np.argmax(mapping.category_scores(probs), axis=1)


def _records(
    names: list[str], condition: str, labels: np.ndarray, decisions: np.ndarray, m: CategoryMapping
) -> list[dict[str, object]]:
    """One record per image of a synthesised condition (name, condition, category, decision)."""
    return [
        {
            "imagename": n,
            "condition": condition,
            "category": m.categories[y],
            "object_response": m.categories[d],
        }
        for n, y, d in zip(names, labels.tolist(), decisions.tolist(), strict=True)
    ]


class Sixteen:
    """Correct 16-class decisions per condition (in the order given).

    Every item needs a category index as its label."""

    version = f"16c{OWN_VERSION}"
    keep_records = False

    def __init__(
        self,
        source: ImageSource,
        model: Any = None,
        *,
        conditions: Sequence[str] = (),
        mapping: CategoryMapping | str | None = None,
        **_: Any,
    ):
        self.source = source
        self.mapping = _mapping(mapping)
        self.tally = Counts(conditions)
        self.records: list[dict[str, object]] = []

    def labels(self, batch: ImageBatch) -> np.ndarray:
        n = len(self.mapping.categories)
        labels = np.asarray(batch.labels, dtype=np.int64)
        bad = [name for name, y in zip(batch.names, labels, strict=True) if not 0 <= y < n]
        if bad:
            raise DataError(
                f"{self.source.name}: items without a 16-class label (0..{n - 1}), e.g. {bad[:3]}; "
                "the 16-class protocol reads GraySplit/CBMSplit (labels from the file names)"
            )
        return labels

    def add(
        self, condition: str, batch: ImageBatch, labels: np.ndarray, logits: torch.Tensor
    ) -> np.ndarray:
        decisions = decide(logits, self.mapping)
        self.tally.add(condition, int((decisions == labels).sum()), int(labels.shape[0]))
        if self.keep_records:
            self.records += _records(batch.names, condition, labels, decisions, self.mapping)
        return decisions

    def counts(self) -> list[ConditionCount]:
        return self.tally.counts()


class SixteenRecorded(Sixteen):
    """``Sixteen``, and one record per (image, condition): name, condition, category, decision."""

    keep_records = True


def premade_condition(name: str) -> tuple[str, float, int]:
    """(condition, SD, band) of a pre-made CBMSplit stimulus, read from its name.

    The condition is named as the 1000-class probe names it: ``sd=0`` for every SD-0 file
    (whatever its band), else ``f=<band>/sd=<sd>``."""
    sd, band = cbm_condition(name)
    return (CLEAN if sd == 0 else condition_name(band, sd)), sd, band


class Premade(Sixteen):
    """16-class correct decisions per (SD, band) cell of the pre-made CBMSplit stimuli.

    Each image's cell is read from its name; one record per image (name, condition, band, SD,
    category, decision), for comparisons image by image."""

    def add(
        self, condition: str | None, batch: ImageBatch, labels: np.ndarray, logits: torch.Tensor
    ) -> np.ndarray:
        decisions = decide(logits, self.mapping)
        m = self.mapping
        for name, label, decision in zip(
            batch.names, labels.tolist(), decisions.tolist(), strict=True
        ):
            cond, sd, band = premade_condition(name)
            self.tally.add(cond, int(decision == label), 1)
            self.records.append(
                {
                    "imagename": name,
                    "condition": cond,
                    "band": band,
                    "sd": sd,
                    "category": m.categories[label],
                    "object_response": m.categories[decision],
                }
            )
        return decisions

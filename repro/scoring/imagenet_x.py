"""ImageNet-X factor analysis from stored predictions (pipeline stage: scoring).

ImageNet-X (Idrissi et al., ICLR 2023) annotates ImageNet validation images with 16 factors
of variation (``FACTORS``: pose, background, ...). For a predictions file this module gives,
per factor, the accuracy on the images annotated with that factor, as a ``Count`` (k of n),
and the error ratio

    error_ratio(f) = (1 - acc_f) / (1 - acc_overall),

where acc_overall is the accuracy over all annotated images (the package's ``average``).
Error ratio > 1: the model fails more often when the factor is present.

Options, as in the ``imagenet_x`` package (``imagenet_x.aggregate``), whose semantics are
reproduced exactly (oracle-tested) but computed with NumPy from its shipped annotations:

- ``which``: ``"top"`` (the one most salient factor per image) or ``"multi"`` (every factor
  that applies);
- ``correctness``: ``"class"`` (top-1 equals the label), ``"metaclass"`` (the predicted class
  falls in the label's metaclass, 16 metaclasses + ``other``), ``"real_class"`` (top-1 in
  the image's ReaL label set; images with an EMPTY ReaL set count as errors, as in the
  package: they are not excluded as in the ReaL benchmark);
- ``filter_prototypes``: drop the 3,000 prototypical images used to train annotators
  (default True, as the package and the published tables);
- per-metaclass breakdown (``factor_accuracies_by_metaclass``).

Annotated images missing from the predictions are an error unless ``require_complete=False``
(then, as the package's inner join does, only the predicted images are scored).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from repro.base.errors import ConfigError, DataError
from repro.base.stats import Count
from repro.scoring.accuracy import N_VAL, annotation_path, val_file_name, val_index
from repro.scoring.predictions import Predictions

FACTORS: tuple[str, ...] = (
    "pose",
    "background",
    "pattern",
    "color",
    "smaller",
    "shape",
    "partial_view",
    "subcategory",
    "texture",
    "larger",
    "darker",
    "object_blocking",
    "person_blocking",
    "style",
    "brighter",
    "multiple_objects",
)
METACLASSES: tuple[str, ...] = (
    "device",
    "dog",
    "commodity",
    "bird",
    "structure",
    "covering",
    "wheeled_vehicle",
    "food",
    "equipment",
    "insect",
    "vehicle",
    "furniture",
    "primate",
    "vessel",
    "snake",
    "natural_object",
    "other",
)
WHICH = ("top", "multi")
CORRECTNESS = ("class", "metaclass", "real_class")


@dataclass(frozen=True)
class Annotations:
    """ImageNet-X validation annotations, one row per annotated image."""

    image_index: np.ndarray  # (M,) 0-based validation image number
    label: np.ndarray  # (M,) int64 class index
    factors: np.ndarray  # (M, 16) bool, columns in FACTORS order
    metaclass: np.ndarray  # (M,) int64 index into METACLASSES

    def __len__(self) -> int:
        return int(self.image_index.shape[0])


@lru_cache(maxsize=1)
def metaclass_of_class() -> np.ndarray:
    """(1000,) index into ``METACLASSES`` of each ImageNet class.

    The package's ``to_metaclass``: the 100-metaclass name when it is one of the 16 kept
    metaclasses, else ``other``."""
    path = annotation_path("imagenet_1k_classes_to_100_metaclasses.csv")
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    if len(rows) != 1000:
        raise DataError(f"{path}: {len(rows)} rows, expected 1000 (one per ImageNet class)")
    other = METACLASSES.index("other")
    out = np.array(
        [METACLASSES.index(r["name"]) if r["name"] in METACLASSES else other for r in rows],
        dtype=np.int64,
    )
    out.setflags(write=False)
    return out


@lru_cache(maxsize=1)
def prototype_images() -> frozenset[str]:
    path = annotation_path("prototypical_paths.csv")
    lines = path.read_text().split()
    if not lines or lines[0] != "file_name":
        raise DataError(f"{path}: expected a 'file_name' header")
    return frozenset(lines[1:])


@lru_cache(maxsize=4)
def load_annotations(which: str = "top", filter_prototypes: bool = True) -> Annotations:
    """The validation annotations shipped by the imagenet-x package (cached per process)."""
    if which not in WHICH:
        raise ConfigError(
            f"unknown ImageNet-X annotation set {which!r} (expected one of {', '.join(WHICH)})"
        )
    path = annotation_path(f"imagenet_x_val_{which}_factor.jsonl")
    names, labels, rows = [], [], []
    with path.open() as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                names.append(rec["file_name"])
                labels.append(int(rec["class"]))
                rows.append([int(rec[f]) for f in FACTORS])
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise DataError(
                    f"{path}: line {line_no}: not an ImageNet-X annotation ({exc!r})"
                ) from None
    file_name = np.array(names, dtype=object)
    keep = np.ones(len(names), dtype=bool)
    if filter_prototypes:
        protos = prototype_images()
        keep = np.fromiter((n not in protos for n in names), dtype=bool, count=len(names))
    idx = val_index(file_name[keep], str(path))
    label = np.asarray(labels, dtype=np.int64)[keep]
    factors = np.asarray(rows, dtype=bool)[keep]
    meta = metaclass_of_class()[label]
    for arr in (idx, label, factors, meta):
        arr.setflags(write=False)
    return Annotations(idx, label, factors, meta)


@dataclass(frozen=True)
class FactorAccuracies:
    """Per-factor counts for one model (one row of the package's accuracy table).

    overall: correct of all scored annotated images (the package's ``average``);
    factors: per factor, correct of the images annotated with it (n may be 0);
    worst_classes: mean accuracy over the images of the ``k`` worst classes (``worst_<k>_classes``).
    """

    overall: Count
    factors: dict[str, Count]
    worst_classes: dict[int, float] = field(default_factory=dict)

    def accuracy(self, factor: str) -> float:
        return self.factors[factor].rate

    def error_ratio(self, factor: str) -> float:
        """The error ratio (1 - acc_factor) / (1 - acc_overall).

        nan when the factor has no images, inf when the model makes no error at all."""
        base = 1.0 - self.overall.rate
        err = 1.0 - self.factors[factor].rate
        if np.isnan(err):
            return float("nan")
        return err / base if base > 0 else (float("inf") if err > 0 else float("nan"))

    def error_ratio_interval(self, factor: str, confidence: float = 0.95) -> tuple[float, float]:
        """Interval of the error ratio from the factor accuracy's Wilson interval.

        The overall error is held fixed (it rests on ~46k images, the factors on 40..16k)."""
        c = self.factors[factor]
        base = 1.0 - self.overall.rate
        if c.n == 0 or base <= 0:
            return float("nan"), float("nan")
        lo, hi = c.interval(confidence)
        return (1.0 - hi) / base, (1.0 - lo) / base

    @property
    def worst_factor(self) -> float:
        rates = [c.rate for c in self.factors.values() if c.n]
        return min(rates) if rates else float("nan")

    def as_row(self) -> dict[str, float]:
        """Accuracies in the published table layout.

        Columns: factors, worst_factor, average[, worst_k_classes]."""
        row = {f: c.rate for f, c in self.factors.items()}
        row["worst_factor"] = self.worst_factor
        row["average"] = self.overall.rate
        for k, v in self.worst_classes.items():
            row[f"worst_{k}_classes"] = v
        return row

    def as_json(self) -> dict[str, object]:
        return {
            "overall": self.overall.as_json(),
            "factors": {
                f: {**c.as_json(), "error_ratio": self.error_ratio(f)}
                for f, c in self.factors.items()
            },
        }


def _correct(
    predicted: np.ndarray, ann_rows: np.ndarray, ann: Annotations, correctness: str
) -> np.ndarray:
    label = ann.label[ann_rows]
    if correctness == "class":
        return predicted == label
    if correctness == "metaclass":
        return metaclass_of_class()[predicted] == ann.metaclass[ann_rows]
    if correctness == "real_class":
        from repro.scoring.real import real_correct

        return real_correct(ann.image_index[ann_rows], predicted)[1]
    raise ConfigError(
        f"unknown correctness {correctness!r} (expected one of {', '.join(CORRECTNESS)})"
    )


def _align(
    predictions: Predictions, ann: Annotations, require_complete: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(prediction rows, annotation rows) of the annotated images that have a prediction."""
    idx = val_index(predictions.file_name, predictions.source)
    row_of_image = np.full(N_VAL, -1, dtype=np.int64)
    row_of_image[idx] = np.arange(len(idx))
    pred_rows = row_of_image[ann.image_index]
    have = pred_rows >= 0
    if require_complete and not have.all():
        first = int(ann.image_index[np.flatnonzero(~have)[0]])
        raise DataError(
            f"{predictions.source}: no prediction for {int((~have).sum()):,} of the {len(ann):,} "
            f"ImageNet-X annotated images (first: {val_file_name(first + 1)}); expected "
            "predictions for all 50,000 validation images"
        )
    ann_rows = np.flatnonzero(have)
    if ann_rows.size == 0:
        raise DataError(
            f"{predictions.source}: none of the predicted images is ImageNet-X annotated"
        )
    return pred_rows[ann_rows], ann_rows


def _counts(correct: np.ndarray, factors: np.ndarray) -> dict[str, Count]:
    k = (factors & correct[:, None]).sum(axis=0)
    n = factors.sum(axis=0)
    return {f: Count(int(k[j]), int(n[j])) for j, f in enumerate(FACTORS)}


def _worst_classes(correct: np.ndarray, label: np.ndarray, k: int) -> float:
    """Mean correctness over the images of the k classes with the lowest accuracy.

    Ties are broken by class index."""
    classes, inverse = np.unique(label, return_inverse=True)
    totals = np.bincount(inverse)
    hits = np.bincount(inverse, weights=correct.astype(float))
    acc = hits / totals
    worst = np.lexsort((classes, acc))[:k]
    return float(hits[worst].sum() / totals[worst].sum())


def _scored(
    predictions: Predictions,
    which: str,
    correctness: str,
    filter_prototypes: bool,
    require_complete: bool,
) -> tuple[Annotations, np.ndarray, np.ndarray]:
    """The annotations, the rows of them the predictions cover, and whether each is correct."""
    ann = load_annotations(which, filter_prototypes)
    pred_rows, ann_rows = _align(predictions, ann, require_complete)
    correct = _correct(predictions.predicted_class[pred_rows], ann_rows, ann, correctness)
    return ann, ann_rows, correct


def factor_accuracies(
    predictions: Predictions,
    *,
    which: str = "top",
    correctness: str = "class",
    filter_prototypes: bool = True,
    require_complete: bool = True,
    worst_k_classes: tuple[int, ...] = (100,),
) -> FactorAccuracies:
    """Per-factor accuracies of one model (see the module docstring for the options)."""
    ann, ann_rows, correct = _scored(
        predictions, which, correctness, filter_prototypes, require_complete
    )
    overall = Count(int(correct.sum()), int(correct.size))
    worst = {k: _worst_classes(correct, ann.label[ann_rows], k) for k in worst_k_classes}
    return FactorAccuracies(overall, _counts(correct, ann.factors[ann_rows]), worst)


def factor_accuracies_by_metaclass(
    predictions: Predictions,
    *,
    which: str = "top",
    correctness: str = "class",
    filter_prototypes: bool = True,
    require_complete: bool = True,
) -> dict[str, FactorAccuracies]:
    """Per-factor accuracies within each metaclass of the true label.

    In ``METACLASSES`` order; metaclasses without scored images are left out."""
    ann, ann_rows, correct = _scored(
        predictions, which, correctness, filter_prototypes, require_complete
    )
    meta = ann.metaclass[ann_rows]
    factors = ann.factors[ann_rows]
    out: dict[str, FactorAccuracies] = {}
    for m, name in enumerate(METACLASSES):
        sel = meta == m
        if sel.any():
            out[name] = FactorAccuracies(
                Count(int(correct[sel].sum()), int(sel.sum())), _counts(correct[sel], factors[sel])
            )
    return out


def error_ratio_table(table):
    """Error ratios (models x factors) from a published accuracy table.

    (1 - acc_f) / (1 - average)."""
    acc = table[list(FACTORS)]
    return (1.0 - acc).div(1.0 - table["average"], axis=0)


def counts_to_json(result: FactorAccuracies) -> dict[str, object]:
    """The CLI's JSON: accuracies as fractions in [0, 1]."""
    return {
        "overall_accuracy": result.overall.rate,
        "overall": {"k": result.overall.k, "n": result.overall.n},
        "factors": {
            f: {"accuracy": c.rate, "error_ratio": result.error_ratio(f), "k": c.k, "n": c.n}
            for f, c in result.factors.items()
        },
    }

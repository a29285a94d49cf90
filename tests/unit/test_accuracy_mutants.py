"""Benchmark scorers at their edges: the labelled top-1/top-5 scorers built by ``_labelled``
(called at test time, so their counts, docstring and error messages are checked), ImageNet
top-5 on a full synthetic validation set, the 200-class subset scorer's messages and count, and
``score_classify``'s top-1/top-5 fractions."""

from __future__ import annotations

import numpy as np
import pytest

from repro.base.errors import DataError
from repro.base.results import ConditionCount, ProbeResult
from repro.base.stats import Count
from repro.scoring import accuracy
from repro.scoring.benchmarks import score_classify
from repro.scoring.predictions import Predictions

pytestmark = pytest.mark.unit


def _predictions(predicted, *, top5=None, label=None, names=None, source="p.csv"):
    predicted = np.asarray(predicted, dtype=np.int64)
    n = len(predicted)
    names = [f"img{i}.png" for i in range(n)] if names is None else names
    return Predictions(
        file_name=np.asarray(names, dtype=object),
        predicted_class=predicted,
        predicted_probability=np.full(n, 0.5),
        top5=None if top5 is None else np.asarray(top5, dtype=np.int64),
        label=None if label is None else np.asarray(label, dtype=np.int64),
        source=source,
    )


# Six labelled rows: top-1 hits on rows 0 and 1 only (2 of 6); the label is among the top-5
# classes on rows 0, 1, 2, 3 (column 1, 2, 5, 3) and absent on rows 4 and 5 (4 of 6).
LABELS = [10, 20, 30, 40, 50, 60]
PREDICTED = [10, 20, 31, 41, 51, 61]
TOP5 = [
    [10, 1, 2, 3, 4],
    [20, 21, 1, 2, 3],
    [31, 1, 2, 3, 30],
    [41, 1, 40, 2, 3],
    [51, 1, 2, 3, 4],
    [61, 1, 2, 3, 4],
]


@pytest.mark.parametrize("k,expected", [(1, Count(2, 6)), (5, Count(4, 6))])
def test_labelled_scorer_counts_top1_or_top5_against_the_label_column(k, expected):
    scorer = accuracy._labelled("bench", k)
    assert scorer(_predictions(PREDICTED, top5=TOP5, label=LABELS)) == expected
    assert scorer.__doc__ == f"bench: top-{k} against the label column"


def test_labelled_scorer_without_label_column_names_the_benchmark():
    scorer = accuracy._labelled("bench", 1)
    with pytest.raises(DataError) as exc:
        scorer(_predictions(PREDICTED, top5=TOP5, source="nolab.csv"))
    assert str(exc.value) == "nolab.csv: benchmark bench needs a 'label' column with the true class"


def test_labelled_top5_scorer_without_top5_columns_names_them():
    scorer = accuracy._labelled("bench", 5)
    with pytest.raises(DataError) as exc:
        scorer(_predictions(PREDICTED, label=LABELS, source="not5.csv"))
    assert str(exc.value) == (
        "not5.csv: benchmark bench needs the top-5 columns top5_class_1 .. top5_class_5"
    )


def _full_val_predictions(with_top5: bool) -> tuple[Predictions, int]:
    """All 50,000 validation images in file order; the true class is in the top-5 of every
    7th row (at column i % 5) and absent from the others, so k = ceil(50000 / 7) = 7143."""
    truth = accuracy.imagenet_val_labels()
    n = accuracy.N_VAL
    offsets = np.arange(1, 6)
    top5 = (truth[:, None] + offsets[None, :]) % 1000  # never the true class
    hit_rows = np.arange(0, n, 7)
    top5[hit_rows, hit_rows % 5] = truth[hit_rows]
    p = _predictions(
        truth,
        top5=top5 if with_top5 else None,
        names=list(accuracy.val_file_names()),
        source="val.csv",
    )
    return p, len(hit_rows)


def test_imagenet_top5_counts_hits_against_the_validation_labels():
    p, hits = _full_val_predictions(with_top5=True)
    assert hits == 7143  # rows 0, 7, ..., 49994: 49994 / 7 + 1
    assert accuracy.score("imagenet_top5", p) == Count(7143, 50_000)


def test_imagenet_top5_without_top5_columns_names_the_benchmark():
    p, _ = _full_val_predictions(with_top5=False)
    with pytest.raises(DataError) as exc:
        accuracy.score("imagenet_top5", p)
    assert str(exc.value) == (
        "val.csv: benchmark imagenet_top5 needs the top-5 columns top5_class_1 .. top5_class_5"
    )


# imagenet_a classes include 6, 11, 13, 15, 17; class 0 is not one of them.
def test_subset_top1_counts_correct_rows_within_the_subset():
    p = _predictions([6, 11, 13, 15], label=[6, 11, 15, 15])  # rows 0, 1, 3 correct
    assert accuracy.subset_top1(p, "imagenet_a") == Count(3, 4)


def test_subset_top1_without_label_column_names_the_subset():
    with pytest.raises(DataError) as exc:
        accuracy.subset_top1(_predictions([6, 11], source="a.csv"), "imagenet_a")
    assert str(exc.value) == (
        "a.csv: benchmark imagenet_a needs a 'label' column with the true class"
    )


def test_subset_top1_rejects_a_label_outside_the_subset_naming_the_label_column():
    p = _predictions([6, 11], label=[6, 0], source="a.csv")
    with pytest.raises(DataError) as exc:
        accuracy.subset_top1(p, "imagenet_a")
    assert str(exc.value) == (
        "a.csv: row 2 (line 3): label = 0 is not one of the 200 imagenet_a classes "
        "(expected predictions restricted to the subset)"
    )


def test_score_classify_values_are_top1_and_top5_fractions():
    result = ProbeResult(
        "classify",
        "1",
        None,
        conditions=[ConditionCount("top5", 3, 4), ConditionCount("top1", 2, 4)],
    )
    out = score_classify(result)
    assert out.conditions == [ConditionCount("top1", 2, 4), ConditionCount("top5", 3, 4)]
    assert out.value == 0.5  # 2 / 4
    assert out.values == {"top1": 0.5, "top5": 0.75}  # 2 / 4 and 3 / 4

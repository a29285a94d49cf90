"""ImageNet-X factor results beyond the published tables: the error ratio and its interval
(Wilson interval of the factor accuracy, overall error fixed) on hand-built counts, the JSON and
table-row layouts, the error-ratio table, and the per-metaclass breakdown checked against counts
computed here with pandas from the imagenet-x package's shipped annotation files."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.scoring import imagenet_x as ix
from repro.scoring.accuracy import annotation_path, imagenet_val_labels, val_file_names
from repro.scoring.predictions import Predictions

pytestmark = pytest.mark.unit


def _wilson(k, n, confidence=0.95):
    """Wilson score interval written out (z from scipy), bounds exact at k = 0 and k = n."""
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / (1 + z**2 / n)
    return (0.0 if k == 0 else centre - half), (1.0 if k == n else centre + half)


OVERALL = Count(60, 100)  # overall accuracy 0.6, overall error 0.4


def _result(overall=OVERALL, **factors):
    return ix.FactorAccuracies(overall, dict(factors))


# -- error ratio and its interval --------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.95, 0.9])
def test_error_ratio_interval_is_the_wilson_interval_over_the_overall_error(confidence):
    r = _result(pose=Count(3, 10))  # overall error 1 - 0.6 = 0.4
    lo, hi = _wilson(3, 10, confidence)
    expected = ((1 - hi) / 0.4, (1 - lo) / 0.4)
    got = r.error_ratio_interval("pose", confidence)
    assert got == pytest.approx(expected, rel=1e-12)
    assert got[0] < 0.7 / 0.4 < got[1]  # the point error ratio lies inside


def test_error_ratio_interval_default_confidence_is_95_percent():
    r = _result(pose=Count(3, 10))
    lo, hi = _wilson(3, 10, 0.95)
    assert r.error_ratio_interval("pose") == pytest.approx(((1 - hi) / 0.4, (1 - lo) / 0.4))


def test_error_ratio_interval_of_a_single_wrong_image():
    # k = 0 of n = 1: Wilson gives lo = 0 and hi = z^2 / (1 + z^2)
    z = 1.959963984540054
    r = _result(pose=Count(0, 1))
    assert r.error_ratio_interval("pose") == pytest.approx(
        ((1 - z**2 / (1 + z**2)) / 0.4, 1 / 0.4), rel=1e-12
    )


def test_error_ratio_interval_is_nan_without_images_or_without_overall_errors():
    lo, hi = _result(pose=Count(0, 0)).error_ratio_interval("pose")
    assert math.isnan(lo) and math.isnan(hi)
    lo, hi = _result(Count(10, 10), pose=Count(4, 4)).error_ratio_interval("pose")
    assert math.isnan(lo) and math.isnan(hi)


def test_error_ratio_without_overall_errors_is_inf_or_nan():
    r = _result(Count(10, 10), pose=Count(4, 4))
    assert math.isnan(r.error_ratio("pose"))  # no error anywhere: 0 / 0
    # an overall of 10 of 10 and a factor with errors cannot happen in one model, but the
    # formula says inf: the factor errs while the overall does not
    assert ix.FactorAccuracies(Count(10, 10), {"pose": Count(1, 2)}).error_ratio("pose") == math.inf
    assert math.isnan(_result(pose=Count(0, 0)).error_ratio("pose"))
    assert _result(pose=Count(3, 10)).error_ratio("pose") == pytest.approx(0.7 / 0.4)


# -- layouts -----------------------------------------------------------------------------


def _same(a, b):
    """Dict equality where nan equals nan."""
    assert list(a) == list(b)
    for key in a:
        if isinstance(b[key], float) and math.isnan(b[key]):
            assert math.isnan(a[key]), key
        else:
            assert a[key] == pytest.approx(b[key]), key


def test_as_row_is_the_published_table_layout():
    r = ix.FactorAccuracies(
        Count(60, 100),
        {"pose": Count(3, 10), "style": Count(0, 0), "texture": Count(5, 5)},
        {100: 0.25, 10: 0.125},
    )
    _same(
        r.as_row(),
        {
            "pose": 0.3,
            "style": float("nan"),
            "texture": 1.0,
            "worst_factor": 0.3,  # lowest accuracy among factors with images
            "average": 0.6,
            "worst_100_classes": 0.25,
            "worst_10_classes": 0.125,
        },
    )


def test_as_json_gives_counts_intervals_and_error_ratios():
    r = _result(pose=Count(3, 10), texture=Count(5, 5))
    out = json.loads(json.dumps(r.as_json()))  # plain JSON types
    assert list(out) == ["overall", "factors"]
    assert list(out["factors"]) == ["pose", "texture"]
    assert out["overall"]["k"] == 60 and out["overall"]["n"] == 100
    assert out["overall"]["rate"] == 0.6
    assert out["overall"]["interval"] == pytest.approx(list(_wilson(60, 100)))
    pose = out["factors"]["pose"]
    assert sorted(pose) == ["error_ratio", "interval", "k", "n", "rate"]
    assert (pose["k"], pose["n"], pose["rate"]) == (3, 10, 0.3)
    assert pose["interval"] == pytest.approx(list(_wilson(3, 10)))
    assert pose["error_ratio"] == pytest.approx(0.7 / 0.4)
    assert out["factors"]["texture"]["error_ratio"] == 0.0


def test_counts_to_json_is_the_cli_layout():
    r = _result(pose=Count(3, 10), texture=Count(5, 5))
    out = ix.counts_to_json(r)
    assert out == {
        "overall_accuracy": 0.6,
        "overall": {"k": 60, "n": 100},
        "factors": {
            "pose": {"accuracy": 0.3, "error_ratio": pytest.approx(0.7 / 0.4), "k": 3, "n": 10},
            "texture": {"accuracy": 1.0, "error_ratio": 0.0, "k": 5, "n": 5},
        },
    }


def test_error_ratio_table_divides_factor_errors_by_the_average_error():
    table = pd.DataFrame(
        [{f: 0.5 for f in ix.FACTORS} | {"average": 0.75, "pose": 0.25}], index=["m"]
    )
    ratios = ix.error_ratio_table(table)
    assert list(ratios.columns) == list(ix.FACTORS) and list(ratios.index) == ["m"]
    assert ratios.loc["m", "pose"] == pytest.approx(0.75 / 0.25)  # 3.0
    assert ratios.loc["m", "style"] == pytest.approx(0.5 / 0.25)  # 2.0


# -- per-metaclass breakdown on the shipped annotations -----------------------------------

# the 16 kept metaclasses (any other of the 100 is "other"), as in the imagenet_x package
KEPT = (
    "device dog commodity bird structure covering wheeled_vehicle food equipment insect "
    "vehicle furniture primate vessel snake natural_object"
).split()


def _annotation_frame():
    """Annotated, non-prototype val images with their metaclass, read here with pandas."""
    frame = pd.read_json(annotation_path("imagenet_x_val_top_factor.jsonl"), lines=True)
    protos = set(pd.read_csv(annotation_path("prototypical_paths.csv"))["file_name"])
    frame = frame[~frame["file_name"].isin(protos)].copy()
    names = pd.read_csv(annotation_path("imagenet_1k_classes_to_100_metaclasses.csv"))["name"]
    meta_of_class = [n if n in KEPT else "other" for n in names]
    frame["meta"] = [meta_of_class[c] for c in frame["class"]]
    return frame


def _predictions(correct_image, names=None):
    """Every val image predicted; right (the label) where correct_image, else label + 1."""
    labels = np.asarray(imagenet_val_labels())
    predicted = np.where(correct_image, labels, (labels + 1) % 1000)
    all_names = val_file_names()
    wanted = set(all_names if names is None else names)
    keep = np.fromiter((n in wanted for n in all_names), dtype=bool, count=len(all_names))
    return Predictions(
        file_name=np.asarray(all_names, dtype=object)[keep],
        predicted_class=predicted[keep].astype(np.int64),
        predicted_probability=np.full(int(keep.sum()), 0.5),
        top5=None,
        label=None,
        source="preds.csv",
    )


def test_factor_accuracies_by_metaclass_counts_each_metaclass_and_factor():
    frame = _annotation_frame()
    # correct on even-numbered images (val_00000002, ...)
    correct_image = (np.arange(1, 50_001) % 2) == 0
    result = ix.factor_accuracies_by_metaclass(_predictions(correct_image))

    frame["correct"] = [correct_image[int(f[15:23]) - 1] for f in frame["file_name"]]
    expected_order = [m for m in (*KEPT, "other") if m in set(frame["meta"])]
    assert list(result) == expected_order
    assert sum(r.overall.n for r in result.values()) == len(frame) == 46_110
    for meta, group in frame.groupby("meta"):
        r = result[meta]
        assert r.overall == Count(int(group["correct"].sum()), len(group)), meta
        assert list(r.factors) == list(ix.FACTORS)
        for f in ix.FACTORS:
            has = group[f] == 1
            assert r.factors[f] == Count(int((has & group["correct"]).sum()), int(has.sum())), (
                meta,
                f,
            )


def test_factor_accuracies_by_metaclass_requires_every_annotated_image():
    frame = _annotation_frame()
    dropped = sorted(frame["file_name"])[0]  # the lowest-numbered annotated image
    names = [n for n in val_file_names() if n != dropped]
    preds = _predictions(np.ones(50_000, dtype=bool), names)
    with pytest.raises(DataError) as exc:
        ix.factor_accuracies_by_metaclass(preds)
    assert str(exc.value) == (
        f"preds.csv: no prediction for 1 of the 46,110 ImageNet-X annotated images "
        f"(first: {dropped}); expected predictions for all 50,000 validation images"
    )
    # without the requirement the remaining images are scored (all correct here)
    result = ix.factor_accuracies_by_metaclass(preds, require_complete=False)
    assert sum(r.overall.n for r in result.values()) == 46_109
    assert all(r.overall.k == r.overall.n for r in result.values())

"""Unit tests of the shape-bias scoring (pure functions, synthetic inputs): name parsing, the
1000 -> 16 decision mapping (mean, not sum or max), the same-class exclusion, S / (S + T)
with counts and interval, and the per-trial CSV schema (round trip, clear errors)."""

from __future__ import annotations

import numpy as np
import pytest

from repro.base.errors import DataError, UnknownNameError
from repro.datasets.categories16 import CategoryMapping, categories16, get_mapping
from repro.scoring import shape_bias as sb

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("name", "shape", "texture"),
    [
        ("airplane1-bicycle2.png", "airplane", "bicycle"),
        ("dog10-bird2.png", "dog", "bird"),
        ("0002_s5n_s01_0_bird_00_bird2-clock3.png", "bird", "clock"),  # human trial name
        ("/data/cue-conflict/knife/knife5-elephant10.png", "knife", "elephant"),
        ("oven3-oven1.png", "oven", "oven"),
    ],
)
def test_names_parse_like_model_vs_human(name, shape, texture):
    assert sb.shape_class(name) == shape
    assert sb.texture_class(name) == texture


def _probs_with(values: dict[int, float]) -> np.ndarray:
    p = np.zeros((1, 1000))
    for i, v in values.items():
        p[0, i] = v
    rest = 1 - p.sum()
    free = [i for i in range(1000) if i not in values]
    p[0, free] = rest / len(free)
    return p


def test_decision_averages_probabilities_over_a_category():
    m = get_mapping()
    dog = m.as_json()["dog"]  # 109 classes
    # dog classes: 0.004 each (sum 0.436, mean 0.004); airplane (1 class, 404): 0.1
    p = _probs_with({**{i: 0.004 for i in dog}, 404: 0.1})
    assert sb.decision_from_probabilities(p) == ["airplane"]  # mean: 0.1 > 0.004
    summed = CategoryMapping("sum-variant", m.categories, m.indices, aggregation="sum")
    assert sb.decision_from_probabilities(p, summed) == ["dog"]  # a sum would pick dog
    maxed = CategoryMapping("max-variant", m.categories, m.indices, aggregation="max")
    # max vs mean: one bird class at 0.05 beats airplane's mean 0.04, but bird's mean does not
    p2 = _probs_with({404: 0.04, 8: 0.05})
    assert sb.decision_from_probabilities(p2) == ["airplane"]
    assert sb.decision_from_probabilities(p2, maxed) == ["bird"]


def test_decision_batch_and_ties_go_to_first_category():
    m = get_mapping()
    p = np.full((3, 1000), 2.0**-10)  # uniform (exact in binary): all means equal -> first category
    p[1, m.as_json()["truck"]] = 0.5
    p[2, m.as_json()["knife"]] = 0.5
    assert sb.decision_from_probabilities(p) == ["airplane", "truck", "knife"]
    with pytest.raises(ValueError, match=r"\(N, 1000\)"):
        sb.decision_from_probabilities(np.zeros((2, 999)))


def test_mapping_registry_is_named_and_checked():
    assert categories16()[0] == "airplane" and len(categories16()) == 16
    assert list(categories16()) == sorted(categories16())
    with pytest.raises(UnknownNameError, match="did you mean 'model-vs-human-16'"):
        get_mapping("model-vs-human16")
    with pytest.raises(ValueError, match="unique"):
        CategoryMapping("dup", ("a", "b"), ((1, 2), (2,)))


def _row(response, image, **kw):
    row = {
        "subj": "m",
        "session": 1,
        "trial": 1,
        "rt": "NaN",
        "object_response": response,
        "category": sb.shape_class(image),
        "condition": "NaN",
        "imagename": image,
    }
    row.update(kw)
    return row


def test_shape_bias_counts_exclusion_and_other_answers():
    rows = [
        _row("airplane", "airplane1-bicycle2.png"),  # shape
        _row("bicycle", "airplane1-bicycle2.png"),  # texture
        _row("bicycle", "bear1-bicycle1.png"),  # texture
        _row("dog", "bear1-bicycle1.png"),  # neither: counts in n only
        _row("na", "cat2-clock1.png"),  # human non-response: neither
        _row("oven", "oven1-oven2.png"),  # same class: dropped entirely
    ]
    s = sb.shape_bias(rows)
    assert (s.n, s.shape, s.texture) == (5, 1, 2)
    assert s.shape_bias == pytest.approx(1 / 3)
    lo, hi = s.interval()
    assert lo < 1 / 3 < hi
    assert s.as_json() == {"n": 5, "shape": 1, "texture": 2, "shape_bias": pytest.approx(1 / 3)}


def test_shape_bias_undefined_without_shape_or_texture_decisions():
    s = sb.shape_bias([_row("dog", "airplane1-bicycle2.png")])
    assert (s.n, s.shape, s.texture, s.shape_bias) == (1, 0, 0, None)
    assert s.interval() is None


def test_shape_bias_accepts_a_dataframe():
    import pandas as pd

    df = pd.DataFrame(
        [_row("airplane", "airplane1-bicycle2.png"), _row("bicycle", "car1-bicycle2.png")]
    )
    assert sb.shape_bias(df).as_json() == {"n": 2, "shape": 1, "texture": 1, "shape_bias": 0.5}


def test_csv_round_trip_and_human_model_rows_are_interchangeable(tmp_path):
    names = ["airplane1-bicycle2.png", "bear2-cat1.png", "clock1-clock2.png"]
    rows = sb.decision_rows(["airplane", "cat", "clock"], names, subj="resnet50")
    human = {
        "subj": "subject-01",
        "session": 1,
        "trial": 4,
        "rt": 1.13,
        "object_response": "bird",
        "category": "bird",
        "condition": 0,
        "imagename": "0001_s5n_s01_0_bird_00_bird3-boat2.png",
    }
    path = sb.write_decisions_csv([*rows, human], tmp_path / "decisions.csv")
    text = path.read_text().splitlines()
    assert text[0] == ",".join(sb.COLUMNS)
    assert text[1] == "resnet50,1,1,NaN,airplane,airplane,NaN,airplane1-bicycle2.png"
    back = sb.read_decisions_csv(path)
    assert [r["trial"] for r in back] == [1, 2, 3, 4]
    assert back[3]["rt"] == pytest.approx(1.13)
    assert sb.shape_bias(back).as_json() == {
        "n": 3,
        "shape": 2,
        "texture": 1,
        "shape_bias": pytest.approx(2 / 3),
    }


HEADER = ",".join(sb.COLUMNS)
GOOD = "m,1,1,NaN,airplane,airplane,NaN,airplane1-bicycle2.png"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", r"empty file; expected the header subj,session"),
        (
            "subj,session,trial,rt,object_response,condition,imagename\n",
            r"row 1 \(header\): missing column\(s\) category",
        ),
        (
            f"{HEADER}\n{GOOD}\nm,1,2,NaN,airplane,plane,NaN,airplane1-bicycle2.png\n",
            r"row 3, column category: got 'plane'",
        ),
        (
            f"{HEADER}\nm,1,1,NaN,aeroplane,airplane,NaN,airplane1-bicycle2.png\n",
            r"row 2, column object_response",
        ),
        (
            f"{HEADER}\nm,1,x,NaN,airplane,airplane,NaN,airplane1-bicycle2.png\n",
            r"row 2, column trial: got 'x', expected an integer",
        ),
        (
            f"{HEADER}\nm,1,1,fast,airplane,airplane,NaN,airplane1-bicycle2.png\n",
            r"row 2, column rt",
        ),
        (
            f"{HEADER}\nm,1,1,NaN,airplane,airplane,NaN,airplane1-unicorn2.png\n",
            r"row 2, column imagename",
        ),
        (f"{HEADER}\nm,1,1,NaN,airplane,airplane\n", r"row 2: 6 fields, expected 8"),
        (f"{HEADER}\n", r"no trials after the header"),
    ],
)
def test_malformed_csv_names_file_row_and_column(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=match) as exc:
        sb.read_decisions_csv(path)
    assert str(path) in str(exc.value)


def test_missing_csv_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="not found"):
        sb.read_decisions_csv(tmp_path / "nope.csv")

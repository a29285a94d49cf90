"""The per-image predictions format: round trip, the ImageNet-X base files, and bad input
(every error names the file, the row and what was expected)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import DataError
from repro.scoring.predictions import (
    PREDICTION_COLUMNS,
    REQUIRED_COLUMNS,
    from_frame,
    from_records,
    predictions_from_probabilities,
    read_predictions,
    write_predictions,
)

pytestmark = pytest.mark.unit


def _frame(n=4, **overrides):
    frame = pd.DataFrame(
        {
            "file_name": [f"ILSVRC2012_val_{i + 1:08d}.JPEG" for i in range(n)],
            "predicted_class": np.arange(n) * 7 % 1000,
            "predicted_probability": np.linspace(0.2, 0.9, n),
        }
    )
    for k, v in overrides.items():
        frame[k] = v
    return frame


def test_columns_are_the_documented_format():
    assert REQUIRED_COLUMNS == ("file_name", "predicted_class", "predicted_probability")
    assert PREDICTION_COLUMNS == REQUIRED_COLUMNS + tuple(
        f"top5_class_{i}" for i in range(1, 6)
    ) + ("label",)


def test_round_trip_keeps_every_column_exactly(tmp_path):
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(1000) * 0.05, size=50)
    names = [f"img_{i:03d}.png" for i in range(50)]
    labels = rng.integers(0, 1000, size=50)
    p = predictions_from_probabilities(names, probs, labels)
    path = write_predictions(p, tmp_path / "sub" / "preds.csv")
    q = read_predictions(path)
    assert list(pd.read_csv(path).columns) == list(PREDICTION_COLUMNS)
    assert q.file_name.tolist() == names
    np.testing.assert_array_equal(q.predicted_class, probs.argmax(axis=1))
    np.testing.assert_array_equal(q.predicted_probability, probs.max(axis=1))  # %.17g: exact
    np.testing.assert_array_equal(q.top5, np.argsort(-probs, axis=1)[:, :5])
    np.testing.assert_array_equal(q.label, labels)
    assert from_records(q.to_records()).to_frame().equals(q.to_frame())


def test_class_subset_restricts_the_decision_but_keeps_imagenet_indices():
    probs = np.full((2, 1000), 1e-4)
    probs[0, 5] = 0.9  # outside the subset
    probs[0, 11] = 0.05  # best inside
    probs[1, 300] = probs[1, 200] = 0.4  # tie -> lower index
    p = predictions_from_probabilities(["a", "b"], probs, class_subset=[11, 13, 200, 300, 15, 17])
    assert p.predicted_class.tolist() == [11, 200]
    assert p.predicted_probability[0] == pytest.approx(0.05)
    assert p.top5[1, :2].tolist() == [200, 300]
    assert set(p.top5.ravel()) <= {11, 13, 15, 17, 200, 300}


@pytest.mark.parametrize(
    "column,value,row,message",
    [
        (
            "predicted_class",
            [1, 2, 1000, 3],
            3,
            r"predicted_class = 1000 out of range \(expected a class index in 0..999\)",
        ),
        ("predicted_class", [1, -1, 2, 3], 2, r"predicted_class = -1 out of range"),
        ("predicted_class", [1, 2, 3, "cat"], 4, r"predicted_class = 'cat' is not an integer"),
        ("predicted_class", [1, 2.5, 3, 4], 2, r"predicted_class = 2.5 is not an integer"),
        (
            "predicted_probability",
            [0.1, 1.5, 0.2, 0.3],
            2,
            r"predicted_probability = 1.5 \(expected a probability in \[0, 1\]\)",
        ),
        (
            "label",
            [1, 2, 3, 1001],
            4,
            r"label = 1001 out of range \(expected a class index in 0..999, or -1 for no label\)",
        ),
        ("label", [1, -2, 3, 4], 2, r"label = -2 out of range"),
    ],
)
def test_bad_values_name_the_row(tmp_path, column, value, row, message):
    path = tmp_path / "bad.csv"
    _frame(**{column: value}).to_csv(path, index=False)
    with pytest.raises(DataError, match=rf"bad\.csv: row {row} \(line {row + 1}\): {message}"):
        read_predictions(path)


def test_missing_column_is_named(tmp_path):
    path = tmp_path / "nocls.csv"
    _frame().drop(columns="predicted_class").to_csv(path, index=False)
    with pytest.raises(
        DataError,
        match=r"nocls\.csv: missing column\(s\) predicted_class \(expected at least "
        r"file_name, predicted_class, predicted_probability",
    ):
        read_predictions(path)


def test_duplicate_file_names_the_repeat_and_the_first(tmp_path):
    path = tmp_path / "dup.csv"
    f = _frame()
    f.loc[3, "file_name"] = f.loc[1, "file_name"]
    f.to_csv(path, index=False)
    with pytest.raises(
        DataError,
        match=r"dup\.csv: row 4 \(line 5\): duplicate file_name "
        r"'ILSVRC2012_val_00000002\.JPEG' \(first at row 2",
    ):
        read_predictions(path)


def test_unknown_file_name_against_a_known_set():
    f = _frame()
    with pytest.raises(
        DataError,
        match=r"<x>: row 1 \(line 2\): unknown file_name 'ILSVRC2012_val_00000001.JPEG' "
        r"\(expected an image of the mini set\)",
    ):
        from_frame(f, source="<x>", known_files=set(f.file_name[1:]), known_what="the mini set")


def test_top5_must_be_complete_consistent_and_distinct():
    top = {f"top5_class_{i}": [i, i, i, i] for i in range(1, 6)}
    f = _frame(predicted_class=[1, 1, 1, 1], **top)
    assert from_frame(f).top5.shape == (4, 5)
    with pytest.raises(DataError, match="incomplete top-5 columns, missing top5_class_5"):
        from_frame(f.drop(columns="top5_class_5"))
    g = f.copy()
    g.loc[2, "predicted_class"] = 9
    with pytest.raises(
        DataError, match=r"row 3 \(line 4\): top5_class_1 = 1 differs from predicted_class = 9"
    ):
        from_frame(g)
    h = f.copy()
    h.loc[0, "top5_class_3"] = 2
    with pytest.raises(
        DataError, match=r"row 1 \(line 2\): top-5 classes \[1, 2, 2, 4, 5\] repeat a class"
    ):
        from_frame(h)


def test_missing_file_and_garbage_are_one_line_errors(tmp_path):
    with pytest.raises(DataError, match="predictions file not found"):
        read_predictions(tmp_path / "none.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match=r"empty\.csv: not a readable CSV"):
        read_predictions(empty)


def test_a_file_is_parsed_once_while_its_bytes_stay_the_same(tmp_path, monkeypatch):
    """read_predictions' cache: the same bytes give the same (read-only) records without a second
    parse; a rewritten file (same size, same name) is parsed again; known_files bypasses it."""
    from repro.scoring import predictions

    monkeypatch.setattr(predictions, "_CACHE", type(predictions._CACHE)())
    parse = predictions._parse
    parsed: list[str] = []
    monkeypatch.setattr(
        predictions,
        "_parse",
        lambda data, path, *a: parsed.append(path.name) or parse(data, path, *a),
    )
    path = tmp_path / "p.csv"
    _frame(predicted_class=[1, 2, 3, 4]).to_csv(path, index=False)
    first = read_predictions(path)
    assert read_predictions(tmp_path / "." / "p.csv") is first and parsed == ["p.csv"]
    with pytest.raises(ValueError, match="read-only"):
        first.predicted_class[0] = 9
    _frame(predicted_class=[1, 2, 3, 5]).to_csv(path, index=False)  # same size, new content
    again = read_predictions(path)
    assert again.predicted_class.tolist() == [1, 2, 3, 5] and parsed == ["p.csv", "p.csv"]
    assert read_predictions(path, num_classes=10) is not again and len(parsed) == 3
    known = set(first.file_name)
    assert read_predictions(path, known_files=known) is not again and len(parsed) == 4
    assert read_predictions(path, known_files=known).predicted_class.flags.writeable


def test_the_cache_keeps_the_last_files_read(tmp_path, monkeypatch):
    from repro.scoring import predictions

    monkeypatch.setattr(predictions, "_CACHE", type(predictions._CACHE)())
    paths = []
    for i in range(predictions.CACHE_SIZE + 1):
        paths.append(tmp_path / f"p{i}.csv")
        _frame(predicted_class=[i, 2, 3, 4]).to_csv(paths[-1], index=False)
    kept = read_predictions(paths[0])
    for p in paths[1:-1]:
        read_predictions(p)
    assert read_predictions(paths[0]) is kept  # read again: the most recent now
    read_predictions(paths[-1])  # one over the size: the least recent (paths[1]) goes
    assert len(predictions._CACHE) == predictions.CACHE_SIZE
    assert read_predictions(paths[0]) is kept
    assert [k[0] for k in predictions._CACHE][0] == str(paths[2].resolve())


@pytest.mark.parametrize(("label", "shown"), [(1.7, "1.7"), (float("nan"), "nan")])
def test_a_label_that_is_not_a_class_index_is_refused_not_truncated(label, shown):
    """predictions_from_probabilities cast the labels to int64 before checking them: 1.7 was
    stored as class 1, and NaN raised numpy's own error."""
    probs = np.full((3, 4), 0.2)
    probs[:, 1] = 0.4
    with pytest.raises(DataError) as exc:
        predictions_from_probabilities(["a", "b", "c"], probs, [1, label, 3], source="<s>")
    assert str(exc.value) == (
        f"<s>: row 2 (line 3): label = {shown} is not an integer class index (expected an "
        "integer 0..3)"
    )
    got = predictions_from_probabilities(["a", "b", "c"], probs, np.array([0, 3, 2]))
    assert got.label.tolist() == [0, 3, 2] and got.label.dtype == np.int64

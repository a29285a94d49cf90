"""The predictions format's edges that tests/unit/test_predictions.py leaves open: default and
explicit sources in error messages, the unreadable-CSV message, read_predictions' known-file
check and its read-only cache, the exact bytes write_predictions writes, and the inputs
predictions_from_probabilities converts (one-hot integer scores, float class indices,
slightly negative scores)."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import DataError
from repro.scoring import predictions as predictions_module
from repro.scoring.predictions import (
    from_records,
    predictions_from_probabilities,
    read_predictions,
    write_predictions,
)

pytestmark = pytest.mark.unit

COLUMNS_TEXT = "file_name, predicted_class, predicted_probability"


def _write_csv(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def _record(name, cls, prob, **extra):
    return {"file_name": name, "predicted_class": cls, "predicted_probability": prob, **extra}


def _pandas_error_first_line(data: bytes) -> tuple[type, str]:
    """What pandas itself says about these bytes (the independent source of the message)."""
    try:
        pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - the test wants whatever pandas raises
        return type(exc), str(exc).strip().splitlines()[0]
    raise AssertionError("pandas read the bytes")


# --- Predictions.__len__ / source attributes ---------------------------------------------------


def test_len_is_the_number_of_rows():
    p = from_records([_record(f"img{i}.png", i, 0.5) for i in range(3)])
    assert len(p) == 3


def test_default_sources_name_where_records_came_from():
    assert from_records([_record("a.png", 1, 0.5)]).source == "<records>"
    probs = np.array([[0.25, 0.75]])
    assert predictions_from_probabilities(["a.png"], probs).source == "<probabilities>"


# --- from_records --------------------------------------------------------------------------


def test_from_records_without_records_names_the_default_source():
    with pytest.raises(DataError) as exc:
        from_records([])
    assert str(exc.value) == "<records>: no prediction records (expected one per image)"


def test_from_records_errors_name_the_given_source_and_range():
    records = [_record("a.png", 1, 0.5), _record("b.png", 12, 0.5)]
    with pytest.raises(DataError) as exc:
        from_records(records, source="run-7", num_classes=10)
    assert str(exc.value) == (
        "run-7: row 2 (line 3): predicted_class = 12 out of range (expected a class index in 0..9)"
    )
    with pytest.raises(DataError) as exc:
        from_records(records[:1] + [_record("b.png", 1001, 0.5)])
    # default source and default 1000 classes
    assert str(exc.value) == (
        "<records>: row 2 (line 3): predicted_class = 1001 out of range "
        "(expected a class index in 0..999)"
    )


def test_bad_value_is_shown_as_written_even_for_decimal_records():
    # records from JSON parsed with Decimal floats: the message shows 2.5, not Decimal('2.5')
    records = json.loads(
        '[{"file_name": "a.png", "predicted_class": 2.5, "predicted_probability": 0.5}]',
        parse_float=Decimal,
    )
    with pytest.raises(DataError) as exc:
        from_records(records)
    assert str(exc.value) == (
        "<records>: row 1 (line 2): predicted_class = 2.5 is not an integer class index "
        "(expected an integer 0..999)"
    )


# --- read_predictions / _parse -------------------------------------------------------------


def test_unreadable_csv_message_quotes_the_first_line_of_the_parser_error(tmp_path):
    cases = {
        "empty.csv": b"",
        "latin.csv": b"\xff\xfefile_name\n",
        "quote.csv": b'file_name,predicted_class,predicted_probability\n"a.png,1,0.5\n',
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        _, first = _pandas_error_first_line(data)
        with pytest.raises(DataError) as exc:
            read_predictions(path)
        assert str(exc.value) == (
            f"{path}: not a readable CSV ({first}); expected a UTF-8 CSV with columns "
            f"{COLUMNS_TEXT}, ..."
        )


def test_parser_error_without_text_is_named_by_its_type(tmp_path, monkeypatch):
    def raise_empty(*args, **kwargs):
        raise pd.errors.ParserError("")

    monkeypatch.setattr(pd, "read_csv", raise_empty)
    path = _write_csv(tmp_path / "p.csv", "file_name\n")
    with pytest.raises(DataError) as exc:
        predictions_module._parse(path.read_bytes(), path, 1000, None, "the image set")
    assert str(exc.value) == (
        f"{path}: not a readable CSV (ParserError); expected a UTF-8 CSV with columns "
        f"{COLUMNS_TEXT}, ..."
    )


def test_numeric_looking_file_names_stay_text(tmp_path):
    path = _write_csv(
        tmp_path / "p.csv",
        "file_name,predicted_class,predicted_probability\n0001,1,0.5\n2.50,2,0.5\n",
    )
    assert read_predictions(path).file_name.tolist() == ["0001", "2.50"]


def test_known_files_are_checked_with_the_default_and_given_set_name(tmp_path):
    path = _write_csv(
        tmp_path / "p.csv",
        "file_name,predicted_class,predicted_probability\na.png,1,0.5\nz.png,2,0.5\n",
    )
    known = {"a.png", "b.png"}
    with pytest.raises(DataError) as exc:
        read_predictions(path, known_files=known)
    assert str(exc.value) == (
        f"{path}: row 2 (line 3): unknown file_name 'z.png' (expected an image of the image set)"
    )
    with pytest.raises(DataError) as exc:
        read_predictions(path, known_files=known, known_what="the 2-image subset")
    assert str(exc.value) == (
        f"{path}: row 2 (line 3): unknown file_name 'z.png' "
        "(expected an image of the 2-image subset)"
    )


def test_read_predictions_checks_the_given_number_of_classes(tmp_path):
    path = _write_csv(
        tmp_path / "p.csv",
        "file_name,predicted_class,predicted_probability\na.png,15,0.5\n",
    )
    for known in (None, {"a.png"}):  # the cached path and the known-files path
        with pytest.raises(DataError) as exc:
            read_predictions(path, num_classes=10, known_files=known)
        assert str(exc.value) == (
            f"{path}: row 1 (line 2): predicted_class = 15 out of range "
            "(expected a class index in 0..9)"
        )


def test_cached_records_are_read_only_in_every_column(tmp_path, monkeypatch):
    monkeypatch.setattr(predictions_module, "_CACHE", type(predictions_module._CACHE)())
    header = "file_name,predicted_class,predicted_probability," + ",".join(
        f"top5_class_{i}" for i in range(1, 6)
    )
    path = _write_csv(tmp_path / "p.csv", f"{header},label\na.png,1,0.5,1,2,3,4,5,7\n")
    p = read_predictions(path)
    assert p.top5.tolist() == [[1, 2, 3, 4, 5]] and p.label.tolist() == [7]
    for arr in (p.file_name, p.predicted_class, p.predicted_probability, p.top5, p.label):
        assert not arr.flags.writeable


# --- write_predictions ---------------------------------------------------------------------


def test_write_creates_missing_folders_and_writes_into_existing_ones(tmp_path):
    p = from_records([_record("a.png", 3, 0.1, label=3), _record("b.png", 4, 1e-20, label=-1)])
    nested = tmp_path / "a" / "b" / "c" / "p.csv"
    assert write_predictions(p, nested) == nested
    flat = tmp_path / "q.csv"  # tmp_path already exists
    assert write_predictions(p, flat) == flat
    # 17 significant digits, lower-case exponent, no index column (Python's own formatting)
    expected = (
        "file_name,predicted_class,predicted_probability,label\n"
        f"a.png,3,{format(0.1, '.17g')},3\n"
        f"b.png,4,{format(1e-20, '.17g')},-1\n"
    )
    assert format(1e-20, ".17g") == "9.9999999999999995e-21"
    assert nested.read_text() == expected and flat.read_text() == expected
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a", "q.csv"]


# --- predictions_from_probabilities --------------------------------------------------------


def test_probability_shape_errors_name_the_source():
    with pytest.raises(DataError) as exc:
        predictions_from_probabilities(["a.png"], np.zeros(3))
    assert str(exc.value) == (
        "<probabilities>: probabilities have shape (3,), expected (N, num_classes)"
    )
    with pytest.raises(DataError) as exc:
        predictions_from_probabilities(["a", "b", "c"], np.zeros((2, 5)), source="run-1")
    assert str(exc.value) == "run-1: 3 file names for 2 probability rows"


def test_one_hot_integer_scores_are_read_as_probabilities():
    # uint8 one-hot rows: class 1 then class 0, each with probability 1
    probs = np.array([[0, 1, 0], [1, 0, 0]], dtype=np.uint8)
    p = predictions_from_probabilities(["a.png", "b.png"], probs)
    assert p.predicted_class.tolist() == [1, 0]
    assert p.predicted_probability.tolist() == [1.0, 1.0]


def test_class_subset_given_as_integral_floats_selects_the_same_classes():
    probs = np.array([[0.1, 0.6, 0.3]])
    p = predictions_from_probabilities(["a.png"], probs, class_subset=np.array([2.0, 0.0]))
    assert p.predicted_class.tolist() == [2] and p.predicted_probability.tolist() == [0.3]


def test_slightly_negative_best_score_is_clipped_to_zero():
    probs = np.array([[-1e-12, -0.5]])  # numerical noise below 0 on the best class
    p = predictions_from_probabilities(["a.png"], probs)
    assert p.predicted_class.tolist() == [0] and p.predicted_probability.tolist() == [0.0]


def test_labels_are_checked_against_the_number_of_columns():
    probs = np.array([[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]])
    with pytest.raises(DataError) as exc:
        predictions_from_probabilities(["a.png", "b.png"], probs, [2, 3], source="run-2")
    assert str(exc.value) == (
        "run-2: row 2 (line 3): label = 3 out of range "
        "(expected a class index in 0..2, or -1 for no label)"
    )
    p = predictions_from_probabilities(["a.png", "b.png"], probs, [2, -1])
    assert p.label.tolist() == [2, -1] and p.predicted_class.tolist() == [2, 0]

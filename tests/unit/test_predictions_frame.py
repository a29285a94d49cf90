"""from_frame's validation messages and conversions, checked whole: the default source and
image-set name, the column lists of the missing-column and incomplete-top-5 errors, empty and
unknown file names (and the ways ``known_files`` may be given), NaN probabilities, bad top-5
cells, repeated top-5 classes on a later row, the float probabilities of integer input, and
``_int_column`` without a class count."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import DataError
from repro.scoring.predictions import _int_column, from_frame

pytestmark = pytest.mark.unit

REQUIRED_TEXT = "file_name, predicted_class, predicted_probability"
TOP5_TEXT = "top5_class_1, top5_class_2, top5_class_3, top5_class_4, top5_class_5"


def _frame(names, classes, probs, **extra):
    return pd.DataFrame(
        {"file_name": names, "predicted_class": classes, "predicted_probability": probs, **extra}
    )


def _top5(rows):
    """The five top5_class_j columns of a list of 5-class rows."""
    return {f"top5_class_{j + 1}": [row[j] for row in rows] for j in range(5)}


def _error(frame, **kwargs) -> str:
    with pytest.raises(DataError) as exc:
        from_frame(frame, **kwargs)
    return str(exc.value)


# --- defaults ----------------------------------------------------------------------------------


def test_default_source_names_the_records_and_errors():
    assert from_frame(_frame(["a.png"], [3], [0.5])).source == "<predictions>"
    msg = _error(_frame(["a.png"], [3], [1.5]))
    assert msg == (
        "<predictions>: row 1 (line 2): predicted_probability = 1.5 "
        "(expected a probability in [0, 1])"
    )


def test_unknown_file_names_the_default_image_set():
    msg = _error(_frame(["a.png", "z.png"], [1, 2], [0.5, 0.5]), known_files=["a.png", "b.png"])
    assert msg == (
        "<predictions>: row 2 (line 3): unknown file_name 'z.png' "
        "(expected an image of the image set)"
    )


# --- column lists ------------------------------------------------------------------------------


def test_missing_columns_are_listed_with_the_columns_found():
    frame = pd.DataFrame({"file_name": ["a.png"], "score": [0.5], "cls": [1]})
    assert _error(frame, source="p.csv") == (
        "p.csv: missing column(s) predicted_class, predicted_probability "
        f"(expected at least {REQUIRED_TEXT}; found file_name, score, cls)"
    )


def test_frame_without_columns_reports_none_found():
    assert _error(pd.DataFrame(), source="p.csv") == (
        "p.csv: missing column(s) file_name, predicted_class, predicted_probability "
        f"(expected at least {REQUIRED_TEXT}; found none)"
    )


def test_incomplete_top5_lists_every_absent_column():
    frame = _frame(["a.png"], [1], [0.5], top5_class_1=[1], top5_class_2=[2], top5_class_4=[4])
    assert _error(frame, source="p.csv") == (
        "p.csv: incomplete top-5 columns, missing top5_class_3, top5_class_5 "
        f"(expected all of {TOP5_TEXT} or none)"
    )


def test_columns_without_rows_are_rejected():
    assert _error(_frame([], [], []), source="p.csv") == (
        "p.csv: no prediction rows (expected one row per image)"
    )


# --- file names --------------------------------------------------------------------------------


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_file_name_on_a_later_row_is_located(blank):
    frame = _frame(["a.png", blank, "c.png"], [1, 2, 3], [0.5, 0.5, 0.5])
    assert _error(frame, source="p.csv") == (
        "p.csv: row 2 (line 3): empty file_name (expected an image file name)"
    )


class _CaseInsensitiveNames(Mapping):
    """Image names looked up case-insensitively (membership through __getitem__)."""

    def __init__(self, names):
        self._names = {n.lower(): n for n in names}

    def __getitem__(self, key):
        return self._names[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names.values())

    def __len__(self) -> int:
        return len(self._names)


def test_known_files_mapping_is_asked_for_membership_itself():
    # "A.PNG" is a key of the mapping by its own lookup, though it never iterates that spelling
    known = _CaseInsensitiveNames(["a.png", "b.png"])
    p = from_frame(_frame(["A.PNG", "b.png"], [1, 2], [0.5, 0.5]), known_files=known)
    assert p.file_name.tolist() == ["A.PNG", "b.png"]


def test_known_files_given_as_a_one_pass_iterator_are_all_kept():
    # the iterator yields b before a: every name must still be found
    known = iter(["b.png", "a.png"])
    p = from_frame(_frame(["a.png", "b.png"], [1, 2], [0.5, 0.5]), known_files=known)
    assert p.file_name.tolist() == ["a.png", "b.png"]


def test_known_files_given_as_a_list_are_checked():
    frame = _frame(["a.png", "b.png"], [1, 2], [0.5, 0.5])
    assert from_frame(frame, known_files=["b.png", "a.png"]).file_name.tolist() == [
        "a.png",
        "b.png",
    ]
    assert _error(frame, source="p.csv", known_files=["a.png"], known_what="the val set") == (
        "p.csv: row 2 (line 3): unknown file_name 'b.png' (expected an image of the val set)"
    )


# --- probabilities -----------------------------------------------------------------------------


def test_missing_probability_is_rejected():
    frame = _frame(["a.png", "b.png"], [1, 2], ["0.5", "high"])
    assert _error(frame, source="p.csv") == (
        "p.csv: row 2 (line 3): predicted_probability = 'high' (expected a probability in [0, 1])"
    )


def test_integer_probabilities_are_stored_as_floats():
    p = from_frame(_frame(["a.png", "b.png"], [1, 2], [1, 0]))
    assert p.predicted_probability.dtype == np.float64
    assert p.predicted_probability.tolist() == [1.0, 0.0]


# --- top-5 columns -----------------------------------------------------------------------------


def test_non_integer_top5_cell_names_its_column_source_and_range():
    frame = _frame(["a.png"], [1], [0.5], **_top5([[1, "x", 3, 4, 5]]))
    assert _error(frame, source="p.csv", num_classes=10) == (
        "p.csv: row 1 (line 2): top5_class_2 = 'x' is not an integer class index "
        "(expected an integer 0..9)"
    )


def test_top5_class_out_of_range_is_rejected():
    frame = _frame(["a.png"], [1], [0.5], **_top5([[1, 2, 3, 4, 10]]))
    assert _error(frame, source="p.csv", num_classes=10) == (
        "p.csv: row 1 (line 2): top5_class_5 = 10 out of range (expected a class index in 0..9)"
    )


def test_top5_first_class_differing_from_prediction_names_the_source():
    frame = _frame(["a.png"], [1], [0.5], **_top5([[2, 1, 3, 4, 5]]))
    assert _error(frame, source="p.csv") == (
        "p.csv: row 1 (line 2): top5_class_1 = 2 differs from predicted_class = 1 "
        "(expected the same class)"
    )


def test_repeated_top5_class_on_a_later_row_is_located():
    rows = [[1, 2, 3, 4, 5], [2, 7, 3, 7, 0]]
    frame = _frame(["a.png", "b.png"], [1, 2], [0.5, 0.5], **_top5(rows))
    assert _error(frame, source="p.csv") == (
        "p.csv: row 2 (line 3): top-5 classes [2, 7, 3, 7, 0] repeat a class "
        "(expected 5 distinct classes)"
    )


# --- _int_column without a class count ---------------------------------------------------------


def test_int_column_without_class_count_expects_any_integer():
    with pytest.raises(DataError) as exc:
        _int_column(pd.Series([3, 2.5]), "label", "p.csv", None)
    assert str(exc.value) == (
        "p.csv: row 2 (line 3): label = 2.5 is not an integer class index (expected an integer)"
    )


def test_int_column_without_class_count_accepts_any_integer():
    arr = _int_column(pd.Series([3.0, 12345.0, -7.0]), "label", "p.csv", None)
    assert arr.dtype == np.int64
    assert arr.tolist() == [3, 12345, -7]

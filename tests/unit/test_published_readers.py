"""Readers of the published files: a corrupt copy (wrong checksum, missing column, non-numeric
value, unknown model name) gets a one-line DataError naming the file and the column/row/name."""

from __future__ import annotations

import json

import pytest

from repro.base.errors import DataError
from repro.published.categories import load_categories, read_categories
from repro.published.table import load_table, read_table_csv

pytestmark = pytest.mark.unit

HEADER = "model,top1_acc/imagenet,shape-bias\n"


def _write(tmp_path, text, name="gavrikov2024/benchmark.csv"):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_reads_numbers_and_keeps_empty_cells_as_nan(tmp_path):
    t = read_table_csv(_write(tmp_path, HEADER + "a,76.1,0.21\nb,,0.3\n"))
    assert t.models == ["a", "b"] and t.value("a", "shape-bias") == 0.21
    with pytest.raises(DataError, match=r"column 'top1_acc/imagenet' is empty for model 'b'"):
        t.value("b", "top1_acc/imagenet")


def test_wrong_checksum_names_file_and_fetch_command(tmp_path):
    _write(tmp_path, HEADER + "a,76.1,0.21\n")
    with pytest.raises(DataError) as info:
        load_table("gavrikov2024/benchmark.csv", tmp_path)
    msg = str(info.value)
    assert (
        "benchmark.csv" in msg
        and "sha256" in msg
        and "python -m repro data fetch" in msg
        and "\n" not in msg
    )


def test_missing_column_names_file_and_column(tmp_path):
    p = _write(tmp_path, HEADER + "a,76.1,0.21\n")
    with pytest.raises(DataError, match=r"benchmark\.csv: column 'top1_acc/imagenet-v2' missing"):
        read_table_csv(p, required=["top1_acc/imagenet-v2"])
    t = read_table_csv(p)
    with pytest.raises(
        DataError, match=r"benchmark\.csv: column 'metric/x' missing \(needed for model 'a'\)"
    ):
        t.column("metric/x", ["a"])


def test_non_numeric_value_names_row_model_and_column(tmp_path):
    p = _write(tmp_path, HEADER + "a,76.1,0.21\nb,seventy,0.3\n")
    with pytest.raises(DataError) as info:
        read_table_csv(p)
    assert str(info.value) == (
        f"{p}: row 3 (model 'b'), column 'top1_acc/imagenet': 'seventy' is not a number"
    )


@pytest.mark.parametrize(
    "text,match",
    [
        ("", "empty file"),
        ("name,x\na,1\n", "first column is 'name', expected 'model'"),
        (HEADER + "a,1\n", "row 2 has 2 fields, expected 3"),
        (HEADER + "a,1,2\na,1,2\n", "row 3: model 'a' appears twice"),
        ("model,x,x\na,1,2\n", "column 'x' appears twice"),
    ],
)
def test_malformed_csv_is_one_line_error(tmp_path, text, match):
    with pytest.raises(DataError, match=match):
        read_table_csv(_write(tmp_path, text))


def test_categories_unknown_model_names_file_and_name(tmp_path):
    p = _write(
        tmp_path,
        json.dumps(
            {"baseline": ["tv_resnet50"], "adversarial_training": ["robust_resnet50_l2_eps9"]}
        ),
        "gavrikov2024/r50_categories.json",
    )
    with pytest.raises(DataError) as info:
        read_categories(p, known_models=["tv_resnet50"])
    assert str(info.value) == (
        f"{p}: category 'adversarial_training' names unknown model 'robust_resnet50_l2_eps9' "
        "(not a row of the study's table)"
    )


@pytest.mark.parametrize(
    "payload,match",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected an object"),
        ('{"a": "tv_resnet50"}', "must be a list of model names"),
        ('{"a": ["m"], "b": ["m"]}', "listed in both 'a' and 'b'"),
    ],
)
def test_categories_malformed(tmp_path, payload, match):
    p = _write(tmp_path, payload, "c.json")
    with pytest.raises(DataError, match=match):
        read_categories(p)


def test_categories_checksum_is_verified(tmp_path):
    _write(tmp_path, json.dumps({"baseline": ["tv_resnet50"]}), "gavrikov2024/r50_categories.json")
    with pytest.raises(DataError, match="r50_categories.json: sha256"):
        load_categories("gavrikov2024/r50_categories.json", tmp_path)

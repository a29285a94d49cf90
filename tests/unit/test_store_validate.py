"""What a job record must hold before the store believes it (``repro.store.validate``).

Each malformed record is refused with the whole message a reader sees (the field, the value as
read, what was expected); each boundary of the counts (k = 0, k = n, n = 0 with and without a
rate) is tried on both sides, so that a check moved by one (``<`` for ``<=``) or a message cut
short fails here."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from repro.base.errors import DataError
from repro.datasets.subset import STRATIFICATION, is_declared
from repro.store.validate import (
    check_record,
    corrupt_message,
    evidence_problem,
    problems,
    remove_hint,
)

pytestmark = pytest.mark.unit


OWN_FOLDER = "expected a file name in the record's own folder"


def _record(**extra):
    return {"model": "m", "measurement": "shape-bias", "version": "3", "status": "ok", **extra}


def test_a_well_formed_record_has_no_problem_and_is_returned_unchanged():
    rec = _record(
        conditions=[
            {"condition": "c", "k": 0, "n": 5, "rate": 0.0},
            {"condition": "d", "k": 5, "n": 5},
        ],
        columns=[
            {"column": "x", "value": 1.5, "k": 3, "n": 4, "interval": [0.1, 2]},
            {"column": "y", "value": None},
            {"column": "z", "k": 0, "n": 0, "value": None},
        ],
        interval=[0, 1],
        records_file="records.jsonl",
        provenance={},
        values={},
    )
    assert problems(rec) is None
    assert check_record(rec, Path("a/b.json")) is rec


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "is a JSON list, expected an object"),
        ("x", "is a JSON str, expected an object"),
        (
            {"measurement": "s", "version": "1", "status": "ok"},
            "lacks field 'model' (expected a repro store record)",
        ),
        (_record(version=3), "has field 'version' = 3, expected a non-empty string"),
        (_record(model=""), "has field 'model' = '', expected a non-empty string"),
        (_record(status="done"), "has field 'status' = 'done', expected one of ok, failed"),
        (_record(conditions={}), "has a field 'conditions' that is not a list"),
        (_record(conditions=[{"k": 1, "n": 2}]), "has conditions[0] without a 'condition' name"),
        (
            _record(conditions=[{"condition": "a", "k": 1, "n": 2}, "b"]),
            "has conditions[1] without a 'condition' name",
        ),
        (
            _record(conditions=[{"condition": "a"}]),
            "has condition 'a' with k=None, n=None (expected integer counts)",
        ),
        (
            _record(conditions=[{"condition": "a", "k": 1.0, "n": 2}]),
            "has condition 'a' with k=1.0, n=2 (expected integer counts)",
        ),
        (
            _record(conditions=[{"condition": "a", "k": 1, "n": 2.0}]),
            "has condition 'a' with k=1, n=2.0 (expected integer counts)",
        ),
        (
            _record(conditions=[{"condition": "a", "k": True, "n": 2}]),
            "has condition 'a' with k=True, n=2 (expected integer counts)",
        ),
        (
            _record(conditions=[{"condition": "a", "k": 1, "n": True}]),
            "has condition 'a' with k=1, n=True (expected integer counts)",
        ),
        (
            _record(conditions=[{"condition": "a", "k": 3, "n": 2}]),
            "has condition 'a' with k=3 of n=2 (expected 0 <= k <= n)",
        ),
        (
            _record(conditions=[{"condition": "a", "k": -1, "n": 2}]),
            "has condition 'a' with k=-1 of n=2 (expected 0 <= k <= n)",
        ),
        (
            _record(conditions=[{"condition": "a", "k": 0, "n": 0, "rate": 0.5}]),
            "has condition 'a' with a rate (rate = 0.5) formed from n = 0 items",
        ),
        (
            _record(conditions=[{"condition": "a", "k": 0, "n": 0, "rate": 0}]),
            "has condition 'a' with a rate (rate = 0) formed from n = 0 items",
        ),
        (_record(columns={}), "has a field 'columns' that is not a list"),
        (_record(columns=[{"value": 1}]), "has columns[0] without a 'column' name"),
        (
            _record(columns=[{"column": "x"}, {"column": 3}]),
            "has columns[1] without a 'column' name",
        ),
        (_record(columns=["x"]), "has columns[0] without a 'column' name"),
        (
            _record(columns=[{"column": "x", "value": "1"}]),
            "has column 'x' with value '1', expected a finite number or null",
        ),
        (
            _record(columns=[{"column": "x", "value": True}]),
            "has column 'x' with value True, expected a finite number or null",
        ),
        (
            _record(columns=[{"column": "x", "value": math.inf}]),
            "has column 'x' with value inf, expected a finite number or null",
        ),
        (
            _record(columns=[{"column": "x", "value": 1, "k": 1}]),
            "has column 'x' with k=1, n=None (expected integer counts)",
        ),
        (
            _record(columns=[{"column": "x", "value": 1, "n": 4}]),
            "has column 'x' with k=None, n=4 (expected integer counts)",
        ),
        (
            _record(columns=[{"column": "x", "value": 1.0, "k": 0, "n": 0}]),
            "has column 'x' with a rate (value = 1.0) formed from n = 0 items",
        ),
        (
            _record(columns=[{"column": "x", "interval": [1]}]),
            "has column 'x' with interval [1], expected a pair of finite numbers",
        ),
        (
            _record(columns=[{"column": "x", "interval": [1, 2, 3]}]),
            "has column 'x' with interval [1, 2, 3], expected a pair of finite numbers",
        ),
        (
            _record(columns=[{"column": "x", "interval": [1, math.nan]}]),
            "has column 'x' with interval [1, nan], expected a pair of finite numbers",
        ),
        (
            _record(columns=[{"column": "x", "interval": "12"}]),
            "has column 'x' with interval '12', expected a pair of finite numbers",
        ),
        (
            _record(interval=[0.1]),
            "has field 'interval' = [0.1], expected a pair of finite numbers",
        ),
        (
            _record(interval=[math.nan, 1]),
            "has field 'interval' = [nan, 1], expected a pair of finite numbers",
        ),
        (
            _record(interval={"lo": 0, "hi": 1}),
            "has field 'interval' = {'lo': 0, 'hi': 1}, expected a pair of finite numbers",
        ),
        (
            _record(records_file="../r.jsonl"),
            f"has field 'records_file' = '../r.jsonl', {OWN_FOLDER}",
        ),
        (
            _record(records_file=".."),
            "has field 'records_file' = '..', expected a file name in the record's own folder",
        ),
        (
            _record(records_file="."),
            "has field 'records_file' = '.', expected a file name in the record's own folder",
        ),
        (
            _record(records_file=""),
            "has field 'records_file' = '', expected a file name in the record's own folder",
        ),
        (
            _record(records_file="a\\b"),
            "has field 'records_file' = 'a\\\\b', expected a file name in the record's own folder",
        ),
        (
            _record(records_file=7),
            "has field 'records_file' = '7', expected a file name in the record's own folder",
        ),
        (
            _record(records_file="d/" + "x" * 300),
            f"has field 'records_file' = {'d/' + 'x' * 198!r}, {OWN_FOLDER}",
        ),
        (_record(provenance=[]), "has a field 'provenance' that is not an object"),
        (_record(values=None), "has a field 'values' that is not an object"),
    ],
)
def test_a_malformed_record_is_named_whole(data, message):
    assert problems(data) == message
    with pytest.raises(DataError) as err:
        check_record(data, Path("store/m/shape-bias.json"))
    assert str(err.value) == (
        f"store/m/shape-bias.json: job record {message}; remove it "
        "(rm 'store/m/shape-bias.json') and run the measurement again to re-measure this job"
    )


def test_counts_at_their_bounds_are_accepted():
    """k = 0 and k = n are counts; n = 0 is allowed while no rate is formed from it."""
    for k, n in ((0, 3), (3, 3), (0, 0)):
        assert problems(_record(conditions=[{"condition": "a", "k": k, "n": n}])) is None
        assert problems(_record(columns=[{"column": "x", "k": k, "n": n}])) is None
    assert problems(_record(conditions=[{"condition": "a", "k": 0, "n": 0, "rate": None}])) is None
    assert (
        problems(_record(conditions=[{"condition": "a", "k": 0, "n": 0, "rate": math.nan}])) is None
    )
    assert problems(_record(columns=[{"column": "x", "k": 2, "n": 4, "value": 0.5}])) is None
    # a column without counts is fine; a condition without counts is not
    assert problems(_record(columns=[{"column": "x", "value": 0.5}])) is None


def test_the_first_problem_is_reported_in_field_order():
    data = _record(status="bad", conditions={}, columns={}, interval=[1])
    assert problems(data) == "has field 'status' = 'bad', expected one of ok, failed"
    data = _record(conditions={}, columns={})
    assert problems(data) == "has a field 'conditions' that is not a list"
    data = _record(columns={}, interval=[1])
    assert problems(data) == "has a field 'columns' that is not a list"
    assert problems({"status": "ok"}) == "lacks field 'model' (expected a repro store record)"
    assert problems(_record(status="failed")) is None


def test_remove_hint_and_corrupt_message_name_the_path():
    path = Path("/s/m/x.json")
    assert remove_hint(path) == (
        "remove it (rm '/s/m/x.json') and run the measurement again to re-measure this job"
    )
    assert corrupt_message(path, "is odd") == (
        "/s/m/x.json: job record is odd; remove it (rm '/s/m/x.json') and run the measurement "
        "again to re-measure this job"
    )


def test_evidence_problem_of_each_kind_of_data():
    assert evidence_problem({}) is None
    assert evidence_problem({"dataset_mini": False, "dataset_partial": False}) is None
    assert evidence_problem({"dataset_mini": True, "dataset_partial": True}) == (
        "measured on generated mini data"
    )
    assert evidence_problem({"dataset_partial": True, "dataset_items": 12}) == (
        "measured on part of the dataset (12 items)"
    )
    assert evidence_problem({"dataset_partial": True, "dataset_items": 0}) == (
        "measured on part of the dataset (0 items)"
    )
    assert evidence_problem({"dataset_partial": True}) == "measured on partial data"
    incomplete = {"size": 10}
    assert not is_declared(incomplete)
    expected = (
        "measured on a subset whose declaration (size, seed, stratification, digest) is incomplete"
    )
    assert evidence_problem({"dataset_subset": incomplete}) == expected
    # a subset, declared or not, is judged by its declaration, not by the partial flag
    assert evidence_problem({"dataset_subset": incomplete, "dataset_partial": True}) == expected
    declared = {"size": 10, "seed": 0, "stratification": STRATIFICATION, "digest": "0" * 64}
    assert is_declared(declared)
    assert evidence_problem({"dataset_subset": declared, "dataset_partial": True}) is None
    assert evidence_problem({"dataset_subset": declared, "dataset_mini": True}) == (
        "measured on generated mini data"
    )

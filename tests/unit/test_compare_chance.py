"""``compare`` flags a stored value that rests on decisions at chance (issue 37): the column
flag of repro.analysis.chance beside the value, in the table and in ``compare --json``
(schema version 2, ``rows[].chance``). The boundary is the one-sided exact binomial test of the
shape-or-texture decisions against 2/16 at alpha 0.05: 169 of 1,200 (p 0.055) is at chance,
170 (p 0.046) is not."""

from __future__ import annotations

import pytest

from repro.analysis.chance import column_flag
from repro.base.output_schemas import CompareRow
from repro.store.compare import as_json, compare, format_rows
from repro.store.files import Store
from tests.small_store import shape_record

pytestmark = pytest.mark.unit


@pytest.fixture
def rows(tmp_path):
    store = Store(tmp_path)
    for model, shape, texture in (("random", 75, 75), ("edge", 69, 100), ("real", 250, 550)):
        store.write(shape_record(model, shape, texture, dataset_mini=False))
    store.write(shape_record("above", 70, 100, dataset_mini=False))
    published = {m: {"shape-bias": 0.3} for m in ("random", "edge", "real", "above")}
    got = compare(tmp_path, published, chance=column_flag)
    return {r.model: r for r in got}


def test_a_shape_bias_at_chance_is_flagged_with_its_test(rows):
    assert rows["random"].chance.startswith(
        "AT CHANCE (150/1,200 shape-or-texture decisions, chance 0.125, p = "
    )
    assert (
        rows["edge"].chance.startswith("AT CHANCE (169/1,200")
        and "p = 0.055" in rows["edge"].chance
    )
    assert rows["above"].chance == "" and rows["real"].chance == ""


def test_the_flag_is_in_the_table_and_the_json(rows):
    text = format_rows(list(rows.values()))
    flagged = [line for line in text.splitlines() if "AT CHANCE" in line]
    assert sorted(line.split()[0] for line in flagged) == ["edge", "random"]
    doc = as_json(rows["random"])
    assert doc["chance"] == rows["random"].chance
    assert as_json(rows["real"])["chance"] is None
    CompareRow.model_validate(doc)  # the declared row of compare --json version 2


def test_without_the_flag_function_nothing_is_flagged(tmp_path):
    Store(tmp_path).write(shape_record("random", 75, 75, dataset_mini=False))
    (row,) = compare(tmp_path, {})
    assert row.chance == "" and as_json(row)["chance"] is None

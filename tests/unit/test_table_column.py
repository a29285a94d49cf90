"""``ModelTable.column`` reads a column in one go and still names what is amiss (the model, the
column, an empty cell); ``cluster_weights`` is drawn once per labels, resamples and seed and
cannot be changed by a caller."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.analysis.clustered import cluster_weights
from repro.base.errors import DataError
from repro.base.table import ModelTable

pytestmark = pytest.mark.unit

TABLE = ModelTable(
    {
        "a": {"acc": 0.5, "sb": 1},
        "b": {"acc": "0.25", "sb": math.nan},
        "c": {"acc": 0.75, "sb": None},
    },
    origin="t.csv",
)


def test_a_column_in_the_order_asked_for():
    got = TABLE.column("acc", iter(["c", "a", "b"]))
    assert got.dtype == float and got.tolist() == [0.75, 0.5, 0.25]


@pytest.mark.parametrize(
    ("column", "models", "message"),
    [
        ("acc", ["a", "z"], r"t\.csv: no row for model 'z'"),
        ("top1", ["a"], r"t\.csv: column 'top1' missing \(needed for model 'a'\)"),
        ("sb", ["a", "b"], r"t\.csv: column 'sb' is empty for model 'b'"),
        ("sb", ["a", "c"], r"t\.csv: column 'sb' is empty for model 'c'"),
    ],
)
def test_what_is_amiss_is_named(column, models, message):
    with pytest.raises(DataError, match=message):
        TABLE.column(column, models)


def test_cluster_weights_are_drawn_once_and_read_only():
    labels = ["f1", "f1", "f2", "f3", "f3", "f3"]
    w = cluster_weights(labels, 500, seed=4)
    assert cluster_weights(list(labels), 500, seed=4) is w
    assert not np.array_equal(w, cluster_weights(labels, 500, seed=5))
    assert (w[:, 0] == w[:, 1]).all() and (w.sum(axis=1) == 6).sum() < 500
    with pytest.raises(ValueError, match="read-only"):
        w[0, 0] = 9.0

"""The redrawn tables a claim's replication reads (``repro.analysis.redraws.Redraws``): redrawn
columns in the order asked for, fixed columns as the table's values in every redraw (a read-only
view, not a copy), category means, one redraw as a plain table, and the refusals of the
vectorised Spearman correlation, whole."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.redraws import (
    Redraws,
    Replicates,
    debiased,
    spearman_matrices,
    spearman_rows,
)
from repro.base.table import ModelTable

pytestmark = pytest.mark.unit

TABLE = ModelTable(
    {
        "a": {"acc": 0.70, "sb": 0.20, "other": 1.0},
        "b": {"acc": 0.75, "sb": 0.30, "other": 2.0},
        "c": {"acc": 0.80, "sb": 0.40, "other": 4.0},
    },
    origin="t.csv",
    sources={"acc": "store"},
    default_source="published",
)
# three redraws of "acc" for the models a, b, c (redraw 1 of c undefined)
ACC = np.array([[0.71, 0.74, 0.81], [0.69, 0.76, np.nan], [0.70, 0.77, 0.79]])


def _redraws(columns=None):
    return Redraws(TABLE, ("a", "b", "c"), {"acc": ACC} if columns is None else columns, 3)


def test_a_redrawn_column_in_the_order_asked_for():
    r = _redraws()
    np.testing.assert_array_equal(r.column("acc", ["c", "a"]), ACC[:, [2, 0]])
    assert r.index == {"a": 0, "b": 1, "c": 2}


def test_a_fixed_column_is_the_tables_in_every_redraw_as_a_read_only_view():
    r = _redraws()
    col = r.column("sb", ["b", "c"])
    assert col.shape == (3, 2) and col.strides[0] == 0 and not col.flags.writeable
    np.testing.assert_array_equal(col, [[0.30, 0.40]] * 3)
    np.testing.assert_array_equal(r.column("sb", ["c"]), [[0.40]] * 3)  # keyed by the models


def test_a_redrawn_column_of_the_wrong_shape_is_refused_whole():
    r = _redraws({"acc": ACC[:2]})
    with pytest.raises(ValueError) as e:
        r.redrawn("acc")
    assert str(e.value) == "redrawn column 'acc' has shape (2, 3), expected (3, 3)"


def test_the_mean_of_columns_per_model_and_redraw():
    r = _redraws()
    fixed = r.mean_of(["sb", "other"], ["a", "c"])
    assert fixed.strides[0] == 0
    np.testing.assert_allclose(fixed, [[0.6, 2.2]] * 3, rtol=1e-12)
    mixed = r.mean_of(["acc", "sb"], ["a", "b"])
    np.testing.assert_allclose(mixed, (ACC[:, :2] + [0.20, 0.30]) / 2, rtol=1e-12)


def test_one_redraw_as_a_plain_table():
    r = _redraws()
    t = r.table_of(1)
    assert t.values["a"] == {"acc": 0.69, "sb": 0.20, "other": 1.0}
    assert t.values["b"]["acc"] == 0.76
    assert t.values["c"]["acc"] == 0.80  # undefined in this redraw: the table's value stays
    assert t.origin == "t.csv (redraw 1)"
    assert (t.sources, t.default_source) == ({"acc": "store"}, "published")
    assert TABLE.values["a"]["acc"] == 0.70  # the table itself is not changed
    own = ModelTable(TABLE.values, origin="o.csv", default_source="store")
    assert Redraws(own, ("a",), {"acc": ACC[:, :1]}, 3).table_of(0).default_source == "store"
    # a redrawn model the table has no row for is left out
    extra = Redraws(TABLE, ("a", "z"), {"acc": np.array([[0.5, 0.6]])}, 1).table_of(0)
    assert set(extra.values) == {"a", "b", "c"} and extra.values["a"]["acc"] == 0.5


def test_replicates_default_to_no_p_and_no_details():
    rep = Replicates(np.array([0.1, 0.2]))
    assert rep.p is None and rep.details == {}


def test_debiasing_a_column_without_a_defined_redraw_keeps_it_undefined():
    out = debiased(np.array([[np.nan, 1.0], [np.nan, 3.0]]), np.array([5.0, 5.0]))
    assert np.isnan(out[:, 0]).all() and out[:, 1].tolist() == [4.0, 6.0]


@pytest.mark.parametrize(
    "x,y,shapes",
    [
        (np.zeros((2, 3)), np.zeros((2, 4)), "(2, 3) and (2, 4)"),
        (np.zeros(3), np.zeros(3), "(3,) and (3,)"),
        (np.zeros((2, 2)), np.zeros((2, 2)), "(2, 2) and (2, 2)"),
    ],
)
def test_spearman_rows_refuses_other_shapes_whole(x, y, shapes):
    with pytest.raises(ValueError) as e:
        spearman_rows(x, y)
    assert str(e.value) == (
        f"spearman_rows needs two (B, n >= 3) arrays of one shape, got {shapes}"
    )


def test_a_perfect_rank_correlation_is_exactly_one_with_p_zero():
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
    rho, p = spearman_rows(x, x * 10)
    assert rho.tolist() == [1.0] and p.tolist() == [0.0]
    rho, p = spearman_rows(x, -x)
    assert rho.tolist() == [-1.0] and p.tolist() == [0.0]
    assert not math.isnan(spearman_rows(x, x[:, ::-1] ** 2)[0][0])


def test_spearman_rows_are_scipys_row_by_row_with_ties_and_constant_rows():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, size=(40, 7)).astype(float)  # heavy ties
    y = rng.normal(size=(40, 7))
    y[:, :3] = np.round(y[:, :3], 0)
    x[5] = 2.0  # a constant row: undefined
    rho, p = spearman_rows(x, y)
    for b in range(40):
        if b == 5:  # scipy warns and gives nan too
            assert math.isnan(rho[b]) and math.isnan(p[b])
            continue
        want = stats.spearmanr(x[b], y[b])
        assert rho[b] == pytest.approx(want.statistic, abs=1e-12)
        assert p[b] == pytest.approx(want.pvalue, rel=1e-9)


def test_spearman_rows_of_a_repeated_row_rank_it_once_and_agree():
    """A fixed column reaches the rows as a stride-0 view (the same row in every redraw)."""
    fixed = np.broadcast_to(np.array([0.3, 0.1, 0.2, 0.9, 0.5]), (4, 5))
    y = np.random.default_rng(0).normal(size=(4, 5))
    rho, p = spearman_rows(fixed, y)
    want_rho, want_p = spearman_rows(np.array(fixed), y)  # an ordinary copy
    np.testing.assert_allclose(rho, want_rho, atol=1e-12)
    np.testing.assert_allclose(p, want_p, rtol=1e-12)
    assert rho[0] == pytest.approx(stats.spearmanr(fixed[0], y[0]).statistic, abs=1e-12)


def test_spearman_matrices_are_scipys_per_redraw():
    rng = np.random.default_rng(8)
    data = rng.integers(0, 5, size=(6, 9, 3)).astype(float)  # 6 redraws, 9 models, 3 variables
    got = spearman_matrices(data)
    assert got.shape == (6, 3, 3)
    for b in range(6):
        np.testing.assert_allclose(got[b], stats.spearmanr(data[b]).statistic, atol=1e-12)


def test_debiased_redraws_average_to_the_observed_value():
    rng = np.random.default_rng(2)
    samples = rng.normal(0.4, 0.1, size=(50, 3))
    samples[[3, 7], 1] = np.nan
    observed = np.array([0.1, -0.2, 0.5])
    out = debiased(samples, observed)
    np.testing.assert_allclose(np.nanmean(out, axis=0), observed, atol=1e-12)
    assert np.isnan(out[[3, 7], 1]).all()
    # a shift, not a rescaling: differences between redraws are kept
    np.testing.assert_allclose(out[1] - out[0], samples[1] - samples[0], atol=1e-12)
    one = debiased(np.array([1.0, 2.0, 6.0]), 0.0)  # a single statistic, a scalar observed
    assert one.tolist() == [-2.0, -1.0, 3.0]


def test_a_single_redraw_of_fixed_columns():
    """One redraw: the fixed columns' mean is read from the only row there is."""
    r = Redraws(TABLE, ("a", "b", "c"), {"acc": ACC[:1]}, 1)
    np.testing.assert_allclose(r.mean_of(["sb", "other"], ["a", "c"]), [[0.6, 2.2]], rtol=1e-12)
    fixed = r.column("sb", ["a", "b", "c"])
    rho, p = spearman_rows(fixed, r.column("acc", ["a", "b", "c"]))
    want = stats.spearmanr([0.20, 0.30, 0.40], ACC[0])
    assert rho[0] == pytest.approx(want.statistic) and p[0] == pytest.approx(want.pvalue)


def test_spearman_rows_take_three_models_and_refuse_two():
    x = np.array([[1.0, 2.0, 3.0]])
    rho, _ = spearman_rows(x, np.array([[1.0, 3.0, 2.0]]))
    assert rho[0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"got \(1, 2\) and \(1, 2\)"):
        spearman_rows(x[:, :2], x[:, :2])


def test_a_column_with_one_defined_redraw_is_moved_onto_the_observed_value():
    out = debiased(np.array([[np.nan, 1.0], [7.0, 3.0], [np.nan, 5.0]]), np.array([2.0, 4.0]))
    assert out[1, 0] == 2.0 and np.isnan(out[[0, 2], 0]).all()
    assert out[:, 1].tolist() == [2.0, 4.0, 6.0]

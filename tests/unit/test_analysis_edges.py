"""The analysis of a small table under a definition built in code (``repro.analysis.analysis``):
every result against scipy or a by-hand value (cells, bias pairs, the benchmark matrix and its
row means and intervals, Holm and Benjamini-Hochberg over the defined cells only, the paper's
masked display), the per-model rows and JSON whole, and each refusal whole."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from repro.analysis.analysis import Analysis, Cell
from repro.analysis.correlation import (
    Correlation,
    bootstrap_spearman_matrices,
    describe_interval,
)
from repro.analysis.spec import AnalysisSpec, Derived, Group, Selector
from repro.base.errors import ConfigError
from repro.base.table import ModelTable

pytestmark = pytest.mark.unit

MODELS = [f"m{i}" for i in range(8)]
CATS = {"at": ["m0", "m1", "m2"], "base": ["m3", "m4", "m5", "m6", "m7"]}
S = [0.10, 0.30, 0.20, 0.50, 0.40, 0.80, 0.60, 0.70]
L = [0.9, 0.1, 0.5, 0.3, 0.2, 0.6, 0.4, 0.8]
A = [0.50, 0.60, 0.55, 0.70, 0.65, 0.90, 0.75, 0.85]
B = [0.40, 0.45, 0.50, 0.60, 0.62, 0.70, 0.80, 0.90]
C = [0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]  # constant: no correlation with it is defined


def _table():
    values = {
        m: {"s": S[i], "l": L[i], "a": A[i], "b": B[i], "c": C[i]} for i, m in enumerate(MODELS)
    }
    return ModelTable(values, origin="t.csv", sources={"s": "store"})


def _spec(**changes):
    spec = AnalysisSpec(
        name="t",
        alpha=0.05,
        population=Selector(model_categories="all"),
        groups={
            "all": Group("all", "All", Selector()),
            "base": Group("base", "Base", Selector(model_categories=("base",))),
        },
        categories={
            "acc": Derived("acc", "Accuracy", ("a", "b")),
            "flat": Derived("flat", "Flat", ("c",)),
        },
        biases={"sb": Derived("sb", "Shape", ("s",)), "lf": Derived("lf", "Low", ("l",))},
        benchmarks={"A": "a", "B": "b", "L": "l"},
        resamples=0,
        seed=4,
        confidence=0.9,
        origin="def.toml",
    )
    return dataclasses.replace(spec, **changes)


def _analysis(**changes):
    return Analysis(_spec(**changes), _table(), CATS)


# ------------------------------------------------------------------------------------ who


def test_the_population_and_groups_follow_the_selectors():
    a = _analysis()
    assert a.population == MODELS
    assert a.groups == {"all": MODELS, "base": CATS["base"]}


def test_a_population_model_without_a_row_is_named_whole():
    a = Analysis(_spec(population=Selector(models=("m0", "x1", "m2", "x2"))), _table(), CATS)
    with pytest.raises(ConfigError) as e:
        a.population  # noqa: B018
    assert str(e.value) == "def.toml: population names model(s) without a row in t.csv: x1, x2"


def test_a_group_outside_the_population_is_named_whole():
    groups = {"g": Group("g", "G", Selector(models=("m0", "m3")))}
    a = Analysis(_spec(population=Selector(exclude_models=("m3",)), groups=groups), _table(), CATS)
    with pytest.raises(ConfigError) as e:
        a.groups  # noqa: B018
    assert str(e.value) == "def.toml: [groups.g] names model(s) outside the population: m3"


# ----------------------------------------------------------------------------------- what


def test_quantities_are_unweighted_column_means_over_the_population_by_default():
    a = _analysis()
    np.testing.assert_allclose(a.category("acc"), (np.array(A) + np.array(B)) / 2)
    np.testing.assert_allclose(a.bias("sb", ["m2", "m0"]), [S[2], S[0]])
    assert a.columns_of("categories", "acc") == ("a", "b")
    assert a.sources_of("s", "a") == {"s": "store", "a": "published"}


@pytest.mark.parametrize(
    ("kind", "qid", "message"),
    [
        ("categories", "nope", "def.toml: unknown category 'nope' (known: acc, flat)"),
        ("biases", "nope", "def.toml: unknown bias 'nope' (known: sb, lf)"),
    ],
)
def test_an_unknown_category_or_bias_is_named_whole(kind, qid, message):
    with pytest.raises(ConfigError) as e:
        _analysis().quantity(kind, qid)
    assert str(e.value) == message


# ----------------------------------------------------------------------------- statistics


def test_a_cell_is_scipys_spearman_within_its_group_and_computed_once():
    a = _analysis()
    cell = a.cell("sb", "acc", "base")
    want = stats.spearmanr(S[3:], (np.array(A[3:]) + np.array(B[3:])) / 2)
    assert (cell.corr.rho, cell.corr.p) == pytest.approx((want.statistic, want.pvalue))
    assert cell.corr.n == 5 and a.cell("sb", "acc", "base") is cell
    assert cell.as_json() == {
        "bias": "sb",
        "category": "acc",
        "group": "base",
        "n": 5,
        "rho": cell.corr.rho,
        "p": cell.corr.p,
    }
    assert a.interval_method == describe_interval(0, 4, 0.9)


def test_a_cells_bootstrap_follows_the_definition():
    a = _analysis(resamples=300)
    cell = a.cell("sb", "acc", "all")
    assert cell.corr.method == describe_interval(300, 4, 0.9) == a.interval_method
    assert all(np.isfinite(cell.corr.interval)) and cell.corr.interval[0] < cell.corr.rho


def test_an_unknown_group_and_too_few_models_are_refused_whole():
    groups = {
        "two": Group("two", "Two", Selector(models=("m1", "m4"))),
        "all": Group("all", "All", Selector()),
    }
    a = Analysis(_spec(groups=groups), _table(), CATS)
    with pytest.raises(ConfigError) as e:
        a.cell("sb", "acc", "nope")
    assert str(e.value) == "def.toml: unknown group 'nope' (known: two, all)"
    with pytest.raises(ConfigError) as e:
        a.cell("sb", "acc", "two")
    assert str(e.value) == (
        "def.toml: [groups.two] selects 2 model(s) (m1, m4); a Spearman correlation needs at "
        "least 3"
    )
    with pytest.raises(ConfigError) as e:
        a.require_models([], "[population]", 3, "a test")
    assert str(e.value) == "def.toml: [population] selects 0 model(s); a test needs at least 3"
    a.require_models(["m0", "m1", "m2"], "[x]", 3, "a test")  # exactly enough


def _cell(rho, p):
    return Cell("sb", "acc", "all", Correlation(rho, p, 8, (math.nan, math.nan), "m"))


def test_the_masked_display_shows_rho_under_alpha_zero_above_and_nan_undefined():
    a = _analysis()
    assert a.masked(_cell(0.7, 0.01)) == 0.7
    assert a.masked(_cell(0.7, 0.05)) == 0.0  # p = alpha is not under it
    assert a.masked(_cell(0.7, 0.2)) == 0.0
    assert math.isnan(a.masked(_cell(math.nan, 0.01)))
    assert math.isnan(a.masked(_cell(0.7, math.nan)))
    assert _analysis(alpha=0.3).masked(_cell(0.7, 0.2)) == 0.7


def test_holm_and_bh_adjust_over_the_defined_cells_only():
    a = _analysis()
    cells = a.bias_vs_category()
    assert [(c.bias, c.category, c.group) for c in cells] == [
        (b, c, g) for b in ("sb", "lf") for c in ("acc", "flat") for g in ("all", "base")
    ]
    defined = [c for c in cells if not math.isnan(c.corr.p)]
    assert len(defined) == 4  # the flat category's cells are undefined
    p = np.array([c.corr.p for c in defined])
    order = np.argsort(p)
    holm = np.empty(4)
    running = 0.0
    for rank, i in enumerate(order):  # Holm by hand
        running = max(running, min(1.0, (4 - rank) * p[i]))
        holm[i] = running
    bh = np.empty(4)
    running = 1.0
    for rank, i in reversed(list(enumerate(order))):  # Benjamini-Hochberg by hand
        running = min(running, p[i] * 4 / (rank + 1))
        bh[i] = running
    adj = a.adjusted_p
    for c, h, q in zip(defined, holm, bh, strict=True):
        key = (c.bias, c.category, c.group)
        assert adj[key]["holm"] == pytest.approx(h) and adj[key]["bh"] == pytest.approx(q)
    flat = adj[("sb", "flat", "all")]
    assert math.isnan(flat["holm"]) and math.isnan(flat["bh"])
    rows = a.bias_vs_category_rows()
    assert rows[0] == cells[0].as_json() | {
        "p_holm": adj[("sb", "acc", "all")]["holm"],
        "p_bh": adj[("sb", "acc", "all")]["bh"],
    }
    assert len(rows) == 8


def test_per_model_rows_are_whole():
    a = Analysis(
        _spec(
            population=Selector(models=("m4", "m0", "m1")),
            groups={"at": Group("at", "AT", Selector(model_categories=("at",)))},
        ),
        _table(),
        {**CATS, "none": []},
    )
    assert a.per_model_rows() == [
        {
            "model": "m4",
            "model_category": "base",
            "groups": [],
            "sb": S[4],
            "lf": L[4],
            "acc": pytest.approx((A[4] + B[4]) / 2),
            "flat": 0.3,
        },
        {
            "model": "m0",
            "model_category": "at",
            "groups": ["at"],
            "sb": S[0],
            "lf": L[0],
            "acc": pytest.approx((A[0] + B[0]) / 2),
            "flat": 0.3,
        },
        {
            "model": "m1",
            "model_category": "at",
            "groups": ["at"],
            "sb": S[1],
            "lf": L[1],
            "acc": pytest.approx((A[1] + B[1]) / 2),
            "flat": 0.3,
        },
    ]
    values = {m: dict(r) for m, r in _table().values.items()} | {
        "zz": {"s": 0.5, "l": 0.5, "a": 0.5, "b": 0.5, "c": 0.3}
    }
    extra = Analysis(
        _spec(population=Selector(models=("m0", "zz", "m1")), groups={}),
        ModelTable(values, origin="t.csv"),
        CATS,
    )
    assert extra.per_model_rows()[1]["model_category"] is None  # a model of no category


def test_bias_pairs_are_scipys_over_the_population():
    a = _analysis(biases={k: Derived(k, k, (k,)) for k in ("s", "l", "a")})
    pairs = a.bias_vs_bias()
    assert [(x, y) for x, y, _ in pairs] == [("s", "l"), ("s", "a"), ("l", "a")]
    cols = {"s": S, "l": L, "a": A}
    for x, y, corr in pairs:
        want = stats.spearmanr(cols[x], cols[y])
        assert (corr.rho, corr.p, corr.n) == pytest.approx((want.statistic, want.pvalue, 8))
    small = Analysis(_spec(population=Selector(models=("m0", "m1"))), _table(), CATS)
    with pytest.raises(ConfigError) as e:
        small.bias_vs_bias()
    assert str(e.value) == (
        "def.toml: [population] selects 2 model(s) (m0, m1); a Spearman correlation needs at "
        "least 3"
    )
    with pytest.raises(ConfigError):
        small.benchmark_correlation  # noqa: B018


def test_the_benchmark_matrix_and_its_row_means_without_intervals():
    bc = _analysis().benchmark_correlation
    want = stats.spearmanr(np.column_stack([A, B, L])).statistic
    np.testing.assert_allclose(bc.matrix, want, atol=1e-12)
    np.testing.assert_allclose(bc.row_mean_including_diagonal, want.mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(
        bc.row_mean_excluding_diagonal, (want.sum(axis=1) - 1.0) / 2, atol=1e-12
    )
    assert bc.benchmarks == ["A", "B", "L"] and bc.n == 8
    assert bc.method == describe_interval(0, 4, 0.9)
    for lo, hi in bc.interval_including_diagonal + bc.interval_excluding_diagonal:
        assert math.isnan(lo) and math.isnan(hi)
    assert len(bc.interval_including_diagonal) == len(bc.interval_excluding_diagonal) == 3
    assert bc.as_json() == {
        "benchmarks": ["A", "B", "L"],
        "matrix": [[float(v) for v in row] for row in bc.matrix],
        "row_mean_including_diagonal": [float(v) for v in bc.row_mean_including_diagonal],
        "row_mean_excluding_diagonal": [float(v) for v in bc.row_mean_excluding_diagonal],
    }


def test_the_benchmark_row_means_intervals_are_percentiles_of_the_resampled_means():
    bc = _analysis(resamples=400).benchmark_correlation
    boots = bootstrap_spearman_matrices(np.column_stack([A, B, L]), 400, 4)
    incl, excl = boots.mean(axis=2), (boots.sum(axis=2) - 1.0) / 2
    for i in range(3):  # 90%: the 5th and 95th percentiles of the finite resamples
        ok_i, ok_e = incl[:, i][np.isfinite(incl[:, i])], excl[:, i][np.isfinite(excl[:, i])]
        assert bc.interval_including_diagonal[i] == pytest.approx(
            tuple(np.percentile(ok_i, [5.0, 95.0]))
        )
        assert bc.interval_excluding_diagonal[i] == pytest.approx(
            tuple(np.percentile(ok_e, [5.0, 95.0]))
        )
    assert bc.method == describe_interval(400, 4, 0.9)

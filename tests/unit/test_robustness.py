"""Leave-one-out robustness of a claim (``repro.diagnostics.robustness``) on synthetic studies whose
answer is known by construction:

- one model drives a correlation: 10 models whose ranks correlate weakly plus one model at the
  top of both variables; with it rho is significant, without it not, and no other single model
  changes that;
- a category drives a correlation: two such models, together a category; neither alone flips
  the verdict, leaving the category out does;
- a study without an analysis definition (its population is its table's rows), the exact
  fast path of a statistic against recomputing, and a recomputation that fails.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from repro.analysis.correlation import permutation_p
from repro.analysis.result import LeaveOneOut, StatisticResult
from repro.analysis.spec import AnalysisSpec, Derived, Group, Selector
from repro.base.errors import DataError
from repro.base.study import Study
from repro.base.table import ModelTable
from repro.claims.check import evaluate
from repro.claims.context import ClaimContext
from repro.claims.spec import Claim, Tolerance
from repro.diagnostics.robustness import FAST, GENERIC, UNDEFINED, robustness

pytestmark = pytest.mark.unit

HERE = "tests.unit.test_robustness"
ONE_DRIVER_Y = [4.0, 2.0, 1.0, 3.0, 0.0, 9.0, 7.0, 8.0, 5.0, 6.0]  # ranks of b0..b9 (x = 0..9)
TWO_DRIVERS_Y = [0.0, 4.0, 1.0, 5.0, 3.0, 8.0, 9.0, 6.0, 2.0, 7.0]


# -- statistics the synthetic claims name -------------------------------------------------------
def corr_stat(ctx, *, group: str = "total") -> StatisticResult:
    """Spearman of bias with acc within a group (as the study statistics report it)."""
    a = ctx.analysis
    models = a.groups[group]
    x, y = a.bias("bias", models), a.category("acc", models)
    corr = a.cell("bias", "acc", group).corr
    return StatisticResult(
        value=corr.rho,
        p=corr.p,
        n=corr.n,
        interval=corr.interval,
        interval_method=corr.method,
        per_model={m: {"x": float(x[i]), "y": float(y[i])} for i, m in enumerate(models)},
        paired=(x, y),
        cells=(("bias", "acc", group),),
    )


def mean_stat(ctx, *, column: str, min_rows: int = 1) -> StatisticResult:
    """The mean of a column over the table's rows (a study without an analysis definition)."""
    models = ctx.table.models
    if len(models) < min_rows:
        raise DataError(f"mean_stat needs {min_rows} rows, got {len(models)}")
    v = ctx.table.column(column, models)
    return StatisticResult(
        value=float(v.mean()),
        n=len(models),
        per_model={m: float(x) for m, x in zip(models, v, strict=True)},
    )


def mean_stat_fast(ctx, *, column: str) -> StatisticResult:
    """``mean_stat`` with its exact leave-one-out, and a detail the fast path does not give."""
    res = mean_stat(ctx, column=column)
    models = ctx.table.models
    v = ctx.table.column(column, models)

    def loo() -> LeaveOneOut:
        return LeaveOneOut(
            list(models), (v.sum() - v) / (v.size - 1), None, {"size": [v.size - 1] * v.size}
        )

    res.details = {"size": v.size, "largest": float(v.max())}
    res.leave_one_out = loo
    return res


# -- builders -----------------------------------------------------------------------------------
def _study() -> Study:
    return Study(
        name="synthetic",
        title="Synthetic",
        citation="-",
        folder=Path("."),
        claims=Path("claims.toml"),
    )


def _spec(groups: dict[str, Selector] | None = None) -> AnalysisSpec:
    groups = groups or {"total": Selector()}
    return AnalysisSpec(
        name="synthetic",
        alpha=0.05,
        population=Selector(model_categories="all"),
        groups={g: Group(g, g, sel) for g, sel in groups.items()},
        categories={"acc": Derived("acc", "Accuracy", ("acc",))},
        biases={"bias": Derived("bias", "Bias", ("bias",))},
        benchmarks={},
        resamples=2000,
        seed=0,
        origin="<synthetic>",
    )


def _context(
    xs: list[float],
    ys: list[float],
    names: list[str],
    cats: dict[str, list[str]],
    groups: dict[str, Selector] | None = None,
) -> ClaimContext:
    values = {m: {"bias": x, "acc": y} for m, x, y in zip(names, xs, ys, strict=True)}
    return ClaimContext(
        _study(),
        Path("."),
        ModelTable(values, origin="<synthetic table>"),
        cats,
        spec=_spec(groups),
    )


def _claim(
    statistic: str,
    tolerance: Tolerance,
    published: float | None = None,
    params=None,
    qualitative: Tolerance | None = None,
) -> Claim:
    return Claim(
        id="synthetic_claim",
        study="synthetic",
        statement="-",
        source="-",
        statistic=f"{HERE}:{statistic}",
        params=params or {},
        published=published,
        tolerance=tolerance,
        version=1,
        qualitative=qualitative,
    )


SIGNIFICANT = Tolerance(
    "sign_significance", {"sign": "+", "alpha": 0.05}, "positive and significant"
)


@pytest.fixture
def one_driver() -> ClaimContext:
    base = [f"b{i}" for i in range(10)]
    return _context(
        [*map(float, range(10)), 10.0],
        [*ONE_DRIVER_Y, 10.0],
        [*base, "driver"],
        {"low": base[:5], "high": base[5:], "solo": ["driver"]},
    )


@pytest.fixture
def two_drivers() -> ClaimContext:
    base = [f"b{i}" for i in range(10)]
    cats = {f"pair{k}": base[2 * k : 2 * k + 2] for k in range(5)} | {"extreme": ["top1", "top2"]}
    return _context(
        [*map(float, range(12))], [*TWO_DRIVERS_Y, 10.0, 11.0], [*base, "top1", "top2"], cats
    )


def _scipy_loo(ctx: ClaimContext) -> dict[str, tuple[float, float]]:
    """The independent answer: scipy's Spearman of the table without each model."""
    names = ctx.table.models
    x = ctx.table.column("bias", names)
    y = ctx.table.column("acc", names)
    out = {}
    for i, m in enumerate(names):
        r = stats.spearmanr(np.delete(x, i), np.delete(y, i))
        out[m] = (float(r.statistic), float(r.pvalue))
    return out


# -- one model drives the correlation -----------------------------------------------------------
def test_the_construction_holds(one_driver, two_drivers):
    full = stats.spearmanr(
        one_driver.table.column("bias", one_driver.table.models),
        one_driver.table.column("acc", one_driver.table.models),
    )
    assert full.pvalue < 0.05
    loo = _scipy_loo(one_driver)
    assert [m for m, (_, p) in loo.items() if p >= 0.05] == ["driver"]
    loo2 = _scipy_loo(two_drivers)
    assert all(p < 0.05 for _, p in loo2.values())
    without_both = stats.spearmanr(np.arange(10.0), TWO_DRIVERS_Y)
    assert without_both.pvalue >= 0.05


def test_one_model_drives_the_correlation(one_driver):
    claim = _claim("corr_stat", SIGNIFICANT)
    outcome = evaluate(claim, one_driver)
    assert outcome.verdict == "reproduced"
    rob = robustness(outcome, one_driver)
    assert rob.method == GENERIC
    assert rob.flips == ["driver"]
    ref = _scipy_loo(one_driver)
    values = {v.left_out: v.value for v in rob.models}
    assert values == pytest.approx({m: rho for m, (rho, _) in ref.items()}, rel=1e-12)
    assert rob.range == (min(values.values()), max(values.values()))
    # categories: "solo" is the driver alone; the others are checked against scipy
    cats = one_driver.model_categories
    names = one_driver.table.models
    expect = []
    for cat, members in cats.items():
        keep = [i for i, m in enumerate(names) if m not in members]
        p = stats.spearmanr(
            one_driver.table.column("bias", [names[i] for i in keep]),
            one_driver.table.column("acc", [names[i] for i in keep]),
        ).pvalue
        if not p < 0.05:
            expect.append(cat)
    assert "solo" in expect and rob.category_flips == expect
    js = rob.as_json()
    assert js["leave_one_model_out"]["flips"] == ["driver"]
    assert js["leave_one_category_out"]["flips"] == expect
    assert js["qualitative_flips"] == ["driver"]  # the policy is qualitative itself
    x, y = outcome.result.paired
    assert js["permutation_p"] == permutation_p(x, y) and 0 < js["permutation_p"] < 0.05


def test_rounding_fragility_is_not_the_claim_failing(one_driver):
    """Judged by rounding rho to two decimals, many single models move it out of +-0.005; its
    qualitative content (positive and significant) breaks only without the driver."""
    rho = evaluate(_claim("corr_stat", SIGNIFICANT), one_driver).result.value
    claim = _claim(
        "corr_stat",
        Tolerance("rounding", {"decimals": 2}, "two decimals"),
        round(rho, 2),
        qualitative=SIGNIFICANT,
    )
    outcome = evaluate(claim, one_driver)
    assert outcome.verdict == "reproduced"
    rob = robustness(outcome, one_driver)
    ref = _scipy_loo(one_driver)
    moved = [m for m, (r, _) in ref.items() if abs(r - round(rho, 2)) > 0.005]
    assert rob.flips == moved and len(moved) >= 5
    assert rob.qualitative_verdict == "reproduced" and rob.qualitative_flips == ["driver"]


def test_a_category_drives_the_correlation(two_drivers):
    outcome = evaluate(_claim("corr_stat", SIGNIFICANT), two_drivers)
    rob = robustness(outcome, two_drivers)
    assert outcome.verdict == "reproduced"
    assert rob.flips == []
    assert rob.category_flips == ["extreme"]
    by_cat = {v.left_out: v for v in rob.categories}
    assert by_cat["extreme"].value == pytest.approx(
        stats.spearmanr(np.arange(10.0), TWO_DRIVERS_Y).statistic
    )


def test_without_models_excludes_from_population_and_groups(two_drivers):
    two_drivers.spec = _spec(
        {"total": Selector(), "listed": Selector(models=("b0", "b1", "b2", "top1"))}
    )
    ctx = two_drivers.without_models(["top1", "b0"], intervals=False)
    assert ctx.left_out == ("top1", "b0")
    assert "top1" not in ctx.analysis.population and len(ctx.analysis.population) == 10
    assert ctx.analysis.groups["listed"] == ["b1", "b2"]
    assert ctx.table.has(
        "top1", "bias"
    )  # the row stays: a statistic naming the model still reads it
    corr = ctx.analysis.cell("bias", "acc", "total").corr
    assert np.isnan(corr.interval).all() and corr.method.startswith("no interval")
    assert (
        two_drivers.analysis.cell("bias", "acc", "total").corr.n == 12
    )  # the original is untouched


def test_an_undefined_recomputation_counts_as_a_change(two_drivers):
    """A group of three models: without any of them the correlation is undefined (n = 2)."""
    two_drivers.spec = _spec({"total": Selector(), "three": Selector(models=("b0", "b5", "top2"))})
    claim = _claim(
        "corr_stat",
        Tolerance("sign_significance", {"sign": "+", "alpha": 1.0}, "positive"),
        params={"group": "three"},
    )
    outcome = evaluate(claim, two_drivers)
    assert outcome.verdict == "reproduced"
    rob = robustness(outcome, two_drivers)
    assert rob.flips == ["b0", "b5", "top2"]
    assert {v.verdict for v in rob.models} == {UNDEFINED} and all(
        v.value is None for v in rob.models
    )
    assert "at least 3" in rob.models[0].why


# -- a study without an analysis definition ------------------------------------------------------
def _rows_context(values: list[float]) -> ClaimContext:
    table = ModelTable({f"m{i}": {"score": v} for i, v in enumerate(values)}, origin="<rows>")
    return ClaimContext(_study(), Path("."), table, {}, spec=None)


def test_population_is_the_table_rows_without_an_analysis():
    ctx = _rows_context([0.5, 0.5, 0.5, 0.9])
    claim = _claim(
        "mean_stat", Tolerance("rounding", {"decimals": 1}, "one decimal"), 0.6, {"column": "score"}
    )
    outcome = evaluate(claim, ctx)
    rob = robustness(outcome, ctx)
    assert outcome.verdict == "reproduced" and rob.method == GENERIC
    assert rob.flips == ["m3"]  # mean 0.5 without it; 0.633 without any other
    assert rob.range == pytest.approx((0.5, 1.9 / 3))
    assert rob.categories is None and rob.as_json()["leave_one_category_out"] == {"flips": None}
    assert rob.qualitative_flips is None and rob.permutation_p is None
    assert ctx.without_models(["m3"]).table.models == ["m0", "m1", "m2"]


def test_fast_path_equals_recomputing():
    ctx = _rows_context([0.5, 0.5, 0.5, 0.9, 0.62])
    fast = _claim(
        "mean_stat_fast",
        Tolerance("rounding", {"decimals": 1}, "one decimal"),
        0.6,
        {"column": "score"},
    )
    rob_fast = robustness(evaluate(fast, ctx), ctx)
    assert rob_fast.method == FAST
    # a tolerance reading a detail the fast path does not give: recomputed instead
    slow = _claim(
        "mean_stat_fast",
        Tolerance("rounding", {"decimals": 1, "also": {"largest": 0.9}}, "-"),
        0.6,
        {"column": "score"},
    )
    ctx2 = _rows_context([0.5, 0.5, 0.5, 0.9, 0.62])
    rob_slow = robustness(evaluate(slow, ctx2), ctx2)
    assert rob_slow.method == GENERIC
    assert [v.value for v in rob_fast.models] == pytest.approx(
        [v.value for v in rob_slow.models], rel=1e-12
    )
    # removing m3 drops the largest value: the `also` check fails there only
    assert rob_fast.flips == ["m3"] and rob_slow.flips == ["m3"]


def test_a_failing_statistic_is_undefined_not_robust():
    ctx = _rows_context([0.5, 0.5, 0.5, 0.5])
    claim = _claim(
        "mean_stat",
        Tolerance("rounding", {"decimals": 1}, "-"),
        0.5,
        {"column": "score", "min_rows": 4},
    )
    rob = robustness(evaluate(claim, ctx), ctx)
    assert rob.flips == ["m0", "m1", "m2", "m3"] and rob.range is None
    assert rob.as_json()["leave_one_model_out"] == {
        "min": None,
        "max": None,
        "flips": ["m0", "m1", "m2", "m3"],
    }

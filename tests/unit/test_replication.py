"""Replication uncertainty of a claim (``repro.diagnostics.replication``,
``repro.diagnostics.counts``,
``repro.analysis.redraws``) on constructed tables whose answer is known:

- one binomial rate against a rounding window: P(verdict) is a binomial CDF difference;
- a Spearman claim on a constructed 12-model table: P(verdict) against an independent
  simulation (scipy's ``spearmanr`` on numpy's binomial redraws, the bias correction done by
  hand);
- the draws themselves: binomial, PGD-like offset, multinomial shape/texture, ratio, and the
  subset draws' finite-population variance (hypergeometric) against their closed forms;
- the vectorised building blocks against scipy, the correction against its definition;
- what is not replicated, and why (no count model, held columns only, an unchecked verdict).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from repro.analysis.correlation import spearman_p
from repro.analysis.redraws import Redraws, Replicates, debiased, spearman_matrices, spearman_rows
from repro.analysis.result import StatisticResult
from repro.analysis.spec import AnalysisSpec, Derived, Group, Selector
from repro.base.errors import ConfigError
from repro.base.study import Study
from repro.base.table import ModelTable
from repro.claims.check import evaluate
from repro.claims.context import ClaimContext
from repro.claims.spec import Claim, Tolerance
from repro.diagnostics.counts import draw, read_count_model, shape_texture_denominators
from repro.diagnostics.replication import FAST, GENERIC, replicate_verdicts, replication

pytestmark = pytest.mark.unit

HERE = "tests.unit.test_replication"
B = 4000  # redraws: Monte Carlo error of a probability at most 0.5 / sqrt(B) = 0.008


# -- statistics the constructed claims name ---------------------------------------------------
def rate_stat(ctx, *, model: str, column: str) -> StatisticResult:
    """One model's value (no vectorised replicates: recomputed on each redrawn
    table); NaN stays NaN."""
    v = float(ctx.table.values[model][column])
    return StatisticResult(
        value=v, n=1, per_model={model: {column: v}}, sources={column: "published"}
    )


def rate_stat_fast(ctx, *, model: str, column: str) -> StatisticResult:
    """``rate_stat`` with vectorised replicates (the correction moves them by
    their bootstrap bias)."""
    res = rate_stat(ctx, model=model, column=column)

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        v = r.column(column, [model])[:, 0]
        return Replicates(debiased(v, res.value) if correct else v)

    res.replicate = replicate
    return res


def corr_stat(ctx, *, group: str = "total") -> StatisticResult:
    """Spearman's rho of bias with acc, with vectorised replicates (rho corrected, p recomputed)."""
    a = ctx.analysis
    corr = a.cell("bias", "acc", group).corr
    models = a.groups[group]

    def replicate(r: Redraws, correct: bool = True) -> Replicates:
        rho, p = spearman_rows(r.column("bias", models), r.column("acc", models))
        if correct:
            rho = np.clip(debiased(rho, corr.rho), -1, 1)
            p = spearman_p(rho, len(models))
        return Replicates(rho, p)

    return StatisticResult(
        value=corr.rho,
        p=corr.p,
        n=corr.n,
        per_model={m: {} for m in models},
        sources=a.sources_of("bias", "acc"),
        replicate=replicate,
    )


# -- builders -----------------------------------------------------------------------------------
def _count_model(tmp_path: Path, families: str, resamples: int = B) -> Path:
    path = tmp_path / "replication.toml"
    path.write_text(f"resamples = {resamples}\nseed = 3\n" + families)
    return path


ACC = """
[[family]]
id = "acc"
kind = "binomial"
columns = ["acc"]
n = 200
why = "200 items"
"""
BIAS = """
[[family]]
id = "bias"
kind = "binomial"
columns = ["bias"]
n = 100
why = "100 items"
"""
HELD = """
[[family]]
id = "fitted"
kind = "held"
columns = ["fit"]
why = "only fitted values are published"
"""


def _study(replication: Path | None) -> Study:
    return Study(
        name="constructed",
        title="C",
        citation="-",
        folder=Path("."),
        claims=Path("claims.toml"),
        replication=replication,
    )


def _spec() -> AnalysisSpec:
    return AnalysisSpec(
        name="c",
        alpha=0.05,
        population=Selector(model_categories="all"),
        groups={"total": Group("total", "Total", Selector())},
        categories={"acc": Derived("acc", "Acc", ("acc",))},
        biases={"bias": Derived("bias", "Bias", ("bias",))},
        benchmarks={},
        resamples=0,
    )


def _claim(statistic: str, tolerance: Tolerance, published: float | None = None, **params) -> Claim:
    return Claim(
        id="c",
        study="constructed",
        statement="-",
        source="-",
        statistic=f"{HERE}:{statistic}",
        params=params,
        published=published,
        tolerance=tolerance,
        version=1,
    )


ROUND_1 = Tolerance("rounding", {"decimals": 1}, "one decimal")


# -- one binomial rate: P(verdict) is a binomial CDF ---------------------------------------------
@pytest.mark.parametrize("value,published", [(0.55, 0.5), (0.47, 0.5), (0.61, 0.6)])
def test_one_rate_against_a_rounding_window_is_a_binomial_cdf(tmp_path, value, published):
    """The claim: the rate rounds to ``published`` (|v - published| <= 0.05). A new sample of
    200 items keeps that with P(90 <= k <= 110)-like binomial probability."""
    ctx = ClaimContext(
        _study(_count_model(tmp_path, ACC)), tmp_path, ModelTable({"m": {"acc": value}}), {}
    )
    outcome = evaluate(_claim("rate_stat", ROUND_1, published, model="m", column="acc"), ctx)
    lo, hi = np.ceil((published - 0.05) * 200 - 1e-9), np.floor((published + 0.05) * 200 + 1e-9)
    inside = stats.binom.cdf(hi, 200, value) - stats.binom.cdf(lo - 1, 200, value)
    exact = inside if outcome.verdict == "reproduced" else 1 - inside
    rep = replication(outcome, ctx)
    assert rep.method == GENERIC and rep.resamples == B and rep.seed == 3
    assert rep.p_verdict == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / B) + 1e-9)
    # the replication interval: the binomial quantiles of the rate (the correction moves it by
    # the Monte Carlo error of the redraws' mean only)
    q = stats.binom.ppf([0.025, 0.975], 200, value) / 200
    assert rep.interval[0] == pytest.approx(q[0], abs=0.011) and rep.interval[1] == pytest.approx(
        q[1], abs=0.011
    )


def test_fast_path_uncorrected_equals_recomputing_and_corrected_centres_on_the_value(tmp_path):
    ctx = ClaimContext(
        _study(_count_model(tmp_path, ACC)),
        tmp_path,
        ModelTable({"m": {"acc": 0.55}, "n": {"acc": 0.3}}),
        {},
    )
    fast = evaluate(_claim("rate_stat_fast", ROUND_1, 0.5, model="m", column="acc"), ctx)
    from repro.diagnostics.replication import count_model, make_redraws

    redraws, _ = make_redraws(ctx, count_model(ctx), resamples=300, seed=1)
    tols = [fast.tolerance]
    v_fast, (verdicts_fast,), how = replicate_verdicts(fast, ctx, redraws, tols, correct=False)
    v_gen, (verdicts_gen,), how_gen = replicate_verdicts(fast, ctx, redraws, tols, generic=True)
    assert (how, how_gen) == (FAST, GENERIC)
    np.testing.assert_array_equal(v_fast, v_gen)
    assert verdicts_fast == verdicts_gen
    v_corr, _, _ = replicate_verdicts(fast, ctx, redraws, tols)
    assert v_corr.mean() == pytest.approx(0.55, abs=1e-12)  # centred on the published value
    np.testing.assert_allclose(np.diff(v_corr), np.diff(v_fast))  # moved, not rescaled


# -- a Spearman claim against an independent simulation ------------------------------------------
X = np.array([0.10, 0.14, 0.18, 0.20, 0.25, 0.30, 0.33, 0.37, 0.42, 0.45, 0.52, 0.60])
Y = np.array([0.40, 0.38, 0.47, 0.41, 0.52, 0.45, 0.50, 0.58, 0.49, 0.61, 0.57, 0.63])


def _t_test_p(rho: np.ndarray, n: int) -> np.ndarray:
    """Spearman's p as scipy computes it (t test with n - 2 degrees of freedom), by hand."""
    t = rho * np.sqrt((n - 2) / np.maximum(1 - rho * rho, 1e-300))
    return 2 * stats.t.sf(np.abs(t), n - 2)


def test_spearman_claim_p_verdict_matches_an_independent_simulation(tmp_path):
    """Corrected: each redrawn rho moved by the redraws' mean bias, p recomputed from it."""
    names = [f"m{i}" for i in range(X.size)]
    table = ModelTable(
        {m: {"bias": float(x), "acc": float(y)} for m, x, y in zip(names, X, Y, strict=True)}
    )
    ctx = ClaimContext(
        _study(_count_model(tmp_path, ACC + BIAS, 2000)),
        tmp_path,
        table,
        {"all": names},
        spec=_spec(),
    )
    tol = Tolerance("sign_significance", {"sign": "+", "alpha": 0.001}, "positive, p < 0.001")
    outcome = evaluate(_claim("corr_stat", tol), ctx)
    rho_obs, p_obs = stats.spearmanr(X, Y)
    assert outcome.verdict == "reproduced" and outcome.result.value == pytest.approx(rho_obs)

    rep = replication(outcome, ctx)
    b = 2000
    rng = np.random.default_rng(12345)  # independent: another generator, scipy's correlation
    x_star = rng.binomial(100, X, size=(b, X.size)) / 100
    y_star = rng.binomial(200, Y, size=(b, Y.size)) / 200
    rho = np.array([stats.spearmanr(u, v).statistic for u, v in zip(x_star, y_star, strict=True)])
    assert np.nanmean(rho) < rho_obs - 0.01  # the attenuation the correction removes is real here
    corrected = np.clip(rho - (np.nanmean(rho) - rho_obs), -1, 1)
    kept = np.mean((corrected > 0) & (_t_test_p(corrected, X.size) < 0.001))
    uncorrected = np.mean((rho > 0) & (_t_test_p(rho, X.size) < 0.001))
    assert rep.method == FAST and rep.resamples == b
    mc = 4 * np.sqrt(kept * (1 - kept) / b) * np.sqrt(2)  # two independent Monte Carlo estimates
    assert rep.p_verdict == pytest.approx(kept, abs=mc)
    assert abs(kept - uncorrected) > 2 * mc  # the correction matters, so the test can tell
    expected = np.percentile(corrected, [2.5, 97.5])
    assert rep.interval[0] == pytest.approx(expected[0], abs=0.03)
    assert rep.interval[1] == pytest.approx(expected[1], abs=0.03)
    # uncorrected, the replicates are what recomputing gives (the verdicts of the simulation above)
    from repro.diagnostics.replication import count_model, make_redraws

    redraws, _ = make_redraws(ctx, count_model(ctx), resamples=200, seed=5)
    v_fast, (fast,), _ = replicate_verdicts(outcome, ctx, redraws, [tol], correct=False)
    v_gen, (gen,), how = replicate_verdicts(outcome, ctx, redraws, [tol], generic=True)
    assert how == GENERIC and fast == gen
    np.testing.assert_allclose(v_fast, v_gen, atol=1e-12)


# -- the draws against their closed forms ---------------------------------------------------------
def _model(tmp_path, text):
    return read_count_model(_count_model(tmp_path, text, resamples=1000))


def test_binomial_draw_mean_and_variance(tmp_path):
    model = _model(tmp_path, ACC.replace("n = 200", "n = 500\nscale = 100"))
    table = ModelTable({"a": {"acc": 30.0}, "b": {"acc": 80.0}, "c": {}})
    d = draw(model, table, ["a", "b", "c"], 20000, 0)
    acc = d["acc"]
    assert np.isnan(acc[:, 2]).all()  # no value, nothing drawn
    for j, p in enumerate([0.3, 0.8]):
        assert acc[:, j].mean() == pytest.approx(
            100 * p, abs=4 * 100 * np.sqrt(p * (1 - p) / 500 / 20000)
        )
        assert acc[:, j].var() == pytest.approx(100**2 * p * (1 - p) / 500, rel=0.05)
        assert np.allclose(acc[:, j] / 100 * 500, np.rint(acc[:, j] / 100 * 500))  # whole counts


def test_offset_denominator_maps_counts_like_the_pgd_quirk(tmp_path):
    """(robust + 48) / 50,048: the floor 48/50,048 and the top 1 are reachable, the mean kept."""
    text = ACC.replace("n = 200", "n = 50000\ndenominator = 50048\noffset = 48\nscale = 100")
    model = _model(tmp_path, text)
    value = 100 * (20000 + 48) / 50048
    d = draw(model, ModelTable({"a": {"acc": value}}), ["a"], 5000, 0)["acc"][:, 0]
    robust = d / 100 * 50048 - 48
    assert np.allclose(robust, np.rint(robust))
    assert robust.mean() == pytest.approx(20000, abs=4 * np.sqrt(50000 * 0.4 * 0.6 / 5000))
    assert robust.var() == pytest.approx(50000 * 0.4 * 0.6, rel=0.06)


def test_subset_draws_have_the_finite_population_variance(tmp_path):
    """Hypergeometric: var = p (1 - p) / s * (N - s) / (N - 1); the full set gives the value."""
    model = _model(tmp_path, ACC.replace("n = 200", "n = 1000"))
    table = ModelTable({"a": {"acc": 0.25}})
    for s in (100, 500, 900):
        d = draw(model, table, ["a"], 20000, 0, subset={"acc": s})["acc"][:, 0]
        fpc = 0.25 * 0.75 / s * (1000 - s) / (1000 - 1)
        assert d.mean() == pytest.approx(0.25, abs=4 * np.sqrt(fpc / 20000))
        assert d.var() == pytest.approx(fpc, rel=0.05)
    full = draw(model, table, ["a"], 50, 0, subset={"acc": 1000})["acc"]
    assert np.all(full == 0.25)
    random = read_count_model(
        _count_model(tmp_path, ACC.replace("n = 200", "n = 1000\nrandom = true"), 1000)
    )
    d = draw(random, table, ["a"], 20000, 0, subset={"acc": 900})["acc"][:, 0]
    assert d.var() == pytest.approx(0.25 * 0.75 / 900, rel=0.05)  # a new sample: no correction
    with pytest.raises(ConfigError, match="subset of 1001 items, expected 1..1000"):
        draw(model, table, ["a"], 5, 0, subset={"acc": 1001})


SHAPE = """
[[family]]
id = "shape"
kind = "shape_texture"
columns = ["sb"]
n = 1200
why = "1,200 trials"
"""


def test_shape_texture_denominators_pinned_or_assumed():
    x = np.array([161 / 767, 5 / 16, 85 / 396, 0.0, np.nan, 608 / 747])
    dens, assumed = shape_texture_denominators(x, 1200)
    # 767 and 747 pin S + T (more than half of 1,200); median 757: 16 -> 752 (47 x
    # 16), 396 -> 792, 0/1 -> 757
    assert dens[0] == 767 and dens[5] == 747
    assert (
        dens[1] == 752 and dens[2] == 792 and assumed == {1: (752, 16), 2: (792, 396), 3: (757, 1)}
    )
    assert dens[4] == 0


def test_shape_texture_draw_is_a_multinomial_over_the_trials(tmp_path):
    model = _model(tmp_path, SHAPE)
    d = draw(model, ModelTable({"a": {"sb": 161 / 767}}), ["a"], 20000, 0)
    sb = d["sb"][:, 0]
    # S ~ Bin(1200, 161/1200), S + T ~ Bin(1200, 767/1200): delta-method variance of S / (S + T)
    p = 161 / 767
    assert sb.mean() == pytest.approx(p, abs=1e-3)
    assert sb.var() == pytest.approx(p * (1 - p) / 767, rel=0.06)
    sub = draw(
        model, ModelTable({"a": {"sb": 161 / 767}}), ["a"], 20000, 0, subset={"shape": 1200}
    )["sb"]
    assert np.all(sub == 161 / 767)  # every trial: the published ratio itself


RATIO = (
    ACC.replace("n = 200", "n = 10000\nscale = 100")
    + """
[[family]]
id = "low"
kind = "ratio"
measurement = "spectral"
columns = ["r1", "r2"]
clean = "acc"
clean_scale = 100
n = 10000
why = "filtered / clean"
"""
)


def test_ratio_draw_shares_one_clean_count_per_model(tmp_path):
    model = _model(tmp_path, RATIO)
    table = ModelTable({"a": {"acc": 70.0, "r1": 0.5, "r2": 0.9}})
    d = draw(model, table, ["a"], 20000, 0)
    r1, r2 = d["r1"][:, 0], d["r2"][:, 0]
    # var(k_f / k_c) by the delta method, independent filtered and clean counts
    a_c, n = 0.7, 10000
    for r, x in ((0.5, r1), (0.9, r2)):
        a_f = r * a_c
        assert x.var() == pytest.approx(
            (a_f * (1 - a_f) + r * r * a_c * (1 - a_c)) / (n * a_c**2), rel=0.06
        )
    assert np.corrcoef(r1, r2)[0, 1] > 0.2  # the same clean count divides both
    # lazy: the ratio family alone was drawn, and drawing it again reads the same numbers
    assert d["r1"] is r1.base or np.shares_memory(d["r1"], r1)


def test_draws_do_not_depend_on_what_else_was_drawn(tmp_path):
    model = _model(tmp_path, RATIO + BIAS)
    table = ModelTable({"a": {"acc": 70.0, "r1": 0.5, "r2": 0.9, "bias": 0.3}})
    first = draw(model, table, ["a"], 100, 7)
    only_bias = first["bias"].copy()
    second = draw(model, table, ["a"], 100, 7)
    _ = second["r1"], second["acc"]
    np.testing.assert_array_equal(second["bias"], only_bias)
    np.testing.assert_array_equal(first["r1"], second["r1"])


@pytest.mark.parametrize(
    "text,match",
    [
        (ACC.replace('kind = "binomial"', 'kind = "poisson"'), "kind = 'poisson', expected one of"),
        (ACC.replace("n = 200", "n = 0"), "field 'n' = 0, expected an integer >= 1"),
        (
            ACC + ACC.replace('id = "acc"', 'id = "again"'),
            "column 'acc' is in families 'acc' and 'again'",
        ),
        (ACC.replace('why = "200 items"', ""), "field 'why' must be a non-empty string"),
        (ACC.replace("[[family]]", "[[family]]\nsize = 3"), "unknown field 'size'"),
        (RATIO.replace('clean = "acc"\n', ""), "a ratio family needs `clean`"),
    ],
)
def test_count_model_errors_name_the_file_and_field(tmp_path, text, match):
    with pytest.raises(ConfigError, match=match) as info:
        read_count_model(_count_model(tmp_path, text, 1000))
    assert "replication.toml" in str(info.value)


def test_count_model_needs_at_least_1000_resamples(tmp_path):
    with pytest.raises(ConfigError, match="resamples = 999, expected an integer >= 1000"):
        read_count_model(_count_model(tmp_path, ACC, 999))


# -- the vectorised building blocks ---------------------------------------------------------------
def test_spearman_rows_and_matrices_equal_scipy():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, size=(50, 15)).astype(float)  # ties on purpose
    y = x + rng.normal(0, 2, size=x.shape)
    x[3] = 1.0  # a constant row: undefined
    rho, p = spearman_rows(x, y)
    assert np.isnan(rho[3]) and np.isnan(p[3])
    for b in [i for i in range(50) if i != 3]:
        ref = stats.spearmanr(x[b], y[b])
        assert rho[b] == pytest.approx(ref.statistic, abs=1e-12)
        assert p[b] == pytest.approx(ref.pvalue, rel=1e-9)
    fixed = np.broadcast_to(
        y[0], y.shape
    )  # a row repeated (not redrawn): ranked once, the same numbers
    np.testing.assert_allclose(
        spearman_rows(x, fixed)[0], spearman_rows(x, np.array(fixed))[0], atol=1e-15
    )
    data = rng.normal(size=(4, 20, 5))
    m = spearman_matrices(data)
    for b in range(4):
        np.testing.assert_allclose(m[b], stats.spearmanr(data[b]).statistic, atol=1e-12)


def test_debiased_moves_each_column_to_its_observed_mean_and_keeps_nan():
    s = np.array([[1.0, 10.0], [3.0, np.nan], [5.0, 14.0]])
    out = debiased(s, np.array([2.0, 20.0]))
    np.testing.assert_allclose(out[:, 0], [0.0, 2.0, 4.0])
    assert np.isnan(out[1, 1]) and out[0, 1] == 18.0 and out[2, 1] == 22.0


# -- what is not replicated -----------------------------------------------------------------------
def test_no_count_model_held_columns_and_unchecked_verdicts_say_why(tmp_path):
    table = ModelTable({"m": {"acc": 0.55, "fit": 2.0}})
    none = ClaimContext(_study(None), tmp_path, table, {})
    o = evaluate(_claim("rate_stat", ROUND_1, 0.5, model="m", column="acc"), none)
    r = replication(o, none)
    assert r.p_verdict is None and "declares no count model" in r.note
    ctx = ClaimContext(_study(_count_model(tmp_path, ACC + HELD)), tmp_path, table, {})
    held = evaluate(
        _claim(
            "rate_stat", Tolerance("rounding", {"decimals": 0}, "-"), 2.0, model="m", column="fit"
        ),
        ctx,
    )
    r = replication(held, ctx)
    assert (
        r.p_verdict is None
        and r.held == ("fitted",)
        and "only fitted values are published" in r.note
    )
    nan = ClaimContext(ctx.study, tmp_path, ModelTable({"m": {"acc": float("nan")}}), {})
    undefined = evaluate(_claim("rate_stat", ROUND_1, 0.5, model="m", column="acc"), nan)
    assert undefined.verdict == "undefined"
    r = replication(undefined, nan)
    assert r.p_verdict is None and "the verdict is undefined" in r.note
    assert r.as_json()["kind"] == "replication"

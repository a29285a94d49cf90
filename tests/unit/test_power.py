"""The gate's power (``repro.diagnostics.power``) on constructed tables whose answer is known:

- the agreement shift that one model's test detects with 80% power: against an independent
  simulation of the difference (normal draws, the margin and the Holm threshold applied by
  hand), and the margin itself without noise; the same for every model shifted together;
- the smallest shift that moves a claim's verdict: one rate in a rounding window (closed form:
  the distance to the window's edge), and a Spearman claim over 10 models against scipy's own
  ``spearmanr`` tried at every shift where the model meets another's value (the only places a
  rank statistic can change); a rank statistic does not move when every model shifts;
- the noise of a subset run: the hypergeometric variance (finite-population correction).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from repro.analysis.result import StatisticResult
from repro.analysis.spec import AnalysisSpec, Derived, Group, Selector
from repro.base.study import Study
from repro.base.table import ModelTable
from repro.claims.check import evaluate
from repro.claims.context import ClaimContext
from repro.claims.spec import Claim, Tolerance
from repro.diagnostics.counts import Family, noise_sd, read_count_model
from repro.diagnostics.power import (
    POWER,
    claim_shifts,
    detectable_shift,
    detectable_shift_all,
    scopes,
)

pytestmark = pytest.mark.unit

HERE = "tests.unit.test_power"


def value_stat(ctx, *, model: str, column: str) -> StatisticResult:
    v = float(ctx.table.values[model][column])
    return StatisticResult(
        value=v, n=1, per_model={model: {column: v}}, sources={column: "published"}
    )


def corr_stat(ctx) -> StatisticResult:
    a = ctx.analysis
    corr = a.cell("bias", "acc", "total").corr
    return StatisticResult(
        value=corr.rho,
        p=corr.p,
        n=corr.n,
        per_model={m: {} for m in a.groups["total"]},
        sources=a.sources_of("bias", "acc"),
    )


def _claim(statistic: str, tolerance: Tolerance, published=None, **params) -> Claim:
    return Claim(
        id=statistic,
        study="c",
        statement="-",
        source="-",
        statistic=f"{HERE}:{statistic}",
        params=params,
        published=published,
        tolerance=tolerance,
        version=1,
        measured_tolerance=tolerance,
    )  # the gate judges measured inputs by the same rule here


COUNTS = """resamples = 1000
seed = 0
[[family]]
id = "acc"
kind = "binomial"
measurement = "acc"
columns = ["acc"]
n = 1000
why = "1,000 items"
[[family]]
id = "bias"
kind = "binomial"
measurement = "bias"
columns = ["bias"]
n = 1000
why = "1,000 items"
"""


def _ctx(
    tmp_path: Path, table: ModelTable, spec: AnalysisSpec | None = None, cats=None
) -> ClaimContext:
    path = tmp_path / "replication.toml"
    path.write_text(COUNTS)
    study = Study(
        name="c",
        title="C",
        citation="-",
        folder=Path("."),
        claims=Path("claims.toml"),
        replication=path,
    )
    return ClaimContext(study, tmp_path, table, cats or {}, spec=spec)


# -- agreement: the detectable shift against a simulation ----------------------------------------
@pytest.mark.parametrize(
    "margin,sd,models", [(0.1, 0.05, 48), (0.5, 0.29, 48), (0.0, 0.2, 1), (0.3, 0.01, 10)]
)
def test_detectable_shift_has_80_percent_power_by_simulation(margin, sd, models):
    d = detectable_shift(margin, sd, models)
    c = max(
        margin, stats.norm.isf(0.05 / models / 2) * sd
    )  # by hand: the margin and Holm's first threshold
    rng = np.random.default_rng(1)
    observed = rng.normal(d, sd, 400_000)
    power = np.mean(np.abs(observed) > c)
    assert power == pytest.approx(POWER, abs=0.004)
    assert detectable_shift(margin, sd, 2 * models) >= d  # more models, a stricter threshold
    assert d > margin


def test_without_noise_the_margin_is_the_detectable_shift():
    assert detectable_shift(0.1, 0.0, 48) == 0.1
    assert detectable_shift_all(0.1, [0.0, 0.0]) == 0.1


def test_every_model_shifted_is_detected_sooner_than_one():
    sds = [0.2, 0.25, 0.3, 0.22, 0.28]
    d_all = detectable_shift_all(0.0, sds)
    c = [stats.norm.isf(0.05 / 5 / 2) * s for s in sds]
    rng = np.random.default_rng(2)
    hits = np.zeros(200_000, dtype=bool)
    for ci, s in zip(c, sds, strict=True):
        hits |= np.abs(rng.normal(d_all, s, hits.size)) > ci
    assert hits.mean() == pytest.approx(POWER, abs=0.005)
    assert d_all < min(detectable_shift(0.0, s, 5) for s in sds)


# -- claims: the smallest shift that moves a verdict ----------------------------------------------
ROUND_1 = Tolerance("rounding", {"decimals": 1}, "one decimal")


@pytest.mark.parametrize("value,expected", [(0.52, 0.03), (0.47, -0.02), (0.5, 0.05)])
def test_one_rate_moves_at_the_edge_of_its_window(tmp_path, value, expected):
    """|v - 0.5| <= 0.05: from v the nearest edge is the smaller of 0.55 - v and v - 0.45."""
    ctx = _ctx(tmp_path, ModelTable({"m": {"acc": value}, "other": {"acc": 0.9}}))
    o = evaluate(_claim("value_stat", ROUND_1, 0.5, model="m", column="acc"), ctx)
    (acc,) = [
        s for s in scopes(ctx.cache.get("replication.counts") or _counts(ctx)) if s.id == "acc"
    ]
    claims, searched, one, everyone = claim_shifts(ctx, [o], acc)
    assert claims == ("value_stat",)
    (shift,) = one  # the claim reads one model
    assert shift.model == "m" and shift.moved == ("value_stat",)
    assert abs(shift.delta) == pytest.approx(
        abs(expected), rel=0.01
    )  # grid and bisection: within 1%
    assert value == 0.5 or np.sign(shift.delta) == np.sign(
        expected
    )  # at 0.5 both edges are 0.05 away
    assert abs(everyone.delta) == pytest.approx(abs(expected), rel=0.01)


def _counts(ctx):
    from repro.diagnostics.replication import count_model

    return count_model(ctx)


X = np.arange(10, dtype=float) / 10
Y = np.array([0.10, 0.30, 0.20, 0.50, 0.40, 0.45, 0.70, 0.60, 0.90, 0.80])


def _spearman_verdict(x, y) -> bool:
    r = stats.spearmanr(x, y)
    return bool(r.statistic > 0 and r.pvalue < 0.001)


def _first_change(x, y, i, sign, top) -> float | None:
    """Independently: Spearman's verdict only changes where x[i] meets another model's value, so
    try each such shift (at the tie, and just beyond it) with scipy, nearest first."""
    ref = _spearman_verdict(x, y)
    meets = sorted(d for d in (x - x[i]) * sign if 0 < d <= top)
    for d in meets:
        for step in (d, d + 1e-9):
            shifted = x.copy()
            shifted[i] += sign * step
            if _spearman_verdict(shifted, y) != ref:
                return sign * step
    return None


def test_rank_claim_shifts_match_a_brute_force_scan(tmp_path):
    names = [f"m{i}" for i in range(10)]
    table = ModelTable(
        {m: {"bias": float(x), "acc": float(y)} for m, x, y in zip(names, X, Y, strict=True)}
    )
    spec = AnalysisSpec(
        name="c",
        alpha=0.05,
        population=Selector(model_categories="all"),
        groups={"total": Group("total", "Total", Selector())},
        categories={"acc": Derived("acc", "Acc", ("acc",))},
        biases={"bias": Derived("bias", "Bias", ("bias",))},
        benchmarks={},
        resamples=0,
    )
    ctx = _ctx(tmp_path, table, spec, {"all": names})
    tol = Tolerance("sign_significance", {"sign": "+", "alpha": 0.001}, "positive, p < 0.001")
    o = evaluate(_claim("corr_stat", tol), ctx)
    assert o.verdict == "reproduced"
    (bias,) = [s for s in scopes(_counts(ctx)) if s.id == "bias"]
    _, searched, one, everyone = claim_shifts(ctx, [o], bias)
    assert everyone.delta is None  # a rank statistic: a common shift moves nothing
    by_model = {s.model: s.delta for s in one}
    checked = 0
    for i, m in enumerate(names):
        options = [
            d
            for d in (_first_change(X, Y, i, +1, searched), _first_change(X, Y, i, -1, X[i]))
            if d is not None
        ]
        expected = min(options, key=abs) if options else None
        if expected is None:
            assert by_model[m] is None, m
            continue
        checked += 1
        assert by_model[m] is not None, m
        assert abs(by_model[m]) == pytest.approx(abs(expected), rel=1e-3), (
            m
        )  # the bisection's resolution
    assert checked >= 5  # most models can move it: the test could tell a wrong search


# -- the noise of a subset -----------------------------------------------------------------------
def test_subset_noise_is_hypergeometric():
    fam = Family("acc", "acc", "binomial", ("acc",), "-", n=1000, scale=100)
    table = ModelTable({"a": {"acc": 30.0}})
    for s in (10, 500, 999):
        sd = noise_sd(fam, table, ["a"], "acc", s)[0]
        assert sd == pytest.approx(100 * np.sqrt(stats.hypergeom(1000, 300, s).var()) / s, rel=1e-9)
    assert noise_sd(fam, table, ["a"], "acc", 1000)[0] == 0  # every item: no sampling noise
    assert noise_sd(fam, table, ["a"], "acc")[0] == pytest.approx(100 * np.sqrt(0.3 * 0.7 / 1000))


def test_held_families_are_one_scope_per_column(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(
        COUNTS
        + '[[family]]\nid = "fit"\nkind = "held"\ncolumns = ["fit/a", "fit/b"]\nwhy = "fitted"\n'
    )
    ids = [s.id for s in scopes(read_count_model(path))]
    assert ids == ["acc", "bias", "fit:a", "fit:b"]

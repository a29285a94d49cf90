"""The subset plan (``repro.planner.subset_plan``) on constructed tables whose answer is known:

- one rate in a rounding window, measured on a subset of its 2,000 items: P(kept) is the
  hypergeometric probability that the subset's rate stays in the window (scipy's
  ``hypergeom``, exact); the planned subset keeps it with at least the confidence, and one
  markedly smaller would not;
- the full set keeps every verdict exactly; a measurement no claim reads needs no image; a held
  family cannot be planned;
- the joint plan grows the subsets of measurements a claim reads together until every verdict
  is kept at once;
- the cost model's work scales with the subset's fraction.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from repro.analysis.result import StatisticResult
from repro.base.study import Study
from repro.base.table import ModelTable
from repro.claims.check import evaluate
from repro.claims.context import ClaimContext
from repro.claims.spec import Claim, Tolerance
from repro.diagnostics.replication import count_model
from repro.planner.subset_plan import (
    joint_plan,
    plan_measurement,
    resamples_for,
    scaled_work,
    wilson_lower,
)

pytestmark = pytest.mark.unit

HERE = "tests.unit.test_subset_plan"
N = 2000


def value_stat(ctx, *, model: str, column: str) -> StatisticResult:
    v = float(ctx.table.values[model][column])
    return StatisticResult(
        value=v, n=1, per_model={model: {column: v}}, sources={column: "published"}
    )


def sum_stat(ctx, *, model: str, columns: list[str]) -> StatisticResult:
    v = float(sum(ctx.table.values[model][c] for c in columns))
    return StatisticResult(
        value=v, n=1, per_model={model: {}}, sources={c: "published" for c in columns}
    )


def _claim(cid: str, statistic: str, tolerance: Tolerance, published: float, **params) -> Claim:
    return Claim(
        id=cid,
        study="c",
        statement="-",
        source="-",
        statistic=f"{HERE}:{statistic}",
        params=params,
        published=published,
        tolerance=tolerance,
        version=1,
        measured_tolerance=tolerance,
    )


FAMILIES = f'''resamples = 1000
seed = 0
[[family]]
id = "a"
kind = "binomial"
measurement = "meas_a"
columns = ["a"]
n = {N}
why = "{N} items"
[[family]]
id = "b"
kind = "binomial"
measurement = "meas_b"
columns = ["b"]
n = {N}
why = "{N} items"
[[family]]
id = "unread"
kind = "binomial"
measurement = "meas_unread"
columns = ["u"]
n = {N}
why = "read by no claim"
[[family]]
id = "fit"
kind = "held"
measurement = "meas_fit"
columns = ["fit"]
why = "only fitted values are published"
'''


def _ctx(tmp_path: Path, values: dict) -> ClaimContext:
    path = tmp_path / "replication.toml"
    path.write_text(FAMILIES)
    study = Study(
        name="c",
        title="C",
        citation="-",
        folder=Path("."),
        claims=Path("claims.toml"),
        replication=path,
    )
    return ClaimContext(study, tmp_path, ModelTable(values), {})


def _exact_kept(k: int, items: int, lo: float, hi: float) -> float:
    """P(lo <= subset rate <= hi) for a subset of ``items`` of the N items of which k count."""
    j = np.arange(0, items + 1)
    inside = (j / items >= lo - 1e-12) & (j / items <= hi + 1e-12)
    return float(stats.hypergeom(N, k, items).pmf(j)[inside].sum())


def test_one_rate_plan_against_the_exact_hypergeometric(tmp_path):
    ctx = _ctx(tmp_path, {"m": {"a": 0.53, "b": 0.2, "u": 0.5, "fit": 1.0}})
    tol = Tolerance("rounding", {"decimals": 1}, "one decimal: 0.45 <= v <= 0.55")
    o = evaluate(_claim("rate", "value_stat", tol, 0.5, model="m", column="a"), ctx)
    assert o.verdict == "reproduced"
    plan = plan_measurement(ctx, [o], count_model(ctx), "meas_a", 0.99, resamples=1000)
    assert plan.claims == ("rate",) and plan.full == N and plan.items is not None
    exact = _exact_kept(int(0.53 * N), plan.items, 0.45, 0.55)
    assert exact >= 0.99 - 0.004  # the plan's Monte Carlo bound holds by the exact probability
    assert wilson_lower(round(plan.p_kept * 1000), 1000) >= 0.99 and plan.p_lower >= 0.99
    smaller = int(plan.items / 1.3)
    assert (
        _exact_kept(int(0.53 * N), smaller, 0.45, 0.55) < 0.99
    )  # the plan is not grossly oversized
    # the agreement at that subset: noise-limited (the subset's sampling),
    # above the margin-free zero
    assert plan.agreement_one is None  # this study declares no margins: no agreement test applies


def test_the_full_set_unread_and_held_measurements(tmp_path):
    ctx = _ctx(tmp_path, {"m": {"a": 0.5499, "b": 0.2, "u": 0.5, "fit": 1.0}})
    tol = Tolerance("rounding", {"decimals": 1}, "one decimal")
    rate = evaluate(_claim("rate", "value_stat", tol, 0.5, model="m", column="a"), ctx)
    fit = evaluate(
        _claim(
            "fit",
            "value_stat",
            Tolerance("rounding", {"decimals": 0}, "-"),
            1.0,
            model="m",
            column="fit",
        ),
        ctx,
    )
    counts = count_model(ctx)
    # 0.5499 sits at the window's edge: only (nearly) every item keeps it
    edge = plan_measurement(ctx, [rate, fit], counts, "meas_a", 0.99, resamples=1000)
    assert edge.items is not None and edge.items > 0.95 * N
    unread = plan_measurement(ctx, [rate, fit], counts, "meas_unread", 0.99, resamples=1000)
    assert unread.items == 0 and "no claim reads it" in unread.note
    held = plan_measurement(ctx, [rate, fit], counts, "meas_fit", 0.99, resamples=1000)
    assert (
        held.items is None
        and held.claims == ("fit",)
        and "only fitted values are published" in held.note
    )
    assert held.fraction == 1.0


def test_joint_plan_grows_the_subsets_a_claim_reads_together(tmp_path):
    """A claim on a + b, each alone planned at 0.99: together it fails more often, so both grow."""
    ctx = _ctx(tmp_path, {"m": {"a": 0.27, "b": 0.26, "u": 0.5, "fit": 1.0}})
    tol = Tolerance("rounding", {"decimals": 1}, "0.45 <= a + b <= 0.55")
    both = evaluate(_claim("both", "sum_stat", tol, 0.5, model="m", columns=["a", "b"]), ctx)
    counts = count_model(ctx)
    plans = [
        plan_measurement(ctx, [both], counts, m, 0.99, resamples=1000) for m in ("meas_a", "meas_b")
    ]
    joint = joint_plan(ctx, [both], counts, plans, 0.99, resamples=1000)
    assert joint["p_lower"] >= 0.99
    assert set(joint["grown"]) == {"meas_a", "meas_b"} and 0 < joint["t"] < 1
    for p in plans:
        assert p.items < joint["items"][p.measurement] < N
    # independently: the sum of two hypergeometric rates at the joint subsets stays in the window
    rng = np.random.default_rng(7)
    na, nb = joint["items"]["meas_a"], joint["items"]["meas_b"]
    total = (
        rng.hypergeometric(int(0.27 * N), N - int(0.27 * N), na, 200_000) / na
        + rng.hypergeometric(int(0.26 * N), N - int(0.26 * N), nb, 200_000) / nb
    )
    assert np.mean((total >= 0.45 - 1e-12) & (total <= 0.55 + 1e-12)) >= 0.99 - 0.003
    own = (
        rng.hypergeometric(int(0.27 * N), N - int(0.27 * N), plans[0].items, 200_000)
        / plans[0].items
        + rng.hypergeometric(int(0.26 * N), N - int(0.26 * N), plans[1].items, 200_000)
        / plans[1].items
    )
    assert (
        np.mean((own >= 0.45 - 1e-12) & (own <= 0.55 + 1e-12)) < 0.99
    )  # why the joint plan had to grow


def test_resamples_resolve_the_confidence():
    assert resamples_for(0.99) == 1000 and resamples_for(0.999) == 10_000
    assert wilson_lower(resamples_for(0.999), resamples_for(0.999)) >= 0.999


def test_scaled_work_is_proportional():
    from repro.planner.cost import Work

    w = Work(
        "m",
        "d",
        "classify",
        images=1000,
        forward=29_000,
        backward=0,
        synthesized=28_000,
        decodes_published=29_000,
    )
    (s,) = scaled_work([w], {"m": 0.1})
    assert (s.images, s.forward, s.synthesized, s.decodes_published) == (100, 2900, 2800, 2900)
    (same,) = scaled_work([w], {})
    assert same == w

"""Undefined and incomplete are verdicts of their own, never "reproduced" (issue 9 items 1, 3).

- every tolerance policy returns ``undefined`` when a value it READS is NaN (the value, a cell's
  rho or p, a compared detail, the interval of ``correlation_interval``, a ``require`` detail),
  and judges normally when the NaN lies where it does not read (a leave-one-out context's
  deliberately missing interval);
- a NaN statistic is undefined under every policy; ``undefined`` and ``incomplete`` are never
  "as expected", even for a claim recorded as not reproducing;
- the robustness recomputations map verdicts through the checker's own function;
- provenance: each input value labelled, the claim incomplete when a value the run was to
  measure is failed or missing, or when the run measured none of its measurable inputs.

Inputs are chosen so that the old behaviour gives a different answer (e.g. ``null_all`` passed
with a NaN p: every "p < alpha" comparison with NaN is False).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from repro.analysis.result import LeaveOneOut, StatisticResult
from repro.base.table import ModelTable
from repro.claims import tolerance as tol
from repro.claims.check import evaluate, judge
from repro.claims.provenance import (
    FAILED,
    MEASURED,
    MISSING,
    PUBLISHED,
    Provenance,
    RunInputs,
    claim_provenance,
)
from repro.claims.spec import Claim, Tolerance
from repro.claims.verdict import INCOMPLETE, NOT_REPRODUCED, REPRODUCED, UNDEFINED, verdict_of
from tests.claim_fixtures import STAT, claim, ctx

pytestmark = pytest.mark.unit

NAN = float("nan")


def R(value, p=None, n=None, interval=None, **details):
    return StatisticResult(value=value, p=p, n=n, interval=interval, details=details)


def cell(rho, p):
    return {"rho": rho, "p": p, "n": 10, "interval": [NAN, NAN]}


# -------------------------------------------------------------- each policy reads NaN as undefined


def test_null_all_with_a_nan_p_is_undefined_not_passed():
    """The issue's case: a constant column gives NaN rho and p; 'nan < 0.05' is False, so the
    cell counted as 'not significant' and the null claim passed."""
    cells = {"id/total": cell(0.1, 0.6), "id/at": cell(NAN, NAN), "id/other": cell(-0.2, 0.3)}
    check = tol.null_all(None, R(0.3, **cells), {"alpha": 0.05})
    assert check.status == UNDEFINED and not check.passed and verdict_of(check) == UNDEFINED
    assert "id/at rho" in check.why and "id/at p" in check.why and "id/total" not in check.why
    # the same cells defined: passes (smallest p 0.3); one significant: fails
    cells["id/at"] = cell(0.05, 0.9)
    assert verdict_of(tol.null_all(None, R(0.3, **cells), {"alpha": 0.05})) == REPRODUCED
    cells["id/at"] = cell(0.7, 0.001)
    assert verdict_of(tol.null_all(None, R(0.001, **cells), {"alpha": 0.05})) == NOT_REPRODUCED


def test_sign_significance_reads_only_its_listed_cells():
    details = {"at": cell(-0.9, 1e-5), "other": cell(NAN, NAN)}
    read_nan = tol.sign_significance(
        None, R(-0.7, p=1e-6, **details), {"sign": "-", "cells": ["value", "other"]}
    )
    assert (
        read_nan.status == UNDEFINED and "other rho" in read_nan.why and "other p" in read_nan.why
    )
    not_read = tol.sign_significance(
        None, R(-0.7, p=1e-6, **details), {"sign": "-", "cells": ["value", "at"]}
    )
    assert not_read.status is None and not_read.passed
    # a NaN p of the headline alone (rho defined): undefined, not "FAILS"
    head = tol.sign_significance(None, R(-0.7, p=NAN), {"sign": "-"})
    assert head.status == UNDEFINED and head.why == "undefined (NaN): value p"
    # a curvilinear-style cell ('value' instead of 'rho')
    curvy = tol.sign_significance(
        None, R(-1.0, curv={"value": NAN, "p": 0.01}), {"sign": "-", "cells": ["curv"]}
    )
    assert curvy.status == UNDEFINED and "curv value" in curvy.why


def test_rounding_binomial_exact_details_and_require_read_nan_as_undefined():
    assert tol.rounding(0.5, R(NAN), {"decimals": 1}).status == UNDEFINED
    also = tol.rounding(0.5, R(0.5, other={"value": NAN}), {"decimals": 1, "also": {"other": 0.2}})
    assert also.status == UNDEFINED and also.why == "undefined (NaN): other"
    # a NaN detail the rounding does not compare is not read
    assert tol.rounding(0.5, R(0.52, other={"value": NAN}), {"decimals": 1}).passed
    assert tol.binomial(0.5, R(NAN, n=100), {}).status == UNDEFINED
    ex = tol.exact_details(None, R(1.0, k=NAN, first="a"), {"equal": {"k": 3, "first": "a"}})
    assert ex.status == UNDEFINED and ex.why == "undefined (NaN): k"
    assert tol.exact_details(None, R(1.0, k=NAN, first="a"), {"equal": {"first": "a"}}).passed
    t = Tolerance("rounding", {"decimals": 1, "require": {"k": 3}}, "r")
    c = Claim("t", "s", "st", "src", "m:f", {}, 0.5, t, 1)
    got = judge(c, R(0.5, k=np.float64("nan")), t)
    assert got.status == UNDEFINED and not got.passed


def test_correlation_interval_reads_the_interval_and_p_only_when_it_uses_them():
    params = {"alpha": 0.05}
    assert (
        tol.correlation_interval(-0.76, R(-0.7, p=1e-6, interval=(NAN, NAN)), params).status
        == UNDEFINED
    )
    assert (
        tol.correlation_interval(-0.76, R(-0.7, p=NAN, interval=(-0.9, -0.5)), params).status
        == UNDEFINED
    )
    # significance not asked: a NaN p is not read
    ok = tol.correlation_interval(
        -0.76, R(-0.7, p=NAN, interval=(-0.9, -0.5)), {"significant": False}
    )
    assert ok.status is None and ok.passed


def test_is_nan_recognises_numpy_and_ignores_non_numbers():
    assert tol.is_nan(NAN) and tol.is_nan(np.float32("nan")) and tol.is_nan(np.float64("nan"))
    assert not any(
        tol.is_nan(v)
        for v in (None, 0.0, 1, True, "nan", [NAN], {"rho": NAN}, np.array([NAN, 1.0]))
    )


def test_verdict_of_maps_status_then_passed():
    assert (
        verdict_of(tol.Check(True, "")) == REPRODUCED
        and verdict_of(tol.Check(False, "")) == NOT_REPRODUCED
    )
    assert verdict_of(tol.Check(False, "", UNDEFINED)) == UNDEFINED
    assert verdict_of(tol.Check(False, "", INCOMPLETE)) == INCOMPLETE
    assert verdict_of(tol.Check(True, "", INCOMPLETE)) == INCOMPLETE  # status wins over passed
    with pytest.raises(ValueError, match="unknown check status 'weird'"):
        verdict_of(tol.Check(True, "", "weird"))


# --------------------------------------------------------------------------------- the checker


POLICIES = [
    Tolerance("rounding", {"decimals": 2}, "r"),
    Tolerance("sign_significance", {"sign": "-"}, "s"),
    Tolerance("binomial", {"n": 100}, "b"),
    Tolerance("correlation_interval", {}, "c"),
    Tolerance("null_all", {}, "n"),
    Tolerance("exact_details", {"equal": {"k": 1}}, "e"),
]


@pytest.mark.parametrize("policy", POLICIES, ids=[t.policy for t in POLICIES])
@pytest.mark.parametrize("expected", ["reproduced", "not_reproduced"])
def test_a_nan_statistic_is_undefined_under_every_policy_and_never_as_expected(
    policy, expected, tmp_path
):
    params = {"value": NAN, "p": 0.01, "details": {"k": 1, "c": {"rho": 0.1, "p": 0.5}}}
    out = evaluate(claim(params, policy, expected=expected), ctx(tmp_path))
    assert out.verdict == UNDEFINED and not out.reproduced and not out.as_expected
    assert out.check.why == "undefined (NaN): the statistic"
    assert out.as_json()["measured"] is None and out.as_json()["verdict"] == UNDEFINED
    assert out.snapshot()["verdict"] == UNDEFINED


def test_an_incomplete_claim_is_never_as_expected(tmp_path):
    inputs = RunInputs(
        False,
        frozenset({"a", "b"}),
        {"shape-bias": "shape_bias"},
        {
            ("a", "shape-bias"): (MEASURED, ""),
            ("b", "shape-bias"): (FAILED, "b x shape_bias failed: boom"),
        },
    )
    params = {
        "value": 0.5,
        "per_model": {"a": {"s": 1}, "b": {"s": 2}, "c": {"s": 3}},
        "sources": {"shape-bias": "measured"},
    }
    for expected in ("reproduced", "not_reproduced"):
        out = evaluate(claim(params, POLICIES[0], expected=expected), ctx(tmp_path, inputs=inputs))
        assert out.verdict == INCOMPLETE and not out.as_expected and not out.reproduced
        assert out.check.why.startswith(
            "not checked on our measurements: 1 input value(s) failed "
            "(shape-bias of b: b x shape_bias failed: boom)"
        )
        assert "[on the values there: value 0.5000 within 0.5" in out.check.why
        assert out.provenance.counts() == {
            MEASURED: 1,
            PUBLISHED: 1,
            FAILED: 1,
        }  # c is not a model of the run
    complete = RunInputs(
        False,
        frozenset({"a", "b"}),
        {"shape-bias": "shape_bias"},
        {("a", "shape-bias"): (MEASURED, ""), ("b", "shape-bias"): (MEASURED, "")},
    )
    out = evaluate(claim(params, POLICIES[0]), ctx(tmp_path, inputs=complete))
    assert out.verdict == REPRODUCED and out.provenance.counts() == {MEASURED: 2, PUBLISHED: 1}


def test_an_incomplete_check_is_the_bool_false_with_its_whole_reason(tmp_path):
    inputs = RunInputs(
        False,
        frozenset({"a", "b", "c"}),
        {"shape-bias": "shape_bias"},
        {("a", "shape-bias"): (MEASURED, ""), ("b", "shape-bias"): (FAILED, "boom")},
    )
    params = {
        "value": 0.5,
        "per_model": {"a": {"s": 1}, "b": {"s": 2}, "c": {"s": 3}},
        "sources": {"shape-bias": "measured"},
    }
    out = evaluate(claim(params, POLICIES[0]), ctx(tmp_path, inputs=inputs))
    assert out.check.passed is False and out.check.status == INCOMPLETE
    # each problem, then the check as it stood on the values there
    assert out.check.why == (
        "not checked on our measurements: 1 input value(s) failed (shape-bias of b: boom); "
        "1 input value(s) missing (shape-bias of c: c x shape_bias: no record in the store) "
        "[on the values there: value 0.5000 within 0.5 +- 0.005]"
    )


# --------------------------------------------------------------------------------- provenance


def test_run_inputs_label_each_value():
    inputs = RunInputs(
        False,
        frozenset({"a", "b", "c"}),
        {"shape-bias": "shape_bias"},
        {("a", "shape-bias"): (MEASURED, ""), ("b", "shape-bias"): (FAILED, "b failed: x")},
    )
    assert inputs.label("a", "shape-bias") == (MEASURED, "")
    assert inputs.label("b", "shape-bias") == (FAILED, "b failed: x")
    assert inputs.label("c", "shape-bias") == (MISSING, "c x shape_bias: no record in the store")
    assert inputs.label("d", "shape-bias") == (PUBLISHED, "")  # not a model of the run
    assert inputs.label("a", "top1_acc/imagenet") == (PUBLISHED, "")  # not a column of the run


def test_claim_provenance_counts_and_names_the_problems():
    models = [f"m{i}" for i in range(6)]
    cells = {(m, "shape-bias"): (MISSING, f"{m}: gone") for m in models[:5]}
    inputs = RunInputs(False, frozenset(models), {"shape-bias": "shape_bias"}, cells)
    result = StatisticResult(
        0.1,
        per_model={m: {} for m in models},
        sources={"shape-bias": "measured", "top1_acc/imagenet": "published"},
    )
    prov = claim_provenance(result, inputs)
    assert prov.counts() == {PUBLISHED: 6, MISSING: 6}  # m5 has no record at all: missing too
    assert prov.by_column() == {"shape-bias": {MISSING: 6}, "top1_acc/imagenet": {PUBLISHED: 6}}
    assert prov.text() == "published 6, missing 6" and not prov.complete
    assert prov.problems == (
        "6 input value(s) missing (shape-bias of m0: m0: gone; shape-bias of m1: m1: gone; "
        "shape-bias of m2: m2: gone; +3 more)",
    )
    published = claim_provenance(result, None)
    assert published.counts() == {PUBLISHED: 12} and published.complete


def test_a_claim_the_run_measured_nothing_of_is_incomplete():
    """Measurable inputs (shape-bias: the shape_bias measurement), none measured in this run."""
    result = StatisticResult(
        0.2, per_model={"tv_resnet50": {}, "ssl_resnet50": {}}, sources={"shape-bias": "published"}
    )
    not_configured = RunInputs(
        False,
        frozenset({"tv_resnet50"}),
        {},
        {},
        {"shape_bias": "dataset cue_conflict not configured"},
    )
    prov = claim_provenance(result, not_configured)
    assert prov.counts() == {PUBLISHED: 2}
    assert prov.problems == (
        "none of its inputs was measured in this run: shape_bias (dataset cue_conflict not "
        "configured)",
    )
    other_models = RunInputs(False, frozenset({"resnet50_dino"}), {"shape-bias": "shape_bias"}, {})
    assert claim_provenance(result, other_models).problems == (
        "none of its inputs was measured in this run: shape_bias (measured for none of "
        "the models it reads)",
    )
    several = StatisticResult(
        0.2,
        per_model={"tv_resnet50": {}},
        sources={
            "shape-bias": "published",
            "top1_acc/imagenet": "published",
            "top1_acc/imagenet-v2": "published",
        },
    )
    mixed = RunInputs(
        False,
        frozenset({"resnet50_dino"}),
        {"shape-bias": "shape_bias"},
        {},
        {"imagenet_v2": "dataset imagenet_v2 not configured"},
    )
    assert claim_provenance(several, mixed).problems == (
        "none of its inputs was measured in this run: shape_bias (measured for none of "
        "the models it reads); "
        "imagenet (not measured in this run); imagenet_v2 (dataset imagenet_v2 not configured)",
    )
    # inputs no measurement produces (an ImageNet-X factor table): published
    # under any source, complete
    table = StatisticResult(
        0.7, per_model={"A": {}}, sources={"imagenetx/factor_accuracies/x/class": "published"}
    )
    assert claim_provenance(table, not_configured).complete


def test_provenance_labels_are_ordered_and_zero_counts_left_out():
    prov = Provenance({"c": {"a": FAILED, "b": PUBLISHED, "d": MEASURED}})
    assert list(prov.counts()) == [MEASURED, PUBLISHED, FAILED]
    assert Provenance({}).text() == "-"


# --------------------------------------------------------------------------------- robustness


def test_robustness_maps_leave_one_out_verdicts_through_the_checker():
    """The fast path: a NaN value or p without a model is undefined; the rest judged by the
    claim's own policy (sign_significance of a negative rho at p < 0.05)."""
    from repro.diagnostics import robustness as rob

    t = Tolerance("sign_significance", {"sign": "-"}, "s")
    c = Claim("t", "test", "s", "here", STAT, {}, -0.7, t, 1)
    loo = LeaveOneOut(
        ["a", "b", "c", "d"], np.array([-0.7, NAN, -0.6, 0.1]), np.array([0.01, 0.01, NAN, 0.5])
    )
    variants = rob._fast(c, loo, t, None)
    assert [v.verdict for v in variants] == [REPRODUCED, UNDEFINED, UNDEFINED, NOT_REPRODUCED]
    assert rob._verdict is not None and rob.judge is judge  # one judging function for both


def test_a_leave_one_out_context_without_intervals_is_judged_on_what_the_policy_reads(tmp_path):
    """Recomputations without bootstrap carry NaN intervals on purpose: a rounding claim reads
    the value only, so its verdict is defined; correlation_interval reads the interval."""
    r = R(-0.761, p=1e-9, interval=(NAN, NAN))
    c = Claim(
        "t", "test", "s", "here", STAT, {}, -0.76, Tolerance("rounding", {"decimals": 2}, "r"), 1
    )
    assert verdict_of(judge(c, r, c.tolerance)) == REPRODUCED
    assert verdict_of(judge(c, r, Tolerance("correlation_interval", {}, "c"))) == UNDEFINED


# ------------------------------------------------------------------------- analysis display of NaN


SPEC = """
name = "t"
alpha = 0.05
[population]
model_categories = "all"
[groups.total]
label = "Total"
[groups.a]
label = "A"
model_categories = ["a"]
[biases.b]
label = "B"
columns = ["b"]
[categories.x]
label = "X"
columns = ["x"]
[categories.y]
label = "Y"
columns = ["y"]
[benchmarks]
"""


def _analysis(values: dict[str, dict[str, float]], tmp_path: Path):
    from dataclasses import replace

    from repro.analysis.analysis import Analysis
    from repro.analysis.spec import load_spec

    (tmp_path / "t.toml").write_text(SPEC)
    spec = replace(load_spec(tmp_path / "t.toml"), resamples=0)  # no intervals needed here
    cats = {
        "a": [m for m in values if m.startswith("a")],
        "o": [m for m in values if not m.startswith("a")],
    }
    return Analysis(spec, ModelTable(values), cats)


def test_undefined_cells_are_nan_in_the_display_and_outside_the_correction_family(tmp_path):
    """Group 'a' has a constant bias: its cells are NaN (not 0), and Holm adjusts over the 4
    defined cells only (computed by hand from their p-values)."""
    from scipy import stats

    rng = np.random.default_rng(3)
    values = {
        f"a{i}": {"b": 0.5, "x": float(rng.normal()), "y": float(rng.normal())} for i in range(6)
    }
    values |= {
        f"o{i}": {"b": float(i), "x": float(i + rng.normal(0, 0.5)), "y": float(rng.normal())}
        for i in range(8)
    }
    an = _analysis(values, tmp_path)
    undefined = an.cell("b", "x", "a")
    assert math.isnan(undefined.corr.rho) and math.isnan(an.masked(undefined))
    total_x = an.cell("b", "x", "total")
    assert an.masked(total_x) == (total_x.corr.rho if total_x.corr.p < 0.05 else 0.0)
    adj = an.adjusted_p
    assert math.isnan(adj[("b", "x", "a")]["holm"]) and math.isnan(adj[("b", "y", "a")]["bh"])
    defined = [k for k in adj if k[2] == "total"]
    ps = sorted((an.cell(*k).corr.p, k) for k in defined)
    m = len(ps)  # 2 defined cells (x, y in Total): Holm = max over the step-down
    running = 0.0
    for j, (p, k) in enumerate(ps):
        running = max(running, min(1.0, (m - j) * p))
        assert adj[k]["holm"] == pytest.approx(running, rel=1e-12)
    bh = stats.false_discovery_control([p for p, _ in ps], method="bh")
    for (_, k), want in zip(ps, bh, strict=True):
        assert adj[k]["bh"] == pytest.approx(want, rel=1e-12)

"""What each claim's question needs beyond the paper's method (issue 21 items 1-4,
``repro.diagnostics.statements``), in the claims table, its statements and ``claims --json``; the
equivalence of the null claim recomputed by hand (Fisher z with the Bonett-Wright variance)."""

from __future__ import annotations

import json
import math

import pytest
from scipy import stats

pytestmark = pytest.mark.claims


def _statements(claim_id, outcomes, contexts):
    from repro.diagnostics.statements import statements_of

    o = outcomes[claim_id]
    return statements_of(o, contexts[o.claim.study])


def test_null_claim_equivalence_recomputed_by_hand(published_outcomes, published_claim_contexts):
    """TOST at 0.05 per cell: the 90% interval
    tanh(atanh(rho) -+ z_0.95 sqrt((1 + rho^2/2)/(n - 3))) inside (-0.3, 0.3); the bound is the
    larger end; all 12 cells must pass."""
    st = _statements(
        "critical_band_center_frequency_null", published_outcomes, published_claim_contexts
    )
    eq = st.equivalence
    details = published_outcomes["critical_band_center_frequency_null"].result.details
    z = stats.norm.ppf(0.95)
    bounds = {}
    for key, cell in eq.cells.items():
        rho, n = details[key]["rho"], details[key]["n"]
        se = math.sqrt((1 + rho * rho / 2) / (n - 3))
        lo, hi = math.tanh(math.atanh(rho) - z * se), math.tanh(math.atanh(rho) + z * se)
        bounds[key] = max(abs(lo), abs(hi))
        assert cell.bound == pytest.approx(bounds[key], rel=1e-12) and cell.passed == (
            bounds[key] < 0.3
        )
    assert len(bounds) == 12 and eq.bound == pytest.approx(max(bounds.values()))
    assert not eq.passed and eq.widest == "concepts/at" and round(eq.bound, 3) == 0.674
    assert sum(b < 0.3 for b in bounds.values()) == 1  # concepts/total only (bound 0.273)
    # n = 15 (AT): even rho = 0 gives tanh(z_0.95 / sqrt(12)) = 0.442 > 0.3: too
    # small for any useful margin
    assert eq.too_small == {15: pytest.approx(math.tanh(z / math.sqrt(12)))}
    text = eq.text()
    assert (
        "not shown at the declared margin 0.3" in text
        and "n = 15: no margin below 0.442 can pass" in text
    )
    # the paper's criterion is still the verdict
    assert st.verdict == "reproduced" and st.method.startswith("null_all: all 12 cells p >= 0.05")


def test_derived_claims_are_flagged_and_the_others_name_their_source(
    published_outcomes, published_claim_contexts
):
    derived = set()
    for o in published_outcomes.all():
        st = _statements(o.claim.id, published_outcomes, published_claim_contexts)
        if any(f.name == "derived" for f in st.flags):
            assert st.flags[0].name == "derived" and st.expected.startswith("derived")
            derived.add(o.claim.id)
        else:
            assert st.expected == f"from the paper ({o.claim.source})"
    assert derived == {
        "peak_noise_sensitivity_near_one",
        "adversarial_training_curvilinear",
        "subramanian2023_human_channel_one_octave",  # refits the authors' own thresholds
    }
    hf = published_outcomes["high_frequency_bias_positive"]
    assert (
        hf.tolerance.params["alpha"] == 0.05
    )  # the paper's figure criterion, not the data's p < 0.001


def test_turning_point_statement_follows_the_deciding_test(
    published_outcomes, published_claim_contexts
):
    tp = _statements(
        "adversarial_training_curvilinear", published_outcomes, published_claim_contexts
    ).turning_point
    assert tp.decides == "u_test" and tp.shown
    assert {c: {t: r["inverted_u"] for t, r in tests.items()} for c, tests in tp.tests.items()} == {
        "adversarial": {"u_test": True, "two_lines": False},
        "concepts": {"u_test": True, "two_lines": True},
    }
    assert round(tp.tests["adversarial"]["u_test"]["vertex"], 2) == 0.50  # inside [0.21, 0.72]
    assert "inverted U shown by the deciding U test (Lind-Mehlum)" in tp.text()


def test_table_interval_follows_the_estimand(published_outcomes, published_claim_contexts):
    from repro.diagnostics.statements import table_interval

    def shown(cid):
        return table_interval(
            published_outcomes[cid], _statements(cid, published_outcomes, published_claim_contexts)
        )

    assert (
        shown("imagenetx_failure_modes_concordant") is None
    )  # census: its bootstrap over models is not shown
    assert (
        shown("imagenetx_texture_hardest_for_most_models") is None
    )  # census: nor the Wilson "models as trials"
    strongest = published_outcomes["high_frequency_strongest_model_9_percent"]
    assert (
        shown("high_frequency_strongest_model_9_percent") == strongest.result.interval
    )  # a measurement interval
    assert shown("adversarial_training_curvilinear") == "not estimable"  # 2 clusters
    e = _statements(
        "shape_bias_vs_id_accuracy", published_outcomes, published_claim_contexts
    ).estimand
    assert shown("shape_bias_vs_id_accuracy") == e.intervals["value"].interval
    assert shown("critical_band_center_frequency_null") is None  # the headline is a p: no interval


def test_cli_prints_the_statements_and_json_carries_them(run_cli, data_dir, tmp_path):
    out_path = tmp_path / "c.json"
    res = run_cli("claims", "--data-dir", data_dir, "--json", out_path)
    assert res.returncode == 0, res.stdout + res.stderr
    text = " ".join(res.stdout.split())  # the explanation lines are wrapped to the terminal
    assert "what each claim's question needs beyond the paper's method" in text
    assert " shape_bias_vs_id_accuracy: reproduced under the paper's method (rounding:" in text
    assert "not estimable (2 clusters: leaving one out leaves at most one)" in text
    assert "equivalence bound 0.674" in text
    assert "expected value: derived (a regression check of the data, not a reproduction)" in text
    assert "turning point: inverted U shown by the deciding U test" in text
    doc = {c["id"]: c for c in json.loads(out_path.read_text())["claims"]}
    sb = doc["shape_bias_vs_id_accuracy"]
    assert sb["verdict_paper_method"] == "reproduced" and sb["estimand"]["kind"] == "sample"
    assert sb["estimand"]["intervals"]["at"] == sb["estimand"]["intervals"]["at"] | {
        "estimable": False,
        "interval": None,
    }
    assert len(sb["estimand"]["intervals"]["value"]["interval"]) == 2
    assert doc["peak_noise_sensitivity_near_one"]["estimand"]["kind"] == "census"
    assert doc["peak_noise_sensitivity_near_one"]["derived"]["reason"].startswith(
        "the 34 was counted"
    )
    eq = doc["critical_band_center_frequency_null"]["equivalence"]
    assert eq["margin"] == 0.3 and eq["passed"] is False and round(eq["bound"], 3) == 0.674
    tp = doc["adversarial_training_curvilinear"]["turning_point"]
    assert (
        tp["decides"] == "u_test"
        and round(tp["tests"]["adversarial"]["u_test"]["vertex"], 3) == 0.503
    )
    nulls = {  # the null claims of the heat map: equivalence at the declared margin 0.3
        "critical_band_center_frequency_null": 0.674,
        "low_frequency_bias_no_clear_effect": 0.491,
        "low_frequency_bias_at_null_concepts_adversarial": 0.750,
        "peak_noise_sensitivity_null_robustness_concepts": 0.422,
    }
    for cid, bound in nulls.items():
        eq = doc[cid]["equivalence"]
        assert eq["margin"] == 0.3 and eq["passed"] is False and round(eq["bound"], 3) == bound
    # 15 AT models: no margin below 0.442 could pass, and the output says so
    at = doc["low_frequency_bias_at_null_concepts_adversarial"]["equivalence"]["too_small"]
    assert [(t["n"], round(t["smallest_bound"], 3)) for t in at] == [(15, 0.442)]
    assert all(doc[c]["equivalence"] is None for c in doc if c not in nulls)

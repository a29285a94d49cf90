"""Robustness of the published claims (``repro.diagnostics.robustness``) on the published data,
checked against independent recomputations with scipy: which single model decides the
non-reproducing 9% claim, which models break the centre-frequency null, that the shape-bias
claim's rounding is fragile while its finding is not, that the curvilinear AT claim rests on one
model and on the AT category; and that the ImageNet-X statistics' exact leave-one-out equals
recomputing the claim without the model."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from repro.analysis.correlation import permutation_p
from repro.claims.check import evaluate
from repro.diagnostics.robustness import FAST, robustness

pytestmark = pytest.mark.claims


@pytest.fixture(scope="module")
def rob(published_outcomes, published_claim_contexts):
    def get(claim_id):
        o = published_outcomes[claim_id]
        return o, robustness(o, published_claim_contexts[o.claim.study])

    return get


def _without(ctx, model, *columns):
    models = [m for m in ctx.analysis.population if m != model]
    return models, [ctx.analysis.table.column(c, models) for c in columns]


def test_the_9_percent_claim_is_decided_by_one_model(rob, published_claim_context):
    o, r = rob("high_frequency_strongest_model_9_percent")
    assert o.verdict == "not_reproduced"
    assert r.flips == ["resnet50_prime"] and r.category_flips == []
    without = {v.left_out: v for v in r.models}["resnet50_prime"]
    assert (
        without.value == pytest.approx(o.result.details["runner_up"]["value"])
        and without.verdict == "reproduced"
    )
    assert r.range == pytest.approx((o.result.details["runner_up"]["value"], o.result.value))
    lo, hi = (
        o.result.interval
    )  # the measurement interval of the compared value: it cannot contradict the verdict
    assert lo <= o.result.value <= hi and not lo <= 0.09 <= hi and hi - lo < 0.01


def test_the_centre_frequency_null_breaks_without_the_models_it_names(rob, published_claim_context):
    """Independently: the 12 centre-frequency cells with scipy without each model."""
    ctx = published_claim_context
    a = ctx.analysis
    o, r = rob("critical_band_center_frequency_null")
    expect = []
    for m in a.population:
        significant = False
        for g in a.spec.groups:
            models = [x for x in a.groups[g] if x != m]
            for c in a.spec.categories:
                p = stats.spearmanr(
                    a.bias("critical_band_center_frequency", models), a.category(c, models)
                ).pvalue
                significant |= p < a.spec.alpha
        if significant:
            expect.append(m)
    assert r.flips == expect and 0 < len(expect) < 48
    assert r.qualitative_flips == expect  # null_all is qualitative itself
    assert r.permutation_p == permutation_p(*o.result.paired)
    assert [c["p"] for c in r.cells] == pytest.approx([a.cell(*k).corr.p for k in o.result.cells])


def test_shape_bias_rounding_is_fragile_but_the_finding_is_not(rob, published_claim_context):
    a = published_claim_context.analysis
    o, r = rob("shape_bias_vs_id_accuracy")
    published = {"total": -0.76, "at": -0.98, "other": -0.60}
    expect, significant_everywhere = [], True
    for m in a.population:
        moved = False
        for g, pub in published.items():
            models = [x for x in a.groups[g] if x != m]
            res = stats.spearmanr(a.bias("shape_bias", models), a.category("id", models))
            moved |= abs(res.statistic - pub) > 0.005 * (1 + 1e-9)
            significant_everywhere &= res.statistic < 0 and res.pvalue < 0.05
        if moved:
            expect.append(m)
    assert r.flips == expect and len(expect) > 40
    assert (
        significant_everywhere
        and r.qualitative_verdict == "reproduced"
        and r.qualitative_flips == []
    )
    assert r.range[0] < o.result.value < r.range[1]
    assert all(c["p_holm"] < 0.05 and c["p_bh"] < 0.05 for c in r.cells) and len(r.cells) == 3


def test_curvilinear_rests_on_one_model_and_on_the_at_category(rob):
    _, r = rob("adversarial_training_curvilinear")
    assert r.flips == [
        "robust_resnet50_linf_eps1.0"
    ]  # without it another AT model has the highest PGD accuracy
    assert r.category_flips == ["adversarial_training"]
    (at,) = [v for v in r.categories if v.left_out == "adversarial_training"]
    assert at.verdict == "undefined" and "at least 4" in at.why


def test_every_headline_correlation_has_its_permutation_p(rob, published_outcomes):
    for cid in published_outcomes.claims.names():
        o, r = rob(cid)
        if o.result.paired is None:
            assert r.permutation_p is None
        else:
            assert 0 < r.permutation_p <= 1 and r.scipy_p == pytest.approx(
                stats.spearmanr(*o.result.paired).pvalue
            )


@pytest.mark.parametrize(
    "claim_id",
    [
        "imagenetx_failure_modes_concordant",
        "imagenetx_texture_hardest_for_most_models",
        "imagenetx_crop_spillover_smaller",
        "imagenetx_same_failure_modes_across_paradigms",
        "imagenetx_same_failure_modes_across_architectures",
    ],
)
def test_imagenetx_exact_leave_one_out_equals_recomputing(claim_id, rob, published_claim_contexts):
    o, r = rob(claim_id)
    ctx = published_claim_contexts["imagenetx"]
    assert r.method == FAST
    # the package's model types label testbed rows: the crop sweep's runs are in none of them
    assert (r.categories == []) is (claim_id == "imagenetx_crop_spillover_smaller")
    loo = o.result.leave_one_out()
    assert len(loo.models) == o.result.n and all(m in ctx.table.values for m in loo.models)
    for i in sorted({0, len(loo.models) // 2, len(loo.models) - 1}):
        again = evaluate(o.claim, ctx.without_models([loo.models[i]], intervals=False))
        assert again.result.n == o.result.n - 1
        assert loo.value[i] == pytest.approx(again.result.value, rel=1e-12)
        assert loo.p[i] == pytest.approx(again.result.p, rel=1e-9, abs=1e-300)
        for key, values in loo.details.items():
            assert values[i] == again.result.details[key]
        assert r.models[i].verdict == again.verdict and r.models[i].value == pytest.approx(
            again.result.value
        )
    assert np.isfinite(loo.value).all()


def test_imagenetx_without_a_model_type_is_kendalls_w_over_the_other_rows(
    rob, published_claim_contexts
):
    """Leave-one-category-out on ImageNet-X: W recomputed here from the table's rows (error
    ratios, midranks, the tie-corrected W) without each model type's testbed rows."""
    import numpy as np

    from repro.scoring.imagenet_x import FACTORS

    ctx = published_claim_contexts["imagenetx"]
    _, r = rob("imagenetx_failure_modes_concordant")
    values = ctx.table.values

    def w_without(dropped: set[str]) -> float:
        rows = [
            m
            for m in values
            if m.startswith("imagenet_testbed/")
            and m not in dropped
            and "class/average" in values[m]
        ]
        er = np.array(
            [
                [(1 - values[m][f"class/{f}"]) / (1 - values[m]["class/average"]) for f in FACTORS]
                for m in rows
            ]
        )
        ranks = stats.rankdata(er, axis=1)
        m, n = ranks.shape
        s = ((ranks.sum(axis=0) - m * (n + 1) / 2) ** 2).sum()
        ties = sum((c**3 - c).sum() for c in (np.unique(row, return_counts=True)[1] for row in er))
        return float(12 * s / (m * m * (n**3 - n) - m * ties))

    assert w_without(set()) == pytest.approx(r.value, abs=1e-9)
    assert len(r.categories) == 10
    for v in r.categories:
        expected = w_without(set(ctx.model_categories[v.left_out]))
        assert v.value == pytest.approx(expected, abs=1e-9), v.left_out
    low = next(v for v in r.categories if v.left_out == "Low Accuracy CNN")
    assert low.value > r.value + 0.1  # the 115 low-accuracy models rank factors by noise

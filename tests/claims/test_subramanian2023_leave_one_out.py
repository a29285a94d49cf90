"""The exact leave-one-out of Subramanian et al.'s variance explained (``variance_explained``'s
``leave_one_out``) equals recomputing the claim on the context without each network: the same
R^2 and F-test p to the last bit, in the order the generic recomputation visits the networks, and
the robustness verdicts it gives are the recomputation's; so do its leave-one-family-out
(``leave_out``) values and verdicts."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from repro.claims.check import evaluate
from repro.diagnostics.robustness import FAST, GENERIC, candidates, robustness

pytestmark = pytest.mark.claims

CLAIMS = [
    "subramanian2023_channel_explains_shape_bias",
    "subramanian2023_channel_explains_at_robustness",
]


@pytest.mark.parametrize("claim_id", CLAIMS)
def test_variance_explained_leave_one_out_is_the_recomputation(
    claim_id, published_outcomes, published_claim_contexts
):
    o = published_outcomes[claim_id]
    ctx = published_claim_contexts["subramanian2023"]
    loo = o.result.leave_one_out()
    assert loo.models == candidates(o.result, ctx)
    assert len(loo.models) == o.result.n
    for i, model in enumerate(loo.models):
        again = evaluate(o.claim, ctx.without_models([model], intervals=False))
        assert again.result.n == o.result.n - 1
        # equal to the last bit, or both undefined (a design left rank-deficient)
        assert np.array_equal(
            [loo.value[i], loo.p[i]], [again.result.value, again.result.p], equal_nan=True
        ), model
    fast = robustness(o, ctx)
    assert fast.method == FAST
    # the same claim without its leave-one-out, on a fresh context: the generic recomputation
    plain = dataclasses.replace(
        o, result=dataclasses.replace(o.result, leave_one_out=None, leave_out=None)
    )
    generic = robustness(plain, ctx.without_models([]))
    assert generic.method == GENERIC
    seen = [(v.left_out, v.value, v.verdict, v.qualitative) for v in fast.models]
    assert seen == [(v.left_out, v.value, v.verdict, v.qualitative) for v in generic.models]
    assert fast.flips == generic.flips
    # leave-one-category-out (the families): from leave_out, the same as recomputed
    assert fast.categories and len(fast.categories) == len(generic.categories)
    seen = [(v.left_out, v.value, v.verdict, v.qualitative) for v in fast.categories]
    assert seen == [(v.left_out, v.value, v.verdict, v.qualitative) for v in generic.categories]
    for cat, members in list(ctx.model_categories.items())[:3]:
        drop = [m for m in members if m in ctx.population]
        row = o.result.leave_out(drop)
        again = evaluate(o.claim, ctx.without_models(drop, intervals=False))
        assert np.array_equal(
            [row.value[0], row.p[0]], [again.result.value, again.result.p], equal_nan=True
        ), cat


def test_leaving_a_network_out_moves_r2(published_outcomes):
    """Each network left out moves R^2 or leaves it undefined (a leave-one-out that returned the
    full fit's R^2 for every network would pass the equality above only by accident)."""
    for claim_id, networks in zip(CLAIMS, (72, 8), strict=True):
        o = published_outcomes[claim_id]
        loo = o.result.leave_one_out()
        assert len(loo.models) == networks
        defined = loo.value[np.isfinite(loo.value)]
        assert defined.size >= networks - 1 and np.all(defined != o.result.value)

"""``evaluate_all``: every claim of the study, in claim-file order, computed once per context
(the tests, the CLI and the report share it), or the claims asked for."""

from __future__ import annotations

from dataclasses import replace

import pytest

from repro.claims.check import evaluate, evaluate_all
from repro.claims.loader import study_claims

pytestmark = pytest.mark.claims


def test_evaluate_all_judges_every_claim_once_per_context(published_claim_context):
    ctx = replace(published_claim_context, cache={})
    ctx.__dict__.pop("analysis", None)
    claims = study_claims(ctx.study)
    outs = evaluate_all(ctx)
    assert [o.claim.id for o in outs] == [c.id for c in claims] and len(outs) >= 5
    assert ctx.cache["claims.outcomes"] is outs and evaluate_all(ctx) is outs  # memoised
    for o, c in zip(outs, claims, strict=True):
        assert o.verdict == evaluate(c, ctx).verdict
    some = [claims[-1], claims[0]]
    picked = evaluate_all(ctx, some)
    assert [o.claim.id for o in picked] == [claims[-1].id, claims[0].id] and picked is not outs
    assert [o.verdict for o in picked] == [outs[-1].verdict, outs[0].verdict]

"""Speed of a claim's replication (``repro.diagnostics.replication``): the study's claims on the
published table, their statistics' vectorised replicates against recomputing each statistic on
each redrawn table, per redraw, in the same run (the ratio is printed at the end); and the whole
replication (1,000 redraws of every claim) against what ``python -m repro claims`` computes
without it (every claim and its leave-one-out robustness), so the cost it adds to an interactive
command is a measured share.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

pytestmark = pytest.mark.bench

RECOMPUTED = 20  # redraws recomputed per round (the slow side)
#: the Gavrikov claims with a P(verdict): all 17 but peak_noise_sensitivity_near_one, which reads
#: only fitted critical-band values (nothing to redraw; 8 of 9 before the census added 8 claims)
REPLICATED = 16
_TIMES: dict[str, float] = {}


@pytest.fixture(scope="module")
def published(data_dir, request):
    from repro.claims.context import published_contexts

    (ctx,) = published_contexts(["gavrikov2024"], data_dir)
    yield ctx
    capture = request.config.pluginmanager.getplugin("capturemanager")
    t = _TIMES
    lines = []
    if "vectorised" in t and "recomputed" in t:
        per_fast, per_slow = t["vectorised"] / 1000, t["recomputed"] / RECOMPUTED
        lines.append(
            f"replication, {REPLICATED} replicated claims of gavrikov2024: vectorised "
            f"{per_fast * 1e3:.2f} ms per redraw, "
            f"recomputed {per_slow * 1e3:.1f} ms per redraw: {per_slow / per_fast:.0f}x "
            f"(1,000 redraws: {t['vectorised']:.2f} s vectorised, {per_slow * 1000:.0f} "
            "s recomputed; fastest of the rounds)"
        )
    if "vectorised" in t and "claims" in t:
        lines.append(
            "replication beside the claims without it (evaluation and robustness, "
            f"{t['claims']:.2f} s): "
            f"+{t['vectorised'] / t['claims']:.0%} ({t['vectorised']:.2f} s)"
        )
    with capture.global_and_fixture_disabled():
        for line in lines:
            print("\n" + line)


def _fresh(ctx):
    from repro.claims.context import ClaimContext

    return ClaimContext(
        ctx.study, ctx.data_dir, ctx.table, ctx.model_categories, ctx.source, ctx.spec
    )


def test_claims_without_replication(benchmark, published):
    from repro.claims.check import evaluate_all
    from repro.diagnostics.robustness import robustness_all

    def run():
        ctx = _fresh(published)
        robustness_all(ctx, evaluate_all(ctx))

    benchmark.pedantic(run, rounds=3, iterations=1)
    _TIMES["claims"] = benchmark.stats.stats.min


def test_vectorised_replication(benchmark, published, monkeypatch):
    monkeypatch.setenv("REPRO_RESULT_CACHE", "off")  # every round computes, none reads the cache
    from repro.claims.check import evaluate_all
    from repro.diagnostics.replication import replication_all

    outcomes = evaluate_all(published)

    def run():
        ctx = _fresh(published)
        reps = replication_all(ctx, outcomes)
        assert sum(r.p_verdict is not None for r in reps) == REPLICATED

    benchmark.pedantic(run, rounds=3, iterations=1)
    _TIMES["vectorised"] = benchmark.stats.stats.min


def test_recomputed_replication(benchmark, published):
    from repro.claims.check import evaluate_all
    from repro.diagnostics.replication import count_model, make_redraws, replicate_verdicts

    outcomes = [
        o for o in evaluate_all(published) if o.claim.id != "peak_noise_sensitivity_near_one"
    ]
    redraws, _ = make_redraws(published, count_model(published), resamples=RECOMPUTED, seed=0)
    ctx = replace(published)  # the same context: recomputing never reads its caches

    def run():
        for o in outcomes:
            replicate_verdicts(o, ctx, redraws, [o.tolerance], generic=True)

    benchmark.pedantic(run, rounds=2, iterations=1)
    _TIMES["recomputed"] = benchmark.stats.stats.min

"""Claims: how much each claim's verdict rests on, recomputed from the same per-model table.

For a claim evaluated on a context (``repro.claims.check.evaluate``):

- leave-one-model-out: the claim's statistic and verdict without each model of the population
  in turn (the models its statistic reads: the keys of its per-model inputs, or the rows its
  own exact leave-one-out names), under the tolerance the claim was judged by. Reported: the
  range (min, max) of the statistic and the models whose removal changes the verdict ("flips").
- leave-one-category-out: the same without each model category of the study (none for a study
  without model categories).
- qualitative: for a claim judged by rounding the published value, the verdict of its
  qualitative content (``[claim.qualitative]``: e.g. the sign and significance of the
  correlation it states) under leave-one-model-out, so that a rounding which breaks (-0.76 +-
  0.005) is not mistaken for a finding which breaks. A claim whose policy is already
  qualitative (sign and significance, null, exact details) is its own qualitative content.
- permutation p: a permutation test of the headline Spearman correlation (the statistic's
  ``paired`` samples; ``repro.analysis.correlation.permutation_p``: 10,000 permutations, seed 0)
  beside scipy's p.
- cells: the claim's bias x category cells with their Holm and Benjamini-Hochberg adjusted p
  over the whole table (``Analysis.adjusted_p``).

How the recomputation is made: on ``context.without_models(...)`` (generic: any statistic, any
policy), without bootstrap intervals unless the tolerance reads the interval; or, when the
statistic offers its own exact leave-one-out (``StatisticResult.leave_one_out``, for the
populations of hundreds of models; ``leave_out`` for a category's models at once) and the
tolerances read nothing it does not give, from that.
A recomputation that fails (an undefined statistic, a group left empty) counts as a change of
verdict (``undefined``): it is never taken as robust. Verdicts come from the checker's own
``judge`` and ``verdict_of`` (``repro.claims.check``, ``repro.claims.verdict``), so a NaN the
policy reads is ``undefined`` here as there; the recomputations made without bootstrap
intervals carry NaN intervals on purpose, which only a policy that reads the interval sees.
A claim whose inputs are ``incomplete`` gets no robustness (nothing was checked to vary).
The verdicts compared are the checks' own (``verdict_of(check)``, without the evidence): a mini
run's claims are ``mini`` whatever the numbers, and their leave-one-out still shows whether
the check would move, which is what a mini run exercises.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from repro.analysis.correlation import PERMUTATION_SEED, PERMUTATIONS, permutation_p
from repro.analysis.result import LeaveOneOut, StatisticResult
from repro.base.errors import ReproError
from repro.claims.check import ClaimOutcome, evaluate, judge
from repro.claims.context import ClaimContext
from repro.claims.spec import Claim, Tolerance
from repro.claims.tolerance import Check
from repro.claims.verdict import INCOMPLETE, UNDEFINED, verdict_of

READS_INTERVAL = frozenset({"correlation_interval"})
QUALITATIVE_POLICIES = frozenset({"sign_significance", "null_all", "exact_details"})
GENERIC = "recomputed without each model"
FAST = "the statistic's exact leave-one-out"


@dataclass(frozen=True)
class Variant:
    """The claim recomputed with ``left_out`` (a model or a model category) left out."""

    left_out: str
    value: float | None  # None: the statistic is undefined there
    verdict: str  # reproduced | not_reproduced | undefined
    qualitative: str | None = None  # the qualitative verdict, when the claim has one
    why: str = ""


@dataclass(frozen=True)
class Robustness:
    claim: str
    value: float
    verdict: str
    models: list[Variant]
    method: str
    # None: the study has no model categories; []: none holds a model the statistic reads
    categories: list[Variant] | None = None
    qualitative: Tolerance | None = None
    qualitative_verdict: str | None = None
    permutation_p: float | None = None
    scipy_p: float | None = None
    permutations: int = PERMUTATIONS
    seed: int = PERMUTATION_SEED
    cells: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""

    @property
    def range(self) -> tuple[float, float] | None:
        vals = [v.value for v in self.models if v.value is not None]
        return (min(vals), max(vals)) if vals else None

    @property
    def flips(self) -> list[str]:
        return [v.left_out for v in self.models if v.verdict != self.verdict]

    @property
    def category_flips(self) -> list[str] | None:
        return (
            None
            if self.categories is None
            else [v.left_out for v in self.categories if v.verdict != self.verdict]
        )

    @property
    def qualitative_flips(self) -> list[str] | None:
        if self.qualitative is None:
            return None
        return [v.left_out for v in self.models if v.qualitative != self.qualitative_verdict]

    def as_json(self) -> dict[str, Any]:
        """The claim's ``robustness`` entry in ``python -m repro claims --json``."""
        rng = self.range
        return {
            "leave_one_model_out": {
                "min": None if rng is None else float(rng[0]),
                "max": None if rng is None else float(rng[1]),
                "flips": self.flips,
            },
            "leave_one_category_out": {"flips": self.category_flips},
            "qualitative_flips": self.qualitative_flips,
            "permutation_p": self.permutation_p,
        }


def _verdict(check: Check) -> str:
    return verdict_of(check)


def qualitative_tolerance(claim: Claim, applied: Tolerance) -> Tolerance | None:
    """The claim's qualitative content, or None for a claim with none.

    ``[claim.qualitative]``, or the applied tolerance when it is qualitative itself; None for a
    claim with no qualitative content (a count, one model's value).
    """
    if claim.qualitative is not None:
        return claim.qualitative
    return applied if applied.policy in QUALITATIVE_POLICIES else None


def details_read(tolerance: Tolerance) -> set[str] | None:
    """The details a tolerance reads besides ``value`` and ``p``.

    None when it reads more (every cell, the interval, ``n``).
    """
    params = tolerance.params
    names = set(params.get("require", {}))
    if tolerance.policy == "rounding":
        return names | set(params.get("also", {}))
    if tolerance.policy == "sign_significance":
        return names | (set(params.get("cells") or params.get("signs") or []) - {"value"})
    if tolerance.policy == "exact_details":
        return names | set(params.get("equal", {}))
    if tolerance.policy == "binomial" and "n" in params:
        return names
    if tolerance.policy == "within_range":  # the value, or the one detail ``of`` names
        return names | ({str(params["of"])} if params.get("of") is not None else set())
    return None


def _fast_path_serves(loo: LeaveOneOut, tolerances: Sequence[Tolerance | None]) -> bool:
    for tol in tolerances:
        if tol is None:
            continue
        read = details_read(tol)
        if read is None or not read <= set(loo.details):
            return False
        if tol.policy in ("sign_significance",) and loo.p is None:
            return False
    return True


def _variant(
    claim: Claim,
    left_out: str,
    result: StatisticResult | None,
    verdict: str,
    qual: Tolerance | None,
    why: str = "",
) -> Variant:
    qv = None
    if qual is not None:
        qv = UNDEFINED if result is None else _verdict(judge(claim, result, qual))
    value = None if result is None or not math.isfinite(result.value) else float(result.value)
    return Variant(left_out, value, verdict, qv, why)


def _recompute(claim: Claim, ctx: ClaimContext, left_out: str, qual: Tolerance | None) -> Variant:
    try:
        o = evaluate(claim, ctx)
    except (ReproError, ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
        return Variant(
            left_out, None, UNDEFINED, None if qual is None else UNDEFINED, str(exc).splitlines()[0]
        )
    return _variant(claim, left_out, o.result, _verdict(o.check), qual)


def _without(ctx: ClaimContext, models: Sequence[str], intervals: bool) -> ClaimContext:
    """``ctx.without_models``, memoised on ``ctx`` (the claims of a study share them)."""
    memo = ctx.cache.setdefault("robustness.without", {})
    key = (tuple(models), intervals)
    if key not in memo:
        memo[key] = ctx.without_models(models, intervals=intervals)
    return memo[key]


def _fast(claim: Claim, loo: LeaveOneOut, tol: Tolerance, qual: Tolerance | None) -> list[Variant]:
    out = []
    for i, model in enumerate(loo.models):
        value = float(loo.value[i])
        p = None if loo.p is None else float(loo.p[i])
        if not math.isfinite(value) or (p is not None and not math.isfinite(p)):
            out.append(
                Variant(
                    model,
                    None,
                    UNDEFINED,
                    None if qual is None else UNDEFINED,
                    "undefined without it",
                )
            )
            continue
        result = StatisticResult(
            value=value, p=p, details={k: v[i] for k, v in loo.details.items()}
        )
        out.append(_variant(claim, model, result, _verdict(judge(claim, result, tol)), qual))
    return out


def _category(
    claim: Claim,
    result: StatisticResult,
    ctx: ClaimContext,
    category: str,
    drop: list[str],
    tolerances: tuple[Tolerance, Tolerance | None],
    intervals: bool,
) -> Variant:
    """The claim without a category's models.

    From the statistic's own ``leave_out`` where it has one that gives what the tolerances read,
    else recomputed."""
    tol, qual = tolerances
    if result.leave_out is not None:
        row = dataclasses.replace(result.leave_out(drop), models=[category])
        if _fast_path_serves(row, [tol, qual]):
            (variant,) = _fast(claim, row, tol, qual)
            return variant
    return _recompute(claim, _without(ctx, drop, intervals), category, qual)


def candidates(result: StatisticResult, ctx: ClaimContext) -> list[str]:
    """The population models the statistic reads (leave-one-out removes each in turn)."""
    keys = set(result.per_model)
    return [m for m in ctx.population if m in keys]


def _cells(result: StatisticResult, ctx: ClaimContext) -> list[dict[str, Any]]:
    if not result.cells or ctx.spec is None:
        return []
    analysis = ctx.analysis
    adj = analysis.adjusted_p
    out = []
    for key in result.cells:
        corr = analysis.cell(*key).corr
        out.append(
            {
                "bias": key[0],
                "category": key[1],
                "group": key[2],
                "rho": corr.rho,
                "p": corr.p,
                "p_holm": adj[key]["holm"],
                "p_bh": adj[key]["bh"],
            }
        )
    return out


def robustness(outcome: ClaimOutcome, ctx: ClaimContext) -> Robustness:
    """The robustness of one evaluated claim on its context (memoised on the context)."""
    memo = ctx.cache.setdefault("robustness", {})
    if outcome.claim.id in memo:
        return memo[outcome.claim.id]
    claim, result, tol = outcome.claim, outcome.result, outcome.tolerance
    if outcome.verdict == INCOMPLETE:
        memo[claim.id] = Robustness(
            claim.id,
            float(result.value),
            outcome.verdict,
            [],
            "not computed",
            note="its inputs are incomplete (see the claim's provenance): not computed",
        )
        return memo[claim.id]
    qual = qualitative_tolerance(claim, tol)
    loo = result.leave_one_out() if result.leave_one_out is not None else None
    note = ""
    if loo is not None and _fast_path_serves(loo, [tol, qual]):
        models, method = _fast(claim, loo, tol, qual), FAST
    else:
        names = loo.models if loo is not None else candidates(result, ctx)
        if not names:
            note = "the statistic names no model of the population: leave-one-out is not defined"
        intervals = tol.policy in READS_INTERVAL or (
            qual is not None and qual.policy in READS_INTERVAL
        )
        models = [_recompute(claim, _without(ctx, [m], intervals), m, qual) for m in names]
        method = GENERIC
    categories = None
    if ctx.model_categories:
        intervals = tol.policy in READS_INTERVAL
        population = set(ctx.population)
        # a category holding no model the statistic reads changes nothing: left out ([] when
        # that is every category); kept all when the statistic names no model
        read = {v.left_out for v in models}
        categories = []
        for cat, members in ctx.model_categories.items():
            drop = [m for m in members if m in population]
            if read and not read.intersection(drop):
                continue
            categories.append(_category(claim, result, ctx, cat, drop, (tol, qual), intervals))
    perm = scipy_p = None
    if result.paired is not None:
        x, y = result.paired
        perm = permutation_p(x, y, PERMUTATIONS, PERMUTATION_SEED)
        scipy_p = float(stats.spearmanr(x, y).pvalue)
    qv = None if qual is None else _verdict(judge(claim, result, qual))
    rob = Robustness(
        claim.id,
        float(result.value),
        _verdict(outcome.check),
        models,
        method,
        categories,
        qual,
        qv,
        perm,
        scipy_p,
        cells=_cells(result, ctx),
        note=note,
    )
    memo[claim.id] = rob
    return rob


def robustness_all(ctx: ClaimContext, outcomes: Sequence[ClaimOutcome]) -> list[Robustness]:
    return [robustness(o, ctx) for o in outcomes]

"""Claims: the interval a claim's estimand calls for.

A claim declares what it is about (``[claim.estimand]``, ``repro.claims.spec.Estimand``):

- ``census``: its models are the population it describes (the 48 study models, the 335 models
  of a testbed). A bootstrap over models would answer "what if other models had been chosen",
  which the claim does not ask: no interval over models; the statistic's uncertainty is that of
  its measurements (the ``measurement agreement`` and ``replication`` intervals of
  ``repro.claims.verdict``).
- ``sample``: its models stand for a wider population (training recipes). The interval
  ``across models`` then resamples the declared clusters (``repro.analysis.clustered``): the
  claim's ``clusters`` function labels each model (e.g. its recipe family), and the statistic's
  ``resamplers`` give the headline (``value``) and named sub-results as functions of weights on
  their models. With fewer than 10 clusters, where the percentile bootstrap's coverage is
  unknown, the range of the statistic without each cluster in turn instead
  (``leave_one_cluster_out``); with fewer than 3: ``not estimable``; a degenerate interval carries
  warnings.

A claim without ``[claim.estimand]`` says so ("not declared"); nothing is assumed for it.
The verdict under the paper's method is never changed by any of this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from repro.analysis.clustered import (
    FEW_CLUSTERS,
    ClusteredInterval,
    cluster_bootstrap,
    leave_one_cluster_out,
)
from repro.base.errors import ConfigError
from repro.base.registry import load_lazy
from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.claims.spec import Estimand
from repro.claims.verdict import ACROSS_MODELS

RESAMPLES = 2000
SEED = 0
CONFIDENCE = 0.95


@dataclass(frozen=True)
class EstimandResult:
    """A claim's estimand and the intervals over models it calls for.

    ``intervals``: by sub-result name, ``value`` first; empty for a census.
    """

    estimand: Estimand | None
    intervals: dict[str, ClusteredInterval] = field(default_factory=dict)
    note: str = ""
    headline: str = "value"  # the key of ``intervals`` that is the claim's headline statistic
    # the same statistics bootstrapped over models with every model its own cluster (what an
    # interval that ignores the clusters gives), for the contrast and its degeneracy warnings
    unclustered: dict[str, ClusteredInterval] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "not declared" if self.estimand is None else self.estimand.kind

    def text(self) -> str:
        """One line: the estimand and its interval(s) over models."""
        e = self.estimand
        if e is None:
            return "estimand not declared"
        head = f"{e.kind} of {e.population} (unit: {e.unit})"
        if e.kind == "census":
            return head + f": no interval {ACROSS_MODELS} (the models are the population)"
        if not self.intervals:
            return head + f": {self.note}"
        first = self.intervals.get(self.headline) or next(iter(self.intervals.values()))
        method = first.method
        warnings = list(dict.fromkeys(w for iv in self.intervals.values() for w in iv.warnings))
        text = (
            head
            + f"; {ACROSS_MODELS} ({method}): "
            + self.interval_summary()
            + (". Warnings: " + "; ".join(warnings) if warnings else "")
        )
        degenerate = [
            f"{'headline' if k == 'value' else k} {iv.text(method=False)}: {iv.at_bound:.0%} of "
            "resamples at the bound"
            for k, iv in self.unclustered.items()
            if iv.estimable and iv.at_bound >= 0.025
        ]
        if degenerate:
            text += (
                ". Ignoring the clusters (every model its own) the interval is degenerate: "
                + "; ".join(degenerate)
            )
        return text

    def interval_summary(self) -> str:
        """The intervals grouped by their number of clusters, the not-estimable ones by why."""
        by_clusters: dict[int, list[str]] = {}
        missing: dict[str, list[str]] = {}
        for name, iv in self.intervals.items():
            label = (
                "headline"
                if name == "value"
                else (f"{name} (headline)" if name == self.headline else name)
            )
            if iv.estimable:
                by_clusters.setdefault(iv.clusters, []).append(f"{label} {iv.text(method=False)}")
            else:
                missing.setdefault(iv.why, []).append(label)
        parts = [f"from {g} clusters: " + ", ".join(items) for g, items in by_clusters.items()]
        parts += [f"not estimable ({why}): " + ", ".join(items) for why, items in missing.items()]
        return "; ".join(parts)

    def as_json(self) -> dict[str, Any]:
        e = self.estimand
        return {
            "kind": self.kind,
            "population": None if e is None else e.population,
            "unit": None if e is None else e.unit,
            "reason": None if e is None else e.reason,
            "clusters": None if e is None else e.clusters,
            "interval_kind": ACROSS_MODELS,
            "headline": self.headline if self.intervals else None,
            "intervals": {k: v.as_json() for k, v in self.intervals.items()},
            "unclustered": {k: v.as_json() for k, v in self.unclustered.items()},
            "note": self.note or None,
        }


def _labels(
    estimand: Estimand, ctx: ClaimContext, models: tuple[str, ...], claim_id: str
) -> list[str]:
    assert estimand.clusters is not None
    fn = load_lazy(estimand.clusters, f"claim {claim_id!r}: estimand clusters")
    labels = list(fn(ctx, list(models)))  # type: ignore[operator]
    if len(labels) != len(models):
        raise ConfigError(
            f"claim {claim_id!r}: clusters {estimand.clusters} gave {len(labels)} labels for "
            f"{len(models)} models"
        )
    return [str(v) for v in labels]


def estimand_of(outcome: ClaimOutcome, ctx: ClaimContext) -> EstimandResult:
    """The estimand result of one evaluated claim (memoised on the context)."""
    memo = ctx.cache.setdefault("estimand", {})
    cid = outcome.claim.id
    if cid in memo:
        return memo[cid]
    e = outcome.claim.estimand
    if e is None or e.kind == "census":
        res = EstimandResult(e)
    elif not outcome.result.resamplers:
        res = EstimandResult(
            e, note="the statistic offers no resampler: no clustered interval (not estimable)"
        )
    else:
        resamplers = outcome.result.resamplers
        head = resamplers.get("value")
        alias = next((k for k, r in resamplers.items() if k != "value" and r is head), None)
        intervals, unclustered = {}, {}
        for name, resampler in resamplers.items():
            if alias is not None and name == "value":
                # the headline is one of the named sub-results: listed once, under its name
                continue
            labels = _labels(e, ctx, resampler.models, cid)
            # below FEW_CLUSTERS a percentile cluster bootstrap has unknown coverage: the range
            # without each cluster instead (repro.analysis.clustered)
            intervals[name] = (
                cluster_bootstrap(
                    resampler, labels, resamples=RESAMPLES, seed=SEED, confidence=CONFIDENCE
                )
                if len(set(labels)) >= FEW_CLUSTERS
                else leave_one_cluster_out(resampler, labels)
            )
            unclustered[name] = cluster_bootstrap(
                resampler,
                list(resampler.models),
                resamples=RESAMPLES,
                seed=SEED,
                confidence=CONFIDENCE,
            )
        res = EstimandResult(e, intervals, headline=alias or "value", unclustered=unclustered)
    memo[cid] = res
    return res

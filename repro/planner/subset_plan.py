"""Runner, subset plan: per measurement, the smallest image subset that keeps every verdict.

The plan of ``python -m repro plan --confidence 0.99``: per measurement, the smallest seeded,
class-stratified subset of its images on which every claim reading it keeps its verdict with
probability >= ``confidence``, the gate's power at that subset, and its device hours beside the full
protocol's (``repro.planner.cost``).

For a measurement (its column families in the study's count model, ``repro.diagnostics.counts``)
and a subset of ``items`` of its ``n`` images:

- the measured values are drawn as a run on that subset would give them: hypergeometric counts
  from the full set's (the finite-population correction: the full set gives the published value
  exactly), binomial ones for stimuli drawn at random; class stratification only lowers the
  variance and is not credited (the plan is conservative there); every other measurement keeps
  its full protocol (its published values);
- each claim reading the measurement is judged on every draw under the tolerance it gets on
  measured inputs (``repro.diagnostics.replication.GateRejudge``); its verdict is kept when it
  equals the verdict on the full protocol's values;
- jointly over the claims reading it: P(kept) is the share of draws in which every one of them
  keeps its verdict, estimated from ``resamples`` seeded draws (at least 1,000, and
  10 / (1 - confidence)); the subset is the smallest ``items`` whose P(kept) has its lower 95%
  Wilson bound at ``confidence`` or above, found by bisection on a geometric scale (about 5%
  resolution);
- jointly (``joint_plan``): every measurement at a subset at once, every verdict of every claim
  kept with probability >= ``confidence``: each measurement's own subset, and those read by a
  claim that then changes grown together towards the full protocol until it holds (a claim
  reading ten measurements, each at its own 1% risk, fails far more often than 1%);
- the power at that subset: the shift of one model's value (range over the models) and of every
  model's that per-model agreement detects with 80% power
  (``repro.diagnostics.power.agreement_shifts``
  with the subset's sampling noise);
- device hours: the measurement's work (``repro.planner.cost.workload``) scaled by items / n,
  through the same cost model and rates as the full protocol.

A measurement read by no claim needs no images for the verdicts; one whose families are held
(only fitted values are published: the critical band) cannot be planned and keeps its full
protocol. The plan is cached by the digest of its inputs (``repro.base.result_cache``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from repro.base.numbers import fmt_p
from repro.base.result_cache import cached
from repro.base.stats import binomial_interval
from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.claims.verdict import JUDGED
from repro.diagnostics.counts import CountModel, Family
from repro.diagnostics.power import Scope, agreement_shifts, power_inputs
from repro.diagnostics.replication import GateRejudge, count_model, make_redraws

MIN_RESAMPLES = 1000
SEED = 0
RESOLUTION = 1.05  # the bisection stops when the bracket's ends are within 5% of each other


def resamples_for(confidence: float) -> int:
    """Enough draws that P(kept) = 1 has its lower Wilson bound above ``confidence``."""
    return max(MIN_RESAMPLES, math.ceil(10 / (1 - confidence)))


def wilson_lower(kept: int, total: int) -> float:
    return binomial_interval(kept, total)[0]


@dataclass(frozen=True)
class MeasurementPlan:
    measurement: str
    families: tuple[str, ...]
    full: int  # images (or trials) of the full protocol
    items: int | None  # the subset (None: not planned, full protocol)
    claims: tuple[str, ...]  # the claims reading it
    p_kept: float | None = None
    p_lower: float | None = None
    binding: tuple[
        str, ...
    ] = ()  # the claims changed most often just below the subset (what sets its size)
    agreement_one: tuple[float, float] | None = None
    agreement_all: float | None = None
    unit: str = ""
    note: str = ""

    @property
    def fraction(self) -> float:
        return 1.0 if self.items is None else self.items / self.full

    def as_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["fraction"] = self.fraction
        return d


class _Subsets:
    """The claims reading one measurement, judged on subset draws."""

    def __init__(
        self,
        ctx: ClaimContext,
        counts: CountModel,
        families: Sequence[Family],
        readers: Sequence[ClaimOutcome],
        resamples: int,
        seed: int,
    ):
        self.ctx, self.counts, self.families, self.readers = (
            ctx,
            counts,
            list(families),
            list(readers),
        )
        self.resamples, self.seed = resamples, seed
        self.gate = GateRejudge(ctx, self.readers)
        self.full = max(f.n for f in self.families)

    def subset(self, items: int) -> dict[str, int]:
        return {f.id: max(1, min(f.n, round(items * f.n / self.full))) for f in self.families}

    def kept(self, subset: dict[str, int]) -> np.ndarray:
        """(claims, resamples): is each claim's verdict kept on each draw?"""
        redraws, _ = make_redraws(
            self.ctx, self.counts, resamples=self.resamples, seed=self.seed, subset=subset
        )
        return self.gate.kept(redraws)


def _scope(counts: CountModel, measurement: str):
    redrawn = [f for f in counts.families if f.measurement == measurement and f.redrawn]
    return Scope(
        redrawn[0].id,
        redrawn[0].label,
        measurement,
        tuple(c for f in redrawn for c in f.columns),
        redrawn[0],
    ), redrawn[0]


def agreement_at(
    ctx: ClaimContext, counts: CountModel, plan: MeasurementPlan, items: int
) -> tuple[tuple[float, float] | None, float | None]:
    """The agreement power of a measurement run on ``items`` images.

    As (one model's range, every model's)."""
    scope, first = _scope(counts, plan.measurement)
    models = [
        m
        for m in ctx.population
        if all(ctx.table.values.get(m, {}).get(c) is not None for c in scope.columns)
    ]
    n = None if items >= plan.full else max(1, min(first.n, round(items * first.n / plan.full)))
    per, everyone, _ = agreement_shifts(ctx, scope, models, items=n)
    vals = [v for v in (per or {}).values() if v is not None and math.isfinite(v)]
    return ((min(vals), max(vals)) if vals else None), everyone


def _binding(sub: _Subsets, kept: np.ndarray) -> tuple[str, ...]:
    misses = (~kept).sum(axis=1)
    if not misses.any():
        return ()
    return tuple(o.claim.id for o, m in zip(sub.readers, misses, strict=True) if m == misses.max())


def plan_measurement(
    ctx: ClaimContext,
    outcomes: Sequence[ClaimOutcome],
    counts: CountModel,
    measurement: str,
    confidence: float,
    *,
    resamples: int,
    seed: int = SEED,
) -> MeasurementPlan:
    fams = [f for f in counts.families if f.measurement == measurement]
    if not fams:
        return MeasurementPlan(
            measurement, (), 0, None, (), note="no column family of the count model: not planned"
        )
    cols = {c for f in fams for c in f.columns}
    readers = [o for o in outcomes if o.verdict in JUDGED and set(o.result.sources) & cols]
    full = max(f.n for f in fams)
    ids = tuple(f.id for f in fams)
    names = tuple(o.claim.id for o in readers)
    if not readers:
        note = "no claim reads it: no image is needed for a verdict"
        return MeasurementPlan(measurement, ids, full, 0, (), note=note)
    redrawn = [f for f in fams if f.redrawn]
    if not redrawn:
        note = "; ".join(f.why for f in fams) + ": a subset cannot be planned, the full protocol"
        return MeasurementPlan(measurement, ids, full, None, names, note=note)
    sub = _Subsets(ctx, counts, redrawn, readers, resamples, seed)

    def ok(items: int) -> tuple[bool, np.ndarray]:
        kept = sub.kept(sub.subset(items))
        every = int(kept.all(axis=0).sum())
        return wilson_lower(every, resamples) >= confidence, kept

    good, kept_full = ok(full)
    if not good:
        p = float(kept_full.all(axis=0).mean())
        return MeasurementPlan(
            measurement,
            ids,
            full,
            None,
            names,
            p,
            wilson_lower(int(p * resamples), resamples),
            _binding(sub, kept_full),
            note=f"even all {full:,} items keep every verdict with P = {fmt_p(p)} only (random "
            "stimuli: a new draw): the full protocol",
        )
    lo, hi, best, short = 1, full, kept_full, None
    while hi > lo + 1 and hi / lo > RESOLUTION:
        mid = max(lo + 1, min(hi - 1, round(math.sqrt(lo * hi))))
        good, kept = ok(mid)
        if good:
            hi, best = mid, kept
        else:
            lo, short = mid, kept
    every = int(best.all(axis=0).sum())
    plan = MeasurementPlan(
        measurement,
        ids,
        full,
        hi,
        names,
        every / resamples,
        wilson_lower(every, resamples),
        _binding(sub, short if short is not None else best),
        unit=_scope(counts, measurement)[0].unit,
    )
    one, everyone = agreement_at(ctx, counts, plan, hi)
    return replace(plan, agreement_one=one, agreement_all=everyone)


def _family_items(
    counts: CountModel, plans: Sequence[MeasurementPlan], items: dict[str, int]
) -> dict[str, int]:
    """The subset of every redrawn family of the measurements in ``items``.

    ``items`` maps measurement -> images."""
    out: dict[str, int] = {}
    for p in plans:
        n = items.get(p.measurement)
        if n is None or n >= p.full:
            continue
        for f in counts.families:
            if f.id in p.families and f.redrawn:
                out[f.id] = max(1, min(f.n, round(n * f.n / p.full)))
    return out


def joint_kept(
    ctx: ClaimContext,
    outcomes: Sequence[ClaimOutcome],
    counts: CountModel,
    plans: Sequence[MeasurementPlan],
    items: dict[str, int],
    *,
    resamples: int,
    seed: int = SEED,
) -> tuple[list[str], np.ndarray]:
    """The claims and their kept verdicts with every measurement of ``items`` at its subset at once.

    As (claims, kept (claims, resamples))."""
    subset = _family_items(counts, plans, items)
    cols = {c for f in counts.families if f.id in subset for c in f.columns}
    readers = [o for o in outcomes if o.verdict in JUDGED and set(o.result.sources) & cols]
    if not subset or not readers:
        return [], np.ones((0, resamples), dtype=bool)
    redraws, _ = make_redraws(ctx, counts, resamples=resamples, seed=seed + 1, subset=subset)
    return [o.claim.id for o in readers], GateRejudge(ctx, readers).kept(redraws)


JOINT_STEPS = 7  # bisection steps of the joint plan's interpolation towards the full protocol


def joint_plan(
    ctx: ClaimContext,
    outcomes: Sequence[ClaimOutcome],
    counts: CountModel,
    plans: Sequence[MeasurementPlan],
    confidence: float,
    *,
    resamples: int,
    seed: int = SEED,
) -> dict[str, Any]:
    """Every measurement at a subset at once, every verdict kept with probability >= ``confidence``.

    Start from each measurement's own subset; the claims whose verdict then changes in some draw
    read measurements whose subsets are grown together towards the full protocol, on a
    geometric scale (items = own^(1 - t) * full^t, the same t for all of them), the smallest t
    found by bisection whose P(every verdict kept) has its lower 95% Wilson bound at
    ``confidence`` or above (t = 1 is the full protocol for them, where nothing varies)."""
    own = {p.measurement: p.items for p in plans if p.items}
    full = {p.measurement: p.full for p in plans}

    def check(items: dict[str, int]) -> tuple[bool, float, float, list[str], np.ndarray]:
        names, kept = joint_kept(
            ctx, outcomes, counts, plans, items, resamples=resamples, seed=seed
        )
        every = int(kept.all(axis=0).sum()) if len(names) else resamples
        return (
            wilson_lower(every, resamples) >= confidence,
            every / resamples,
            wilson_lower(every, resamples),
            names,
            kept,
        )

    good, p, lower, names, kept = check(own)
    grown: list[str] = []
    t_best = 0.0
    items = dict(own)
    if not good:
        failing = {n for n, row in zip(names, kept, strict=True) if not row.all()}
        reads = {o.claim.id: set(o.result.sources) for o in outcomes}
        cols_of = {
            p.measurement: {c for f in counts.families if f.id in p.families for c in f.columns}
            for p in plans
        }
        grown = [m for m in own if any(reads[c] & cols_of[m] for c in failing)]

        def at(t: float) -> dict[str, int]:
            return own | {m: min(full[m], round(own[m] ** (1 - t) * full[m] ** t)) for m in grown}

        lo, hi = 0.0, 1.0
        items = at(1.0)
        good, p, lower, _, _ = check(items)
        for _ in range(JOINT_STEPS):
            mid = (lo + hi) / 2
            ok, pm, lm, _, _ = check(at(mid))
            if ok:
                hi, items, p, lower = mid, at(mid), pm, lm
            else:
                lo = mid
        t_best = hi
    return {
        "items": {m: items.get(m, own.get(m)) for m in own},
        "p_kept": p,
        "p_lower": lower,
        "grown": grown,
        "t": t_best,
        "seed": seed + 1,
    }


def subset_plan(
    ctx: ClaimContext,
    outcomes: Sequence[ClaimOutcome],
    measurements: Sequence[str],
    confidence: float,
    *,
    seed: int = SEED,
) -> dict[str, Any]:
    """The subset plan of ``measurements`` as JSON data.

    ``{"confidence", "resamples", "seed", "measurements": [MeasurementPlan.as_json()], "joint"}``
    (cached by the digest of its inputs; minutes of CPU the first time)."""
    counts = count_model(ctx)
    if counts is None:
        return {
            "study": ctx.study.name,
            "confidence": confidence,
            "measurements": [],
            "joint": None,
            "note": f"study {ctx.study.name!r} declares no count model (study.toml `replication`)",
        }
    resamples = resamples_for(confidence)
    inputs = power_inputs(ctx, outcomes, counts) | {
        "plan": {
            "confidence": confidence,
            "resamples": resamples,
            "seed": seed,
            "measurements": list(measurements),
            "resolution": RESOLUTION,
        },
    }

    def compute() -> dict[str, Any]:
        plans = [
            plan_measurement(ctx, outcomes, counts, m, confidence, resamples=resamples, seed=seed)
            for m in measurements
        ]
        joint = joint_plan(ctx, outcomes, counts, plans, confidence, resamples=resamples, seed=seed)
        out = []
        for p in plans:
            d = p.as_json()
            n = joint["items"].get(p.measurement)
            d["joint_items"] = n if p.items else p.items
            d["joint_fraction"] = (
                (n / p.full) if p.items and n else (1.0 if p.items is None else 0.0)
            )
            d["joint_agreement_one"], d["joint_agreement_all"] = (
                agreement_at(ctx, counts, p, n)
                if p.items and n
                else (p.agreement_one, p.agreement_all)
            )
            out.append(d)
        return {
            "study": ctx.study.name,
            "confidence": confidence,
            "resamples": resamples,
            "seed": seed,
            "measurements": out,
            "joint": joint,
        }

    result, _ = cached("subset-plan", inputs, compute)
    return result


def scaled_work(work: Sequence[Any], fractions: dict[str, float]) -> list[Any]:
    """The cost model's work per measurement scaled by its subset's fraction of the images."""
    out = []
    for w in work:
        f = fractions.get(w.measurement, 1.0)
        out.append(
            replace(
                w,
                images=math.ceil(w.images * f),
                forward=math.ceil(w.forward * f),
                backward=math.ceil(w.backward * f),
                synthesized=math.ceil(w.synthesized * f),
                decodes_published=math.ceil(w.decodes_published * f),
            )
        )
    return out

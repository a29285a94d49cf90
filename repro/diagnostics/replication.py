"""Claims: replication uncertainty beside every verdict.

Would the claim hold on another sample of images (or noise)? Reported beside the verdict, never
changing it (``repro.claims.verdict``: the ``replication`` kind of interval).

For a claim evaluated on a context (``repro.claims.check.evaluate``), with its study's count
model (``repro.diagnostics.counts``: how each column's value comes from counts):

- ``resamples`` (at least 1,000; the count model's, seeded) redrawn tables: every model's
  counts redrawn as a new sample of the same number of items (``repro.diagnostics.counts``, "a
  replication");
- on each, the claim's statistic and its verdict under the tolerance the claim was judged by.
  Redrawing around values that are themselves noisy adds the noise twice: every redrawn
  correlation is attenuated once more than the published one (and a maximum of noisy values
  lies higher). So each number the verdict reads is moved by its bootstrap bias (the mean of
  its redraws minus its published value; ``repro.analysis.redraws.debiased``) and what
  derives from it (a p-value, a ranking, which cell is the smallest) is recomputed from the
  moved numbers: the redraws are centred on the published statistic with the spread of a new
  sample (the bias-corrected parametric bootstrap);
- ``p_verdict``: the share of redraws whose verdict is the claim's (an undefined recomputation
  counts as a change); ``p_qualitative``: the same for the claim's qualitative content
  (``[claim.qualitative]``, or its tolerance when that is already qualitative); the
  ``replication`` interval: the 2.5 and 97.5 percentiles of the redrawn statistic.

A policy that reads the statistic's across-models interval (``correlation_interval``) sees, in
each redraw, the claim's own interval moved by the redraw's change in the statistic (its width
kept): a bootstrap over models inside every redraw would cost 2,000 times more.

Columns whose family is ``held`` (only fitted values are published) keep their published
values: a claim reading them is replicated conditionally on them (``held`` names them); a claim
reading nothing that is redrawn is not replicated (``p_verdict`` is None, ``note`` says why), and
neither is a claim of a study without a count model or one whose verdict is undefined,
incomplete or mini.

How it is computed: by the statistic's own vectorised ``replicate`` (``repro.analysis.redraws``)
when it has one and its replicates give everything the tolerance reads; else by recomputing the
statistic on each redrawn table (``GENERIC``: uncorrected, the same numbers as the replicates
without their correction, a test compares; only the interval is then corrected, and the note
says so; much slower than the replicates: ``nox -s bench`` times both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from repro.analysis.redraws import Redraws, Replicates, debiased
from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError, ReproError
from repro.claims.check import ClaimOutcome, applicable_tolerance, compute, judge
from repro.claims.context import ClaimContext
from repro.claims.spec import Tolerance
from repro.claims.verdict import NOT_CHECKED, REPLICATION, UNDEFINED, verdict_of
from repro.diagnostics.counts import CountModel, DrawNotes, draw, read_count_model
from repro.diagnostics.robustness import qualitative_tolerance

FAST = "the statistic's vectorised replicates"
GENERIC = "recomputed on each redrawn table"
NOT_COMPUTED = "not computed"
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Replication:
    """A claim's replication (see the module docstring)."""

    claim: str
    verdict: str
    p_verdict: float | None
    p_qualitative: float | None = None
    interval: tuple[float, float] | None = None
    resamples: int = 0
    seed: int | None = None
    method: str = NOT_COMPUTED
    redrawn: tuple[str, ...] = ()  # the column families redrawn
    held: tuple[str, ...] = ()  # families read but held at their published values
    note: str = ""
    values: np.ndarray | None = field(
        default=None, repr=False, compare=False
    )  # the redrawn statistic

    def as_json(self) -> dict[str, Any]:
        """The claim's ``replication`` entry in ``python -m repro claims --json``."""
        return {
            "kind": REPLICATION,
            "p_verdict": self.p_verdict,
            "p_qualitative": self.p_qualitative,
            "interval": None if self.interval is None else [float(v) for v in self.interval],
            "confidence": CONFIDENCE if self.interval is not None else None,
            "resamples": self.resamples,
            "seed": self.seed,
            "method": self.method,
            "redrawn": list(self.redrawn),
            "held": list(self.held),
            "note": self.note,
        }


def count_model(ctx: ClaimContext) -> CountModel | None:
    """The context's study's count model (memoised on the context), or None when it has none."""
    if "replication.counts" not in ctx.cache:
        path = ctx.study.replication
        ctx.cache["replication.counts"] = None if path is None else read_count_model(path)
    return ctx.cache["replication.counts"]


def make_redraws(
    ctx: ClaimContext,
    counts: CountModel,
    *,
    resamples: int | None = None,
    seed: int | None = None,
    subset: Mapping[str, int] | None = None,
    table=None,
) -> tuple[Redraws, DrawNotes]:
    """Redrawn tables of the context's table: a replication, or a subset run.

    ``table``: another table to redraw, e.g. a shifted copy. The draw is
    ``repro.diagnostics.counts.draw``.
    """
    resamples = counts.resamples if resamples is None else resamples
    seed = counts.seed if seed is None else seed
    table = ctx.table if table is None else table
    models = tuple(table.models)
    cols = draw(counts, table, models, resamples, seed, subset=subset)
    return Redraws(table, models, cols, resamples), cols.notes


def replication_redraws(ctx: ClaimContext) -> tuple[Redraws, DrawNotes] | None:
    """The study's replication redraws (the count model's resamples and seed).

    They are memoised on the context so that every claim of the study reads the same redraws.
    """
    counts = count_model(ctx)
    if counts is None:
        return None
    if "replication.redraws" not in ctx.cache:
        ctx.cache["replication.redraws"] = make_redraws(ctx, counts)
    return ctx.cache["replication.redraws"]


def _shifted(
    interval: tuple[float, float] | None, value: float, new: float
) -> tuple[float, float] | None:
    if interval is None:
        return None
    return (interval[0] + new - value, interval[1] + new - value)


def _judged(outcome: ClaimOutcome, result: StatisticResult, tol: Tolerance) -> str:
    try:
        return verdict_of(judge(outcome.claim, result, tol))
    except (ValueError, ArithmeticError):
        return UNDEFINED


def _fast(
    outcome: ClaimOutcome, rep: Replicates, tols: Sequence[Tolerance | None]
) -> list[list[str | None]] | None:
    """The verdicts per tolerance and redraw from the statistic's replicates.

    None when they lack something a tolerance reads (then it is recomputed).
    """
    r = outcome.result
    out: list[list[str | None]] = [[] for _ in tols]
    for b in range(len(rep.value)):
        value = float(rep.value[b])
        res = StatisticResult(
            value=value,
            p=None if rep.p is None else float(rep.p[b]),
            n=r.n,
            interval=_shifted(r.interval, float(r.value), value),
            details={k: v[b] for k, v in rep.details.items()},
        )
        for i, tol in enumerate(tols):
            if tol is None:
                out[i].append(None)
                continue
            try:
                out[i].append(_judged(outcome, res, tol))
            except ConfigError:  # a detail the replicates do not give: recompute instead
                return None
    return out


def _generic(
    outcome: ClaimOutcome, ctx: ClaimContext, redraws: Redraws, tols: Sequence[Tolerance | None]
) -> tuple[np.ndarray, list[list[str | None]]]:
    claim, r = outcome.claim, outcome.result
    spec = None if ctx.spec is None else replace(ctx.spec, resamples=0)
    values = np.full(redraws.resamples, np.nan)
    out: list[list[str | None]] = [[] for _ in tols]
    for b in range(redraws.resamples):
        c = ClaimContext(
            ctx.study,
            ctx.data_dir,
            redraws.table_of(b),
            ctx.model_categories,
            ctx.source,
            spec,
            intervals=False,
            left_out=ctx.left_out,
            inputs=ctx.inputs,
        )
        try:
            res = compute(claim, c)
        except (ReproError, ValueError, ArithmeticError, np.linalg.LinAlgError):
            for i, tol in enumerate(tols):
                out[i].append(None if tol is None else UNDEFINED)
            continue
        values[b] = res.value
        res.interval = _shifted(r.interval, float(r.value), float(res.value))
        for i, tol in enumerate(tols):
            out[i].append(None if tol is None else _judged(outcome, res, tol))
    return values, out


def replicate_verdicts(
    outcome: ClaimOutcome,
    ctx: ClaimContext,
    redraws: Redraws,
    tols: Sequence[Tolerance | None],
    *,
    generic: bool = False,
    correct: bool = True,
) -> tuple[np.ndarray, list[list[str | None]], str]:
    """The claim's statistic on every redraw and its verdicts under each of ``tols``.

    Also how they were computed: ``FAST`` or ``GENERIC``; ``generic=True`` forces recomputing,
    which is never corrected; ``correct=False``: the statistic's replicates uncorrected.
    """
    r = outcome.result
    if not generic and r.replicate is not None:
        rep = r.replicate(redraws, correct=correct)
        verdicts = _fast(outcome, rep, tols)
        if verdicts is not None:
            return np.asarray(rep.value, dtype=float), verdicts, FAST
    values, verdicts = _generic(outcome, ctx, redraws, tols)
    return values, verdicts, GENERIC


def gate_tolerance(outcome: ClaimOutcome) -> Tolerance:
    """The tolerance a claim gets when its inputs are measured (the gate's)."""
    measured = replace(outcome.result, sources={c: "measured" for c in outcome.result.sources})
    return applicable_tolerance(outcome.claim, measured, True)


class GateRejudge:
    """The gate's verdict of each of ``readers``, re-judged on redrawn or shifted tables.

    The verdict is under ``gate_tolerance``. This is the one redraw-and-rejudge loop of the gate's
    power (``repro.diagnostics.power``) and the subset plans (``repro.planner.subset_plan``), on
    ``replicate_verdicts`` as the replication of one claim is.
    """

    def __init__(self, ctx: ClaimContext, readers: Sequence[ClaimOutcome]):
        self.ctx, self.readers = ctx, list(readers)
        self.tols = [gate_tolerance(o) for o in self.readers]
        self.ref = [_judged(o, o.result, t) for o, t in zip(self.readers, self.tols, strict=True)]

    def kept(self, redraws: Redraws) -> np.ndarray:
        """(readers, tables): is each reader's gate verdict the same on each table?

        The statistic is recomputed uncorrected: a subset or shift is judged as measured, not
        debiased.
        """
        out = np.zeros((len(self.readers), redraws.resamples), dtype=bool)
        for j, (o, tol, ref) in enumerate(zip(self.readers, self.tols, self.ref, strict=True)):
            _, (verdicts,), _ = replicate_verdicts(o, self.ctx, redraws, [tol], correct=False)
            out[j] = [v == ref for v in verdicts]
        return out


def percentile_interval(
    values: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float, float] | None:
    ok = values[np.isfinite(values)]
    if ok.size == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(ok, [tail, 100 - tail])
    return float(lo), float(hi)


def _families(outcome: ClaimOutcome, counts: CountModel) -> tuple[list[str], list[str], list[str]]:
    """(redrawn families, held families, columns of no family) the claim reads."""
    redrawn, held, undeclared = [], [], []
    for col in outcome.result.sources:
        fam = counts.family_of(col)
        if fam is None:
            undeclared.append(col)
        elif fam.redrawn:
            redrawn.append(fam.id) if fam.id not in redrawn else None
        elif fam.id not in held:
            held.append(fam.id)
    return redrawn, held, undeclared


def _share(verdicts: Sequence[str | None], target: str | None) -> float | None:
    if target is None or not verdicts or verdicts[0] is None:
        return None
    return float(np.mean([v == target for v in verdicts]))


def replication(outcome: ClaimOutcome, ctx: ClaimContext, *, generic: bool = False) -> Replication:
    """The replication of one evaluated claim on its context.

    It is memoised on the context, and kept in the user cache under the digest of its inputs
    (``replication_inputs``; ``REPRO_RESULT_CACHE=off`` recomputes): a study's redraws are costly to
    compute (Subramanian et al.'s permutation p-values on every redraw), which
    ``python -m repro claims`` would otherwise pay on every call.
    """
    memo = ctx.cache.setdefault("replication", {})
    key = (outcome.claim.id, generic)
    if key not in memo:
        counts = count_model(ctx)
        if counts is None or outcome.verdict in NOT_CHECKED:  # nothing is redrawn: no cost
            memo[key] = _replication(outcome, ctx, generic)
        else:
            from repro.base.result_cache import cached

            data, _ = cached(
                "replication",
                replication_inputs(outcome, ctx, counts, generic),
                lambda: _to_json(_replication(outcome, ctx, generic)),
            )
            memo[key] = _from_json(data)
    return memo[key]


def replication_inputs(
    outcome: ClaimOutcome, ctx: ClaimContext, counts: CountModel, generic: bool
) -> dict[str, Any]:
    """Everything one claim's replication is computed from.

    The context's whole table, its groups, population and models left out, the analysis definition,
    the count model, the claim and the verdict and tolerance it was judged by, the run's inputs, and
    the code.
    """
    from repro.base.result_cache import digest

    if "replication.inputs" not in ctx.cache:  # the context's part, digested once for its claims
        ctx.cache["replication.inputs"] = digest(
            {
                "study": ctx.study.name,
                "source": ctx.source,
                "table": ctx.table.values,
                "categories": ctx.model_categories,
                "population": ctx.population,
                "left_out": ctx.left_out,
                "spec": None if ctx.spec is None else ctx.spec.raw,
                "inputs": ctx.inputs,
            }
        )
    return {
        "context": ctx.cache["replication.inputs"],
        "counts": counts,  # its families, resamples, seed and the digest of its file
        "claim": outcome.claim,
        "verdict": outcome.verdict,
        "tolerance": outcome.tolerance,
        "value": outcome.result.value,
        "generic": generic,
    }


def _to_json(r: Replication) -> dict[str, Any]:
    """The cache entry: the ``claims --json`` entry (``as_json``) and what it leaves out."""
    values = None if r.values is None else [float(v) for v in r.values]
    return {**r.as_json(), "claim": r.claim, "verdict": r.verdict, "values": values}


def _from_json(d: dict[str, Any]) -> Replication:
    return Replication(
        d["claim"],
        d["verdict"],
        d["p_verdict"],
        d["p_qualitative"],
        None if d["interval"] is None else (d["interval"][0], d["interval"][1]),
        d["resamples"],
        d["seed"],
        d["method"],
        tuple(d["redrawn"]),
        tuple(d["held"]),
        d["note"],
        None if d["values"] is None else np.asarray(d["values"], dtype=float),
    )


def _replication(outcome: ClaimOutcome, ctx: ClaimContext, generic: bool) -> Replication:
    claim = outcome.claim
    counts = count_model(ctx)
    if counts is None:
        return Replication(
            claim.id,
            outcome.verdict,
            None,
            note=f"study {ctx.study.name!r} declares no count model (study.toml `replication`): "
            "its columns' counts are not known, so nothing is redrawn",
        )
    if outcome.verdict in NOT_CHECKED:
        return Replication(
            claim.id,
            outcome.verdict,
            None,
            note=f"the verdict is {outcome.verdict}: nothing was judged to replicate",
        )
    redrawn, held, undeclared = _families(outcome, counts)
    held_text = [f"{counts.get(f).label}: {counts.get(f).why}" for f in held]
    if undeclared:
        held_text.append(
            f"{len(undeclared)} column(s) of no family of the count model "
            f"({', '.join(undeclared[:3])}{', ...' if len(undeclared) > 3 else ''}): held"
        )
    if not redrawn:
        return Replication(
            claim.id,
            outcome.verdict,
            None,
            held=tuple(held),
            note="nothing it reads can be redrawn (" + "; ".join(held_text) + ")",
        )
    pair = replication_redraws(ctx)
    assert pair is not None  # a count model exists
    redraws, _ = pair
    qual = qualitative_tolerance(claim, outcome.tolerance)
    qual_verdict = None if qual is None else _judged(outcome, outcome.result, qual)
    values, (verdicts, quals), method = replicate_verdicts(
        outcome, ctx, redraws, [outcome.tolerance, qual], generic=generic
    )
    notes = (
        [("conditional on the published values of " + "; ".join(held_text))] if held_text else []
    )
    if method == GENERIC:
        values = debiased(values, float(outcome.result.value))
        notes.append(
            "recomputed (the statistic has no replicates): P(verdict) not bias-corrected, the "
            "interval is"
        )
    note = "; ".join(notes)
    return Replication(
        claim.id,
        outcome.verdict,
        _share(verdicts, outcome.verdict),
        _share(quals, qual_verdict),
        percentile_interval(values),
        redraws.resamples,
        counts.seed,
        method,
        tuple(redrawn),
        tuple(held),
        note,
        values,
    )


def replication_all(ctx: ClaimContext, outcomes: Sequence[ClaimOutcome]) -> list[Replication]:
    return [replication(o, ctx) for o in outcomes]

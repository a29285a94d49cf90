"""Claims: the one generic checker.

Computes a claim's statistic on a context, applies its tolerance policy (or the measured-input
policy), records where every input value came from, and returns an outcome with a verdict and the
evidence it rests on (``repro.claims.verdict``: a claim with an input from generated mini data is
``mini``, never reproduced or not).

Besides the policy, ``tolerance.params.require = {detail = value}`` asserts that named
details of the result equal given values exactly (e.g. which benchmark ranks first).

A NaN statistic, or a NaN the policy reads, makes the verdict ``undefined``; an input the claim
needs measured that is missing or failed (``repro.claims.provenance``) makes it
``incomplete``. Neither is ever "as expected".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError
from repro.base.registry import load_lazy
from repro.claims.context import ClaimContext
from repro.claims.loader import study_claims
from repro.claims.provenance import Provenance, claim_provenance
from repro.claims.spec import Claim, Tolerance
from repro.claims.tolerance import Check, details_equal, get_policy, is_nan, undefined
from repro.claims.verdict import (
    DERIVED,
    DIFFERS,
    INCOMPLETE,
    INCONCLUSIVE,
    INCONCLUSIVE_INPUTS,
    REPRODUCED,
    Evidence,
    Flag,
    evidence_of,
    verdict_of,
    verdict_phrase,
)

if TYPE_CHECKING:
    from repro.claims.agreement import InputAgreement


@dataclass(frozen=True)
class ClaimOutcome:
    claim: Claim
    result: StatisticResult
    check: Check
    tolerance: Tolerance  # the policy actually applied
    provenance: Provenance | None = None  # where each input value came from
    flags: tuple[
        Flag, ...
    ] = ()  # named facts qualifying the verdict (``repro.claims.verdict.Flag``)
    agreement: InputAgreement | None = (
        None  # on our measurements: the agreement of its measured inputs
    )

    @cached_property
    def evidence(self) -> Evidence:
        """What the verdict rests on: re-analysis (all published), measured, mixed, or mini.

        Derived from the provenance counts of its input values."""
        return evidence_of(self.provenance.counts() if self.provenance is not None else {})

    @property
    def verdict(self) -> str:
        """The verdict: reproduced | not_reproduced | undefined | incomplete | mini.

        See ``repro.claims.verdict``."""
        return verdict_of(self.check, self.evidence)

    @property
    def phrase(self) -> str:
        """The verdict in words that say what it rests on.

        For example "consistent with the published data", "reproduced by measurement", "mini run:
        not evidence", ..."""
        return verdict_phrase(self.verdict, self.evidence)

    def flag(self, name: str) -> Flag | None:
        return next((f for f in self.flags if f.name == name), None)

    @property
    def reproduced(self) -> bool:
        return self.verdict == REPRODUCED

    @property
    def as_expected(self) -> bool:
        """The verdict is the one the claim file records (never for undefined or incomplete)."""
        return self.verdict == self.claim.expected

    def snapshot(self) -> dict[str, Any]:
        """The full result as plain JSON data.

        Statistic, p, n, interval, per-model inputs, details, sources, the provenance counts per
        input column, verdict: what the regression snapshots in ``expected/claims/`` hold."""
        r = self.result
        return jsonable(
            {
                "claim": self.claim.id,
                "version": self.claim.version,
                "statistic": self.claim.statistic,
                "params": self.claim.params,
                "published": self.claim.published,
                "value": r.value,
                "p": r.p,
                "n": r.n,
                "interval": r.interval,
                "interval_method": r.interval_method,
                "per_model": r.per_model,
                "details": r.details,
                "sources": r.sources,
                "provenance": None if self.provenance is None else self.provenance.by_column(),
                "tolerance": self.tolerance.policy,
                "verdict": self.verdict,
            }
        )

    def as_json(self) -> dict[str, Any]:
        """The claim's entry in ``python -m repro claims --json``.

        ``measured`` is null when the statistic is undefined; ``provenance``: the number of input
        values per label; ``evidence``: what the verdict rests on; ``flags``: named facts qualifying
        it."""
        iv = self.result.interval
        value = float(self.result.value)
        return {
            "id": self.claim.id,
            "published": self.claim.published,
            "measured": None if is_nan(value) else value,
            "interval": None if iv is None else [None if is_nan(v) else float(v) for v in iv],
            "verdict": self.verdict,
            "evidence": self.evidence.as_json(),
            "phrase": self.phrase,
            "flags": [{"name": f.name, "detail": f.detail} for f in self.flags],
            "agreement": None if self.agreement is None else self.agreement.as_json(),
            "provenance": {} if self.provenance is None else self.provenance.as_json(),
        }


def jsonable(obj: Any) -> Any:
    """Plain JSON types (numpy scalars and tuples converted)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return obj.item()
    return obj


def applicable_tolerance(claim: Claim, result: StatisticResult, measured: bool) -> Tolerance:
    """The claim's tolerance, or for measured inputs its ``measured_tolerance``.

    The measured tolerance defaults to the statistical ``correlation_interval`` for a published
    number with an interval.

    On measured inputs this tolerance answers one question only: does the claim's statistic,
    recomputed on our values, still say what the paper says (the published rho inside our
    across-models interval, same sign and significance)? A rank statistic over many models
    barely moves when a few values are wrong, and not at all when every value is shifted alike,
    so it cannot say whether the measurements reproduce. That is per-model agreement
    (``repro.claims.agreement``), applied after it by ``evaluate``: a claim is reproduced by
    measurement only when its tolerance holds AND no measured input differs from its published
    value."""
    uses_measured = measured and any(label != "published" for label in result.sources.values())
    if not uses_measured:
        return claim.tolerance
    if claim.measured_tolerance is not None:
        return claim.measured_tolerance
    if (
        claim.tolerance.policy == "rounding"
        and result.interval is not None
        and claim.published is not None
    ):
        require = claim.tolerance.params.get(
            "require"
        )  # structural requirements hold whatever the source
        return Tolerance(
            "correlation_interval",
            {"require": require} if require else {},
            "measured inputs: the published statistic must lie inside our 95% interval, same sign "
            "and significance",
        )
    return claim.tolerance


def _requirements(result: StatisticResult, require: dict[str, Any]) -> Check:
    return details_equal(result, require, "tolerance requires detail")


def compute(claim: Claim, context: ClaimContext) -> StatisticResult:
    fn = load_lazy(claim.statistic, f"{claim.origin}: claim {claim.id!r}: statistic")
    result = fn(context, **claim.params)  # type: ignore[operator]
    if not isinstance(result, StatisticResult):
        raise ConfigError(
            f"claim {claim.id!r}: statistic {claim.statistic} returned {type(result).__name__}, "
            "expected StatisticResult"
        )
    if math.isinf(
        result.value
    ):  # NaN is an undefined statistic (a verdict); infinity is a broken one
        raise ConfigError(
            f"claim {claim.id!r}: statistic {claim.statistic} returned an infinite value "
            "(a statistic returns a number, or NaN where it is undefined)"
        )
    return result


def judge(claim: Claim, result: StatisticResult, tolerance: Tolerance) -> Check:
    """``tolerance`` applied to ``result``: its policy, then its ``require`` details.

    A NaN statistic is undefined whatever the policy; so is a NaN the policy or ``require`` reads.
    The one judging function of the checker and of the robustness recomputations."""
    params = dict(tolerance.params)
    require = params.pop("require", {})
    if is_nan(result.value):
        return undefined(["the statistic"])
    check = get_policy(tolerance.policy)(claim.published, result, params)
    if require:
        req = _requirements(result, require)
        check = Check(
            check.passed and req.passed, f"{check.why}; {req.why}", check.status or req.status
        )
    return check


def with_agreement(
    check: Check, provenance: Provenance, context: ClaimContext
) -> tuple[Check, tuple[Flag, ...], InputAgreement | None]:
    """The check and flags once the agreement of the claim's measured inputs is known.

    Agreement as ``repro.claims.agreement`` computes it: an input that ``differs`` from its
    published value fails the check (the claim is not reproduced by measurement, whatever its
    statistic) and is named in the flag ``differs``; ``inconclusive`` inputs are named in a flag and
    change nothing."""
    if context.agreement is None:
        return check, (), None
    from repro.claims.agreement import InputAgreement

    inputs = InputAgreement.of(provenance.cells, context.agreement)
    flags = []
    differs = inputs.by_status.get(DIFFERS, [])
    if differs:
        flags.append(Flag(DIFFERS, inputs.named(DIFFERS, show=len(differs))))
        if check.status is None:
            check = Check(
                False,
                f"{check.why}; measured input(s) differ from their published values: "
                f"{inputs.named(DIFFERS)} (see compare)",
            )
    unsure = inputs.by_status.get(INCONCLUSIVE, [])
    if unsure:
        flags.append(
            Flag(
                INCONCLUSIVE_INPUTS,
                f"{len(unsure)} measured input(s) neither agree with nor differ from "
                f"the published values: {inputs.named(INCONCLUSIVE, 3)}",
            )
        )
    return check, tuple(flags), inputs


def evaluate(claim: Claim, context: ClaimContext) -> ClaimOutcome:
    """The claim on ``context``: its statistic, tolerance, input provenance, agreement and verdict.

    The applicable tolerance, the provenance of every input, the agreement of its measured inputs
    with their published values, and the verdict (``incomplete`` when an input it needs measured is
    failed or missing; ``not_reproduced`` when a measured input differs from its published value);
    the flag ``derived`` of a claim whose expected value comes from the data under test, and the
    agreement flags."""
    result = compute(claim, context)
    tol = applicable_tolerance(claim, result, context.measured)
    check = judge(claim, result, tol)
    provenance = claim_provenance(result, context.inputs)
    if provenance.problems:
        check = Check(
            False,
            "not checked on our measurements: "
            + "; ".join(provenance.problems)
            + f" [on the values there: {check.why}]",
            INCOMPLETE,
        )
    check, agreement_flags, agreement = with_agreement(check, provenance, context)
    flags = (
        (Flag(DERIVED, claim.derived.reason),) if claim.derived is not None else ()
    ) + agreement_flags
    return ClaimOutcome(claim, result, check, tol, provenance, flags, agreement)


def evaluate_all(context: ClaimContext, claims=None) -> list[ClaimOutcome]:
    """Every claim of the context's study (default) on ``context``, in claim-file order.

    Memoised on the context so tests, CLI and report share one computation."""
    if claims is None:
        cached = context.cache.get("claims.outcomes")
        if cached is None:
            cached = context.cache["claims.outcomes"] = [
                evaluate(c, context) for c in study_claims(context.study)
            ]
        return cached
    return [evaluate(c, context) for c in claims]

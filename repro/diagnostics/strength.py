"""Claims: how strong each claim is.

Each claim's finding is judged apart from the digits the paper printed, and it gets a strength
grade from declared rules.

The finding and the digits:

- ``finding``: what the claim states (a sign and significance, an order, a range, a null, a
  count): the verdict of its qualitative content (``[claim.qualitative]``, or its tolerance when
  that is qualitative already; ``repro.diagnostics.robustness.qualitative_tolerance``). A claim that
  declares no qualitative content apart from its published number (a count, one model's value,
  two models' values printed as the same) is judged by that number: its finding is its verdict,
  and ``by`` says so. A null claim with a declared equivalence margin (``[claim.equivalence]``)
  is judged by the equivalence test (``repro.diagnostics.null_equivalence``): absence of
  significance is not a null shown; the paper's p >= 0.05 reading stays beside it
  (``paper_reading``). A range is read as the paper states it ("2-4 times wider": [2, 4]); where the
  claim's tolerance widens the printed bounds to their rounding intervals and that changes the
  verdict, the lenient reading stays beside it (``lenient_reading``). ``p`` is P(finding): the share
  of replications (``repro.diagnostics.replication``, redrawn images or trials) that keep the
  finding's verdict; None where replication is not computed for the claim.
- ``digits``: where the paper prints a number and the claim judges it by rounding, whether the
  recomputed value keeps those digits, and P(digits) under replication (``p_verdict``). None
  where the finding is the claim's whole verdict.

The grade: the first rule of ``RULES`` that applies, in order. ``robust`` needs every check
of ``CHECKS`` to hold; a check that cannot be made for the claim (no replication model, no
model categories, no quirk-corrected variant that reads its columns) is listed as not available
and does not count for or against it, so the checks behind a grade are always printed with it.
A claim graded ``derived`` or ``untestable`` never counts as a confirmation.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from repro.base.numbers import fmt_p
from repro.claims.check import ClaimOutcome, judge
from repro.claims.context import ClaimContext
from repro.claims.spec import Equivalence, Tolerance
from repro.claims.verdict import NOT_CHECKED, REPRODUCED, UNDEFINED, verdict_of
from repro.diagnostics.quirk_corrections import quirk_survival
from repro.diagnostics.replication import replicate_verdicts, replication, replication_redraws
from repro.diagnostics.robustness import qualitative_tolerance, robustness
from repro.diagnostics.statements import statements_of

ROBUST = "robust"
FRAGILE = "fragile"
DERIVED = "derived"
UNTESTABLE = "untestable"
NOT_SUPPORTED = "not supported"
UNEXAMINED = "unexamined"
NOT_CHECKED_GRADE = "not checked"

#: P(finding) at or above which replication counts as holding the finding
P_ROBUST = 0.95

#: the grades in the order their rules are tried, with the declared rule of each
RULES: dict[str, str] = {
    NOT_CHECKED_GRADE: "the claim's verdict is undefined, incomplete or mini: nothing was compared",
    DERIVED: "the expected value is taken from the data under test, or only the fitting code is "
    "checked ([claim.derived]): never counted as a confirmation",
    UNTESTABLE: "too few units for the claim's test: declared in the claim file "
    "([claim.untestable]: units against the parameters the test fits), or a null whose "
    "equivalence test cannot reach its declared margin with its cells' n",
    NOT_SUPPORTED: "the finding does not hold on the full data",
    ROBUST: f"the finding holds on the full data, in >= {P_ROBUST:.0%} of replications, without "
    "each model category and under every quirk correction (each check that applies)",
    FRAGILE: "the finding holds on the full data, but a check of the robust rule flips it (named)",
    UNEXAMINED: "the finding holds on the full data, but no check of the robust rule applies to "
    "it (no replication model, no model category holding a model it reads, no quirk variant "
    "reading its columns): how strong it is is not known",
}
GRADES = tuple(RULES)
#: what counts as a confirmation in the totals
CONFIRMING = frozenset({ROBUST, FRAGILE})

#: the checks of the robust rule
CHECKS = ("replication", "leave-one-category-out", "quirk corrections")
HOLDS = "holds"
FLIPS = "flips"
NOT_AVAILABLE = "not available"


#: what a finding is judged by (``Judged.by``)
BY_QUALITATIVE = "its qualitative content ([claim.qualitative])"
BY_TOLERANCE = "its tolerance, which is qualitative"
BY_NUMBER = "its published number (no qualitative content declared apart from it)"
BY_STRICT_RANGE = "its range as the paper states it (the lenient reading, each bound widened to "
"its rounding interval, beside it)"
BY_EQUIVALENCE = "equivalence at its declared margin ([claim.equivalence]): a null is shown, not "
"assumed from p >= 0.05"


@dataclass(frozen=True)
class Judged:
    """A verdict with its probability under replication (None: not computed)."""

    verdict: str
    p: float | None
    by: str = ""  # what the verdict judges (BY_*; "" for the digits)
    # the verdict under the paper's reading where the claim prints no digits (a null's p >= 0.05,
    # a concordance's significance)
    paper_reading: str | None = None
    # a range claim's verdict with its printed bounds widened to their rounding intervals, where
    # it differs from the strict reading the finding uses
    lenient_reading: str | None = None

    def as_json(self) -> dict[str, Any]:
        return (
            {"verdict": self.verdict, "p": self.p}
            | ({"by": self.by} if self.by else {})
            | ({"paper_reading": self.paper_reading} if self.paper_reading else {})
            | ({"lenient_reading": self.lenient_reading} if self.lenient_reading else {})
        )


@dataclass(frozen=True)
class StrengthCheck:
    name: str  # one of CHECKS
    status: str  # holds | flips | not available
    result: str = ""  # what the check found: ``P(finding) 0.062``, ``without stylized``
    note: str = ""  # what it could not judge: ``undefined without adversarial_training (...)``

    @property
    def detail(self) -> str:
        return self.result + (f"; {self.note}" if self.note else "")

    def as_json(self) -> dict[str, Any]:
        return {"check": self.name, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class Strength:
    claim: str
    finding: Judged
    digits: Judged | None
    grade: str
    why: str
    checks: tuple[StrengthCheck, ...] = ()
    brief: str = ""  # why in a few words where ``why`` goes on (a declared reason)

    @property
    def rule(self) -> str:
        return RULES[self.grade]

    def short(self) -> str:
        """Why, in a few words (a report cell).

        The checks that flip a fragile finding, those behind a robust one, the counts behind an
        untestable one, the rule in brief otherwise.
        """
        if self.grade == FRAGILE:
            return "flipped by " + "; ".join(
                f"{c.name} ({c.result})" for c in self.checks if c.status == FLIPS
            )
        if self.grade == UNEXAMINED:
            return (
                "no check applies (no replication model, no category holding its models, no "
                "quirk variant)"
            )
        if self.brief:
            return self.brief
        if self.grade == DERIVED:
            return "expected value from the data under test, or only the fit checked"
        return self.why

    def as_json(self) -> dict[str, Any]:
        """The claim's ``strength`` entry in ``claims --json``."""
        return {
            "grade": self.grade,
            "rule": self.rule,
            "why": self.why,
            "checks": [c.as_json() for c in self.checks],
        }


def finding_and_digits(outcome: ClaimOutcome, ctx: ClaimContext) -> tuple[Judged, Judged | None]:
    """The claim's finding and, where it judges printed digits, its digits."""
    claim = outcome.claim
    if outcome.verdict in NOT_CHECKED:
        return Judged(outcome.verdict, None), None
    if claim.equivalence is not None:  # a null: shown by equivalence, the paper's reading beside
        tol = equivalence_tolerance(claim.equivalence)
        verdict = verdict_of(judge(claim, outcome.result, tol))
        p = _p_reading(outcome, ctx, tol, verdict)
        return Judged(verdict, p, BY_EQUIVALENCE, paper_reading=outcome.verdict), None
    rep = replication(outcome, ctx)
    qual = qualitative_tolerance(claim, outcome.tolerance)
    if qual is outcome.tolerance:
        return Judged(outcome.verdict, rep.p_verdict, BY_TOLERANCE), None
    if qual is None:  # the number (or the range it must lie in) is the finding
        strict = _strict_range(outcome, ctx)
        return strict or Judged(outcome.verdict, rep.p_verdict, BY_NUMBER), None
    finding = robustness(outcome, ctx).qualitative_verdict
    assert finding is not None  # qual is set, so robustness judged it
    if claim.published is None:  # no digits: the paper's own reading beside the finding
        return Judged(finding, rep.p_qualitative, BY_QUALITATIVE, outcome.verdict), None
    return (
        Judged(finding, rep.p_qualitative, BY_QUALITATIVE),
        Judged(outcome.verdict, rep.p_verdict),
    )


def equivalence_tolerance(eq: Equivalence) -> Tolerance:
    """A null claim's finding as a tolerance: every cell equivalent to 0 within its margin."""
    return Tolerance(
        policy="null_equivalent", params={"margin": eq.margin, "alpha": eq.alpha}, reason=eq.reason
    )


def strict_tolerance(tol: Tolerance) -> Tolerance | None:
    """A ``within_range`` tolerance with its printed bounds not widened to their rounding intervals.

    ``decimals`` is dropped. None for any other tolerance.
    """
    if tol.policy != "within_range" or "decimals" not in tol.params:
        return None
    return dataclasses.replace(tol, params={k: v for k, v in tol.params.items() if k != "decimals"})


def _strict_range(outcome: ClaimOutcome, ctx: ClaimContext) -> Judged | None:
    """A range read as the paper states it (``strict_tolerance``).

    Only where that differs from the lenient reading of the claim's tolerance.
    """
    tol = strict_tolerance(outcome.tolerance)
    if tol is None:
        return None
    verdict = verdict_of(judge(outcome.claim, outcome.result, tol))
    if verdict == outcome.verdict:
        return None
    p = _p_reading(outcome, ctx, tol, verdict)
    return Judged(verdict, p, BY_STRICT_RANGE, lenient_reading=outcome.verdict)


def _p_reading(outcome: ClaimOutcome, ctx: ClaimContext, tol: Tolerance, verdict: str):
    """P(finding) for a reading other than the claim's tolerance and qualitative content.

    The share of the same replications (``repro.diagnostics.replication``) whose verdict under
    ``tol`` is ``verdict``; None where the claim is not replicated.
    """
    if replication(outcome, ctx).p_verdict is None:  # not replicated: its note says why
        return None
    pair = replication_redraws(ctx)
    assert pair is not None  # the claim was replicated, so its study has a count model
    _, (verdicts,), _ = replicate_verdicts(outcome, ctx, pair[0], [tol])
    return float(np.mean([v == verdict for v in verdicts]))


def _checks(outcome: ClaimOutcome, ctx: ClaimContext, finding: Judged) -> tuple[StrengthCheck, ...]:
    out = []
    if finding.p is None:
        out.append(
            StrengthCheck("replication", NOT_AVAILABLE, "no replication model for its inputs")
        )
    else:
        status = HOLDS if finding.p >= P_ROBUST else FLIPS
        out.append(StrengthCheck("replication", status, f"P(finding) {fmt_p(finding.p)}"))
    if finding.by in (BY_EQUIVALENCE, BY_STRICT_RANGE):  # the other checks judge another reading
        why = "not computed for this reading"
        return (*out, *(StrengthCheck(name, NOT_AVAILABLE, why) for name in CHECKS[1:]))
    qualitative = qualitative_tolerance(outcome.claim, outcome.tolerance) is not None
    rob = robustness(outcome, ctx)
    if rob.categories is None:
        out.append(StrengthCheck("leave-one-category-out", NOT_AVAILABLE, "no model categories"))
    elif not rob.categories:
        why = "no model category holds a model it reads"
        out.append(StrengthCheck("leave-one-category-out", NOT_AVAILABLE, why))
    else:
        seen = {v.left_out: v.qualitative if qualitative else v.verdict for v in rob.categories}
        # a category the claim cannot do without (its group left empty): the claim is undefined
        # there, which says nothing about the finding: named, not counted as a flip
        undefined = [c for c, v in seen.items() if v == UNDEFINED]
        flipped = [c for c, v in seen.items() if v not in (UNDEFINED, finding.verdict)]
        held = len(seen) - len(undefined) - len(flipped)
        result = _without(flipped, len(seen)) if flipped else f"each of {held} left out"
        note = f"undefined without {', '.join(undefined)} (the claim reads it)" if undefined else ""
        status = FLIPS if flipped else HOLDS if held else NOT_AVAILABLE
        out.append(StrengthCheck("leave-one-category-out", status, result, note))
    survival = quirk_survival(outcome, ctx)
    read = [v for v in survival.variants if v.reads]
    if not read:
        out.append(StrengthCheck("quirk corrections", NOT_AVAILABLE, "reads no corrected column"))
    else:
        moved = survival.moved_qualitative if qualitative else survival.moved
        out.append(
            StrengthCheck(
                "quirk corrections",
                FLIPS if moved else HOLDS,
                ("on " + ", ".join(moved)) if moved else ", ".join(v.variant for v in read),
            )
        )
    return tuple(out)


def _without(flipped: list[str], total: int) -> str:
    """``without adversarial_training``: the categories whose removal flips the finding.

    Past three of them, their number instead of their names.
    """
    if len(flipped) > 3:
        return f"without any of {len(flipped)} of the {total} categories"
    return "without " + ", ".join(flipped)


def strength(outcome: ClaimOutcome, ctx: ClaimContext) -> Strength:
    """The claim's finding, digits and grade (memoised on the context)."""
    memo = ctx.cache.setdefault("strength", {})
    claim = outcome.claim
    if claim.id in memo:
        return memo[claim.id]
    finding, digits = finding_and_digits(outcome, ctx)
    eq = statements_of(outcome, ctx).equivalence
    checks: tuple[StrengthCheck, ...] = ()
    brief = ""
    if outcome.verdict in NOT_CHECKED:
        grade, why = NOT_CHECKED_GRADE, f"verdict {outcome.verdict}"
    elif claim.derived is not None:
        grade, why = DERIVED, claim.derived.reason
    elif claim.untestable is not None:
        u = claim.untestable
        brief = f"{u.units} units, {u.parameters} parameters"
        grade, why = UNTESTABLE, f"{brief}: {u.reason}"
    elif eq is not None and eq.too_small:
        reach = ", ".join(f"n = {n}: {b:.3f}" for n, b in sorted(eq.too_small.items()))
        grade = UNTESTABLE
        why = (
            f"equivalence within {eq.margin:g} is out of reach (smallest bound any data could "
            f"give, {reach})"
        )
    elif finding.verdict != REPRODUCED and eq is not None:
        grade = NOT_SUPPORTED
        why = (
            f"equivalence within {eq.margin:g} not shown (bound {eq.bound:.3f}, widest cell "
            f"{eq.widest}); the paper's p >= 0.05 reading: {outcome.verdict}"
        )
    elif finding.verdict != REPRODUCED and finding.lenient_reading is not None:
        grade = NOT_SUPPORTED
        strict = strict_tolerance(outcome.tolerance)
        assert strict is not None  # a lenient reading comes from a strict one
        why = (
            f"as printed: {judge(claim, outcome.result, strict).why}; "
            f"{finding.lenient_reading} with the bounds widened to their rounding"
        )
    elif finding.verdict != REPRODUCED:
        grade, why = NOT_SUPPORTED, f"the finding is {finding.verdict} on the full data"
    else:
        checks = _checks(outcome, ctx, finding)
        flips = [c for c in checks if c.status == FLIPS]
        made = [c.name for c in checks if c.status != NOT_AVAILABLE]
        if flips:
            grade = FRAGILE
            why = "; ".join(f"{c.name} flips it ({c.detail})" for c in flips)
        elif not made:
            grade, why = UNEXAMINED, "; ".join(f"{c.name}: {c.detail}" for c in checks)
        else:
            grade = ROBUST
            why = "holds under " + ", ".join(made)
    memo[claim.id] = Strength(claim.id, finding, digits, grade, why, checks, brief)
    return memo[claim.id]


def as_recorded(outcome: ClaimOutcome, ctx: ClaimContext) -> bool:
    """What the gate reads: whether the claim's verdict and its finding's are the recorded ones.

    The claim's verdict under its tolerance must be the one its claim file records (``expected``)
    and so must its finding's (``expected_finding``, else ``expected``). Never for an undefined,
    incomplete or mini verdict.
    """
    return (
        outcome.as_expected
        and strength(outcome, ctx).finding.verdict == outcome.claim.expected_finding_verdict
    )


def grade_counts(grades: list[str]) -> str:
    """``8 robust, 3 fragile, 2 derived`` in ``GRADES`` order, zero counts left out."""
    return ", ".join(f"{n} {g}" for g in GRADES if (n := grades.count(g)))

"""Claims: what each claim's question needs beyond the paper's method (issue 21), one
``Statements`` per evaluated claim, printed under the claims table, written to ``claims
--json`` and shown in REPORT.md. None of it changes the verdict, which stays the verdict under
the paper's method (the claim's tolerance):

1. the estimand (census or sample) and the interval over models it calls for
   (``repro.claims.estimand``: clustered, ``not estimable``, or none for a census);
2. for a null claim, the equivalence test at the declared margin and its bound
   (``repro.claims.null_equivalence``);
3. where the expected value comes from: the paper (the claim's ``source``) or the data under test
   (``[claim.derived]``: flag ``derived``, a regression check of the data, not a reproduction);
4. for an inverted-U claim, the tests of its turning point (Lind-Mehlum's U test with the vertex
   and its Fieller interval, Simonsohn's two lines) and which one decides (``[claim.turning_point]``);

and, where the study declares them, the verdicts under quirk-corrected variants of the
published data (``repro.claims.variants``; flag ``quirk`` when one differs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.claims.estimand import EstimandResult, estimand_of
from repro.claims.null_equivalence import NullEquivalence, null_equivalence
from repro.claims.verdict import ACROSS_MODELS, DERIVED, Flag

TESTS = {"u_test": "U test (Lind-Mehlum)", "two_lines": "two lines (Simonsohn)"}


@dataclass(frozen=True)
class TurningPointResult:
    """The inverted-U tests of each category of a curvilinear claim, and which one decides."""

    decides: str
    reason: str
    tests: dict[str, dict[str, dict[str, Any]]]  # category -> test name -> its JSON

    @property
    def shown(self) -> bool:
        """The deciding test shows an inverted U in every category."""
        return bool(self.tests) and all(t[self.decides]["inverted_u"] for t in self.tests.values())

    def text(self) -> str:
        parts = []
        for cat, tests in self.tests.items():
            u = tests["u_test"]
            lo, hi = u["vertex_interval"]
            fieller = "unbounded" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"
            verdicts = ", ".join(f"{TESTS[name]}{' (decides)' if name == self.decides else ''} "
                                 f"{'inverted U' if t['inverted_u'] else 'not shown'}" for name, t in tests.items())
            parts.append(f"{cat}: vertex {u['vertex']:.3f} in [{u['x_low']:.3f}, {u['x_high']:.3f}], Fieller "
                         f"{fieller}, U test p = {u['p']:.2g}; {verdicts}")
        return (f"inverted U {'shown' if self.shown else 'not shown'} by the deciding {TESTS[self.decides]}: "
                + "; ".join(parts))

    def as_json(self) -> dict[str, Any]:
        return {"decides": self.decides, "reason": self.reason, "shown": self.shown, "tests": self.tests}


def turning_point_of(outcome: ClaimOutcome) -> TurningPointResult | None:
    tp = outcome.claim.turning_point
    if tp is None:
        return None
    tests = {cat: {name: d[name] for name in TESTS if name in d}
             for cat, d in outcome.result.details.items() if isinstance(d, dict) and "u_test" in d}
    return TurningPointResult(tp.decides, tp.reason, tests)


@dataclass(frozen=True)
class Statements:
    claim: str
    verdict: str  # under the paper's method (the claim's tolerance)
    method: str  # the tolerance policy and its check
    estimand: EstimandResult
    expected: str  # where the expected value comes from
    flags: tuple[Flag, ...] = ()
    equivalence: NullEquivalence | None = None
    turning_point: TurningPointResult | None = None

    def lines(self) -> list[str]:
        out = [f"{self.claim}: {self.verdict} under the paper's method ({self.method})",
               f"  estimand: {self.estimand.text()}",
               f"  expected value: {self.expected}"]
        if self.equivalence is not None:
            out.append(f"  {self.equivalence.text()}")
        if self.turning_point is not None:
            out.append(f"  turning point: {self.turning_point.text()}")
        return out

    def as_json(self) -> dict[str, Any]:
        """The entries of the claim in ``claims --json``."""
        derived = next((f for f in self.flags if f.name == DERIVED), None)
        return {"verdict_paper_method": self.verdict, "estimand": self.estimand.as_json(),
                "expected_source": self.expected,
                "derived": None if derived is None else {"reason": derived.detail},
                "equivalence": None if self.equivalence is None else self.equivalence.as_json(),
                "turning_point": None if self.turning_point is None else self.turning_point.as_json()}


def statements_of(outcome: ClaimOutcome, ctx: ClaimContext) -> Statements:
    """The statements of one evaluated claim on its context (memoised on the context)."""
    memo = ctx.cache.setdefault("statements", {})
    claim = outcome.claim
    if claim.id in memo:
        return memo[claim.id]
    flags: tuple[Flag, ...] = tuple(f for f in outcome.flags if f.name == DERIVED)
    if claim.derived is not None:
        expected = f"derived (a regression check of the data, not a reproduction): {claim.derived.reason}"
    else:
        expected = f"from the paper ({claim.source})"
    st = Statements(claim.id, outcome.verdict, f"{outcome.tolerance.policy}: {outcome.check.why}",
                    estimand_of(outcome, ctx), expected, flags,
                    None if claim.equivalence is None else null_equivalence(claim.equivalence, outcome.result),
                    turning_point_of(outcome))
    memo[claim.id] = st
    return st


def table_interval(outcome: ClaimOutcome, statements: Statements | None) -> tuple[float, float] | str | None:
    """The interval the claims table shows: for a sample, the clustered interval of the headline
    (or ``not estimable``); for a census, the statistic's own interval only when it is not one
    over models (e.g. a model's measurement uncertainty); without a declared estimand, the
    statistic's interval."""
    r = outcome.result
    if statements is None or statements.estimand.estimand is None:
        return r.interval
    est = statements.estimand
    if est.kind == "census":
        return r.interval if r.interval is not None and r.interval_kind != ACROSS_MODELS else None
    iv = est.intervals.get(est.headline)
    if iv is None:  # the headline is no resampled statistic (e.g. the smallest p of a null claim's cells)
        return None if est.intervals else "not estimable"
    if not iv.estimable or iv.interval is None or any(math.isnan(v) for v in iv.interval):
        return "not estimable"
    return iv.interval

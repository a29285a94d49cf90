"""Claims: what each claim's question needs beyond the paper's method.

There is one ``Statements`` per evaluated claim, printed under the claims table, written to
``claims --json`` and shown in REPORT.md. None of it changes the verdict, which stays the verdict
under the paper's method (the claim's tolerance):

1. the estimand (census or sample) and the interval over models it calls for
   (``repro.diagnostics.estimand``: clustered, ``not estimable``, or none for a census);
2. for a null claim, the equivalence test at the declared margin and its bound
   (``repro.diagnostics.null_equivalence``);
3. where the expected value comes from: the paper (the claim's ``source``) or the data under test
   (``[claim.derived]``: flag ``derived``, a regression check of the data, not a reproduction);
4. for an inverted-U claim, the tests of its turning point (Lind-Mehlum's U test with the vertex
   and its Fieller interval, Simonsohn's two lines) and which one decides
   (``[claim.turning_point]``);

and, where the study declares them, the verdicts under quirk-corrected variants of the
published data (``repro.diagnostics.quirk_corrections``; flag ``quirk`` when one differs), and for
a sweep the analysis per declared unit (run, strength).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from repro.analysis.clustered import LOCO
from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.claims.verdict import ACROSS_MODELS, DERIVED, Flag
from repro.diagnostics.estimand import EstimandResult, estimand_of
from repro.diagnostics.null_equivalence import NullEquivalence, null_equivalence
from repro.diagnostics.quirk_corrections import QuirkSurvival, quirk_survival

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
            verdicts = ", ".join(
                f"{TESTS[name]}{' (decides)' if name == self.decides else ''} "
                f"{'inverted U' if t['inverted_u'] else 'not shown'}"
                for name, t in tests.items()
            )
            parts.append(
                f"{cat}: vertex {u['vertex']:.3f} in [{u['x_low']:.3f}, {u['x_high']:.3f}], "
                f"Fieller {fieller}, U test p = {u['p']:.2g}; {verdicts}"
            )
        return (
            f"inverted U {'shown' if self.shown else 'not shown'} by the deciding "
            f"{TESTS[self.decides]}: " + "; ".join(parts)
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "decides": self.decides,
            "reason": self.reason,
            "shown": self.shown,
            "tests": self.tests,
        }


def turning_point_of(outcome: ClaimOutcome) -> TurningPointResult | None:
    tp = outcome.claim.turning_point
    if tp is None:
        return None
    tests = {
        cat: {name: d[name] for name in TESTS if name in d}
        for cat, d in outcome.result.details.items()
        if isinstance(d, dict) and "u_test" in d
    }
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
    unit: str = (
        ""  # a sweep's analysis per declared unit (run, strength), when the statistic reports it
    )
    quirks: QuirkSurvival | None = None  # the verdicts on the study's quirk-corrected variants

    def lines(self) -> list[str]:
        out = [
            f"{self.claim}: {self.verdict} under the paper's method ({self.method})",
            f"  estimand: {self.estimand.text()}",
            f"  expected value: {self.expected}",
        ]
        if self.equivalence is not None:
            out.append(f"  {self.equivalence.text()}")
        if self.turning_point is not None:
            out.append(f"  turning point: {self.turning_point.text()}")
        if self.unit:
            out.append(f"  unit: {self.unit}")
        if self.quirks is not None and self.quirks.variants:
            out.append(f"  quirk-corrected variants: {self.quirks.text()}")
        return out

    def as_json(self) -> dict[str, Any]:
        """The entries of the claim in ``claims --json``."""
        derived = next((f for f in self.flags if f.name == DERIVED), None)
        return {
            "verdict_paper_method": self.verdict,
            "estimand": self.estimand.as_json(),
            "expected_source": self.expected,
            "derived": None if derived is None else {"reason": derived.detail},
            "equivalence": None if self.equivalence is None else self.equivalence.as_json(),
            "turning_point": None if self.turning_point is None else self.turning_point.as_json(),
            "unit": self.unit or None,
            "quirk_variants": None
            if self.quirks is None or not self.quirks.variants
            else self.quirks.as_json(),
        }


def unit_text(outcome: ClaimOutcome) -> str:
    """A sweep's trend per run and per strength, and how an ambiguous strength was read.

    The trends are the ``unit_run`` and ``unit_strength`` details, the reading of an ambiguous
    strength ``crop_scale_below_1``; each is shown when the statistic reports it.
    """
    d = outcome.result.details
    if "unit_strength" not in d or "unit_run" not in d:
        return ""
    e = outcome.claim.estimand
    declared = e.unit if e is not None else "not declared"
    r, st = d["unit_run"], d["unit_strength"]
    text = (
        f"declared {declared}; per strength rho {st['rho']:.4f} [{st['interval'][0]:.3f}, "
        f"{st['interval'][1]:.3f}] over {st['n']} strengths "
        f"({st['runs_per_strength']['min']}-{st['runs_per_strength']['max']} runs each; "
        f"{st['method']}); per run rho {r['rho']:.4f} over {r['n']} runs"
    )
    for run, c in d.get("crop_scale_below_1", {}).items():
        pct, frac = c["readings"]["percent"], c["readings"]["fraction"]
        text += (
            f"; {run} read as a {c['decided']} (strength {c['strength_used']:g}), decided from its "
            f"error ratios on the {c['factors']} other factors: sum of squared z {pct['z2']:.1f} "
            f"against strength {pct['nearest_level']:g} (as 0.2%) vs {frac['z2']:.1f} against "
            f"{frac['nearest_level']:g} (as 20%); rho {pct['rho']:.4f} as a percent, "
            f"{frac['rho']:.4f} as a fraction, {c['rho_without']:.4f} without it"
        )
    return text


def statements_of(outcome: ClaimOutcome, ctx: ClaimContext) -> Statements:
    """The statements of one evaluated claim on its context (memoised on the context)."""
    memo = ctx.cache.setdefault("statements", {})
    claim = outcome.claim
    if claim.id in memo:
        return memo[claim.id]
    flags: tuple[Flag, ...] = tuple(f for f in outcome.flags if f.name == DERIVED)
    quirks = quirk_survival(outcome, ctx)
    if (flag := quirks.flag()) is not None:
        flags += (flag,)
    if claim.derived is not None:
        expected = (
            f"derived (a regression check of the data, not a reproduction): {claim.derived.reason}"
        )
    else:
        expected = f"from the paper ({claim.source})"
    st = Statements(
        claim.id,
        outcome.verdict,
        f"{outcome.tolerance.policy}: {outcome.check.why}",
        estimand_of(outcome, ctx),
        expected,
        flags,
        None if claim.equivalence is None else null_equivalence(claim.equivalence, outcome.result),
        turning_point_of(outcome),
        unit_text(outcome),
        quirks,
    )
    memo[claim.id] = st
    return st


def statement_flags(
    outcome: ClaimOutcome, ctx: ClaimContext, entry: dict[str, Any]
) -> dict[str, Any]:
    """The claim's ``claims --json`` entry with the statements' flags added.

    The flags (``quirk``) are added to the entry's ``flags``.
    """
    have = {(f["name"], f["detail"]) for f in entry.get("flags", [])}
    extra = [
        {"name": f.name, "detail": f.detail}
        for f in statements_of(outcome, ctx).flags
        if (f.name, f.detail) not in have
    ]
    return entry | {"flags": [*entry.get("flags", []), *extra]} if extra else entry


#: the tag each kind of interval carries in the claims table (``interval_tag``), and what it is
INTERVAL_TAGS = {
    "boot": "95% percentile cluster bootstrap over models (10 or more clusters)",
    "loco": "range of the statistic without each cluster in turn (3-9 clusters: a bootstrap's "
    "coverage is unknown there; not a confidence interval)",
    "models": "95% bootstrap over models (no clusters declared)",
    "meas": "95% interval of a measurement (a census: no interval over models)",
}


def interval_tag(outcome: ClaimOutcome, statements: Statements | None) -> str:
    """The kind of the interval ``table_interval`` gives (an ``INTERVAL_TAGS`` key).

    "" when it gives none.
    """
    return shown_interval(outcome, statements)[1]


def shown_interval(
    outcome: ClaimOutcome, statements: Statements | None
) -> tuple[tuple[float, float] | str | None, str]:
    """``table_interval`` and its ``interval_tag``, computed once."""
    shown = table_interval(outcome, statements)
    if shown is None or isinstance(shown, str):
        return shown, ""
    if (
        statements is None
        or statements.estimand.estimand is None
        or statements.estimand.kind == ("census")
    ):
        return shown, "models" if outcome.result.interval_kind == ACROSS_MODELS else "meas"
    iv = statements.estimand.intervals[statements.estimand.headline]
    return shown, "loco" if iv.kind == LOCO else "boot"


def table_interval(
    outcome: ClaimOutcome, statements: Statements | None
) -> tuple[float, float] | str | None:
    """The interval the claims table shows.

    For a sample, the clustered interval of the headline (or ``not estimable``); for a census, the
    statistic's own interval only when it is not one over models (e.g. a model's measurement
    uncertainty); without a declared estimand, the statistic's interval.
    """
    r = outcome.result
    if statements is None or statements.estimand.estimand is None:
        return r.interval
    est = statements.estimand
    if est.kind == "census":
        return r.interval if r.interval is not None and r.interval_kind != ACROSS_MODELS else None
    iv = est.intervals.get(est.headline)
    if (
        iv is None
    ):  # the headline is no resampled statistic (e.g. the smallest p of a null claim's cells)
        return None if est.intervals else "not estimable"
    if not iv.estimable or iv.interval is None or any(math.isnan(v) for v in iv.interval):
        return "not estimable"
    return iv.interval

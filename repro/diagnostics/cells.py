"""Claims: the cells of the claims table, one function per column.

Each takes the claim's outcome and what a diagnostic says of it (None for the core's columns);
the columns themselves, their order and the diagnostic that fills each are declared in
``repro.diagnostics.registry``.
"""

from __future__ import annotations

from typing import Any

from repro.base.numbers import fmt_interval, fmt_p, fmt_value
from repro.claims.check import ClaimOutcome
from repro.claims.verdict import NOT_CHECKED
from repro.diagnostics.replication import Replication
from repro.diagnostics.statements import shown_interval
from repro.diagnostics.strength import Strength

#: the published cell of a claim that states no number (a sign, a range, a null)
NO_NUMBER = "-"
P_VERDICT = "P(verdict)"
P_FINDING = "P(finding)"
STRENGTH = "strength"
FINDING = "finding"


def verdict_text(o: ClaimOutcome, _: object = None) -> str:
    if o.verdict in NOT_CHECKED:  # never as recorded, whatever the claim file expects
        return o.verdict.upper()
    if o.claim.expected == "not_reproduced":
        return (
            f"{o.verdict} (known)"
            if not o.reproduced
            else "reproduced (UNEXPECTED: was known not to)"
        )
    return o.verdict


def inputs_text(o: ClaimOutcome, _: object = None) -> str:
    """The provenance counts of the claim's input values (``measured 48, published 96``)."""
    return "-" if o.provenance is None else o.provenance.text()


def evidence_text(o: ClaimOutcome, _: object = None) -> str:
    """``re-analysis``, ``measured (48 of 48)``, ``mixed (3 of 192 measured)``, ``mini``."""
    return o.evidence.text()


def finding_text(o: ClaimOutcome, s: Strength | None) -> str:
    """The finding's verdict, and the verdict under the paper's method where it differs.

    The finding's verdict is ``repro.diagnostics.strength``'s; the paper's method is its digits, or
    a null's p >= 0.05 reading: ``reproduced; digits not_reproduced (known)``. Without a strength:
    the verdict.
    """
    if s is None or s.finding.verdict == o.verdict:
        return verdict_text(o)
    other = (
        "digits"
        if s.digits is not None
        else "lenient reading"
        if s.finding.lenient_reading
        else "paper's reading"
    )
    return f"{s.finding.verdict}; {other} {verdict_text(o)}"


def interval_text(o: ClaimOutcome, statements: Any | None) -> str:
    """The claim's one interval with the tag of its kind (``[-0.880, -0.614] loco``).

    Without its statements, the statistic's own interval.
    """
    if statements is None:
        return fmt_interval(o.result.interval)
    return interval_cell(*shown_interval(o, statements))


def interval_cell(shown: tuple[float, float] | str | None, tag: str) -> str:
    """``[-0.880, -0.614] loco``: a shown interval (``shown_interval``) and its tag."""
    return fmt_interval(shown) + (f" {tag}" if tag else "")


def claim_cell(o: ClaimOutcome, _: object = None) -> str:
    """The claim's id."""
    return o.claim.id


def published_cell(o: ClaimOutcome, _: object = None) -> str:
    """The published number, ``NO_NUMBER`` for a claim that states none."""
    return f"{o.claim.published:g}" if o.claim.published is not None else NO_NUMBER


def recomputed_cell(o: ClaimOutcome, _: object = None) -> str:
    """The recomputed statistic."""
    return fmt_value(o.result.value)


def p_verdict_cell(o: ClaimOutcome, r: Replication) -> str:
    """The share of replications that keep the verdict."""
    return fmt_p(r.p_verdict)


def p_finding_cell(o: ClaimOutcome, s: Strength) -> str:
    """The share of replications that keep the finding."""
    return fmt_p(s.finding.p)


def grade_cell(o: ClaimOutcome, s: Strength) -> str:
    """The strength grade."""
    return s.grade

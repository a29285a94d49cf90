"""Claims: which verdicts survive the corrections of the published data's quirks.

A study names its quirk-corrected variants (``[quirks] variants = "module:function"`` in its
study.toml: ``(ClaimContext) -> QuirkCorrections``): each a context on the corrected data (a column
recomputed the standard way, or a quirky column dropped from what reads it), with the published
columns the correction touches, plus notes on quirks that need no variant (e.g. a constant factor
that no rank statistic can see).

Every claim is re-judged on each variant by its own tolerance (the paper's method) and by its
qualitative content (``[claim.qualitative]``: e.g. the sign and significance its digits stand
for), so a rounding that moves (-0.774 no longer rounds to -0.76) is told apart from a finding
that moves. A claim whose statistic reads none of the touched columns cannot move: it is
reported as not reading the quirk, without a recomputation. A verdict that differs on a variant
gets the flag ``quirk`` (``repro.claims.verdict``); the verdict itself is never changed.

Variants are recomputed without bootstrap intervals (the paper's policies do not read them;
the claim's own result carries its intervals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from repro.base.errors import ConfigError, ReproError
from repro.base.registry import load_lazy
from repro.claims.check import ClaimOutcome, evaluate, judge
from repro.claims.context import ClaimContext
from repro.claims.verdict import QUIRK, UNDEFINED, Flag, verdict_of
from repro.diagnostics.robustness import qualitative_tolerance


@dataclass(frozen=True)
class QuirkVariant:
    """The study's data with one quirk corrected (or a combination of corrections)."""

    id: str  # e.g. "Q1", "Q1+Q3"
    title: str  # what was corrected, e.g. "ReaL dropped from ID and from the benchmarks"
    context: ClaimContext
    columns: tuple[str, ...]  # the published columns the correction touches


@dataclass(frozen=True)
class QuirkCorrections:
    variants: list[QuirkVariant]
    notes: list[str] = field(default_factory=list)  # quirks that need no variant, and why


@dataclass(frozen=True)
class VariantVerdict:
    variant: str
    reads: bool  # the claim's statistic reads a column the correction touches
    value: float | None = None  # the statistic on the variant (None: not recomputed, or undefined)
    verdict: str = ""  # under the claim's tolerance; "" when not recomputed
    qualitative: str | None = None  # under its qualitative content, where it has one
    why: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "reads_quirk": self.reads,
            "value": self.value,
            "verdict": self.verdict or None,
            "qualitative": self.qualitative,
            "why": self.why or None,
        }


@dataclass(frozen=True)
class QuirkSurvival:
    """One claim's verdicts on every variant of its study."""

    verdict: str
    qualitative: str | None
    variants: list[VariantVerdict]
    # variant id -> what it corrects ("Q1": "ReaL (last batch, 326 images) dropped ..."): printed
    # once beside the ids wherever they are shown (``legend``)
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def moved(self) -> list[str]:
        """The variants on which the verdict (under the claim's tolerance) differs."""
        return [v.variant for v in self.variants if v.reads and v.verdict != self.verdict]

    @property
    def moved_qualitative(self) -> list[str]:
        return [
            v.variant
            for v in self.variants
            if v.reads and self.qualitative is not None and v.qualitative != self.qualitative
        ]

    def flag(self) -> Flag | None:
        if not self.moved and not self.moved_qualitative:
            return None
        parts = [
            f"{v.variant}: {v.verdict}"
            + (f" (qualitative {v.qualitative})" if v.qualitative else "")
            for v in self.variants
            if v.variant in self.moved or v.variant in self.moved_qualitative
        ]
        return Flag(QUIRK, "the verdict differs with a quirk corrected: " + "; ".join(parts))

    def text(self) -> str:
        if not self.variants:
            return "no quirk-corrected variants"
        if not any(v.reads for v in self.variants):
            return (
                "reads no column a correction touches "
                f"({', '.join(v.variant for v in self.variants)}): cannot move"
            )
        parts = []
        for v in self.variants:
            if not v.reads:
                parts.append(f"{v.variant}: reads no corrected column")
                continue
            value = "undefined" if v.value is None else f"{v.value:.4g}"
            q = f", qualitative {v.qualitative}" if v.qualitative is not None else ""
            parts.append(f"{v.variant}: {value}, {v.verdict}{q}")
        moved = self.moved or self.moved_qualitative
        return (
            (
                "survives every correction"
                if not moved
                else f"moves on {', '.join(dict.fromkeys(moved))}"
            )
            + ": "
            + "; ".join(parts)
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "qualitative": self.qualitative,
            "moved": self.moved,
            "moved_qualitative": self.moved_qualitative,
            "variants": [v.as_json() for v in self.variants],
        }


def corrections(ctx: ClaimContext) -> QuirkCorrections:
    """The study's quirk-corrected variants (none when it declares none).

    They are memoised on the context.
    """
    if "variants.corrections" in ctx.cache:
        return ctx.cache["variants.corrections"]
    ref = ctx.study.quirk_variants
    if ref is None:
        out = QuirkCorrections([])
    elif (
        ctx.source != "published"
    ):  # the quirks are the published numbers'; our measurements are judged as they are
        out = QuirkCorrections(
            [],
            [f"quirk-corrected variants apply to the published data, not to --source {ctx.source}"],
        )
    else:
        fn = load_lazy(ref, f"{ctx.study.origin}: [quirks] variants")
        out = fn(ctx)  # type: ignore[operator]
        if not isinstance(out, QuirkCorrections):
            raise ConfigError(
                f"{ctx.study.origin}: [quirks] variants {ref} returned {type(out).__name__}, "
                "expected QuirkCorrections"
            )
    ctx.cache["variants.corrections"] = out
    return out


def _judge_variant(outcome: ClaimOutcome, variant: QuirkVariant, qual) -> VariantVerdict:
    claim = outcome.claim
    try:
        o = evaluate(claim, variant.context)
    except (ReproError, ValueError, ArithmeticError) as exc:
        return VariantVerdict(
            variant.id,
            True,
            None,
            UNDEFINED,
            None if qual is None else UNDEFINED,
            str(exc).splitlines()[0],
        )
    value = float(o.result.value)
    qv = None if qual is None else verdict_of(judge(claim, o.result, qual))
    return VariantVerdict(
        variant.id, True, value if math.isfinite(value) else None, o.verdict, qv, o.check.why
    )


def quirk_survival(outcome: ClaimOutcome, ctx: ClaimContext) -> QuirkSurvival:
    """The claim judged on every variant of its study (memoised on the context)."""
    memo = ctx.cache.setdefault("variants.survival", {})
    if outcome.claim.id in memo:
        return memo[outcome.claim.id]
    qual = qualitative_tolerance(outcome.claim, outcome.tolerance)
    base_q = None if qual is None else verdict_of(judge(outcome.claim, outcome.result, qual))
    read = set(outcome.result.sources)
    verdicts = []
    for variant in corrections(ctx).variants:
        if not read & set(variant.columns):
            verdicts.append(VariantVerdict(variant.id, False))
        else:
            verdicts.append(_judge_variant(outcome, variant, qual))
    titles = {v.id: v.title for v in corrections(ctx).variants}
    out = QuirkSurvival(outcome.verdict, base_q, verdicts, titles)
    memo[outcome.claim.id] = out
    return out


def legend(survivals: list[QuirkSurvival]) -> list[str]:
    """One line per quirk-corrected variant shown (``Q1: what it corrects``).

    This spells out the ids printed in flags and statements where they are printed.
    """
    titles: dict[str, str] = {}
    for s in survivals:
        titles.update(s.titles)
    return [f"  {vid}: {title}" for vid, title in titles.items()]

"""Claims on independent inputs (``python -m repro claims --source independent``).

Each claim is recomputed with every published input replaced by another lab's value of the same
checkpoint, measured under the same protocol, where one exists (the published value elsewhere).

Which values may replace a published one: the rows of ``repro.diagnostics.independent`` labelled
``agrees``, ``differs`` or ``inconclusive``, i.e. a column pair whose declared protocols agree on
every field both sides state, of a source model whose identity with the study model is
``certain`` or ``probable`` (``PROBABLE_USED``: a probable identity rests on read evidence such
as the same release or the same port, and every substituted input names its identity, counted
per level). Never an ``other_protocol`` pair, never a ``not_same`` identity. Where several
sources give a value of the same (model, column), ``CHOICE_RULE`` picks one, and the table
shows which.

Evidence: ``independent (k of N inputs)``: k of the claim's N per-model input values (its
models x its input columns, ``repro.claims.provenance``) were replaced. With k = 0 nothing of
the claim was measured elsewhere: its verdict is the re-analysis verdict, labelled
``re-analysis``, never counted as independent evidence. With k > 0 the claim is judged as on
measured inputs (``repro.claims.check.applicable_tolerance``: a rounding claim becomes "the
published statistic inside our 95% interval, same sign and significance"); a replaced input
whose pair ``differs`` (beyond the column's margin) is counted and shown but, unlike a measured
input on ``--source store``, does not fail the claim: it is evidence about the published number,
and the claim's own test on the replaced values is what is asked. The substituted
inputs whose value differs from the published one (``changed``) are counted, and those that
alone move the claim's statistic (``moved``: one recomputation per changed input, without
intervals) are named, largest effect first; a rank statistic often moves only when several
inputs change together, which the claim's ``shift`` shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from repro.base.table import ModelTable
from repro.claims.check import ClaimOutcome, evaluate, evaluate_all
from repro.claims.context import ClaimContext
from repro.claims.tolerance import is_nan
from repro.diagnostics.independent import (
    AGREES,
    DIFFERS,
    INCONCLUSIVE,
    Row,
    compare_source,
    rounding,
)
from repro.published.independent import study_declarations, study_protocols

LABEL = "independent"  # the table's source label of a substituted column
SAME_PROTOCOL = (AGREES, DIFFERS, INCONCLUSIVE)
PROBABLE_USED = True
LEVEL_ORDER = {"certain": 0, "probable": 1}
USED_LEVELS = ("certain", "probable") if PROBABLE_USED else ("certain",)
CHOICE_RULE = (
    "a published input is replaced only by a same-protocol value (agrees / differs / inconclusive "
    "in compare --independent; never other_protocol) of a source model whose identity is "
    f"{' or '.join(USED_LEVELS)} (never not_same). Several such values of one (model, column): "
    "a certain identity before a probable one; then per-image predictions scored here > values "
    "printed in full (counts) > rounded tables, more printed decimals first; then the study's "
    "order of sources"
)
EFFECT_RESOLUTION = 1e-12  # relative: a smaller change of a statistic is float noise, not a move
SHOW_MOVED = 3  # moved inputs named per claim in the text table (all of them in --json)


@dataclass(frozen=True)
class Substitute:
    """One published input replaced by an independent value."""

    model: str
    column: str
    published: float
    independent: float
    difference: float
    source: str
    source_model: str
    identity: str
    precision: str  # per-image | in full | rounded +-r
    label: str  # the per-model agreement label of the pair
    candidates: int  # same-protocol values of this (model, column) the rule chose among
    effect: float | None = None  # the claim's statistic moved by this input alone

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def text(self) -> str:
        alone = "" if self.effect is None else f", alone moves it {self.effect:+.4g}"
        return (
            f"{self.model} {self.column} {self.published:.4g} -> {self.independent:.4g} "
            f"({self.source}, {self.identity}{alone})"
        )


def precision_rank(row: Row, published_rounding: float) -> tuple[int, float, str]:
    """(class, rounding, words) of an independent value, by how precise it is.

    Per-image predictions scored here (0), a value printed in full (1), a rounded one (2, its
    half-unit of the last printed decimal).
    """
    if row.count is not None:
        return 0, 0.0, "per-image"
    half = 0.0 if row.interval is None else (row.interval[1] - row.interval[0]) / 2
    own = max(0.0, half - published_rounding)
    if own < 1e-9:
        return 1, 0.0, "in full"
    return 2, own, f"rounded +-{own:.2g}"


def chosen_values(ctx: ClaimContext) -> dict[tuple[str, str], Substitute]:
    """{(study model, column): the independent value that replaces the published one}.

    The values are those of the context's study (``CHOICE_RULE``). Every declaration error is raised
    as the loader's one-line ``DataError`` / ``ConfigError`` (file, row, field).
    """
    from repro.claims.agreement import study_margins

    decls = study_declarations(ctx.study)
    table = {m: dict(row) for m, row in ctx.table.values.items()}
    protocols = study_protocols(ctx.study, list(table))
    margins = study_margins(ctx.study)
    order = {d.name: i for i, d in enumerate(decls)}
    candidates: dict[tuple[str, str], list[tuple[tuple, Row, str, float, float]]] = {}
    for decl in decls:
        for r in compare_source(decl, table, protocols, margins, ctx.data_dir):
            if r.label not in SAME_PROTOCOL or r.identity not in USED_LEVELS:
                continue
            published, difference = r.published, r.difference
            if published is None or difference is None:
                continue
            sp = protocols.of(r.column) if protocols else None
            cls, own, words = precision_rank(r, rounding(sp.decimals if sp else None))
            key = (LEVEL_ORDER[r.identity], cls, own, order[r.source])
            candidates.setdefault((r.study_model, r.column), []).append(
                (key, r, words, published, difference)
            )
    out = {}
    for cell, found in candidates.items():
        _, r, words, published, difference = min(found, key=lambda c: c[0])
        out[cell] = Substitute(
            r.study_model,
            r.column,
            float(published),
            float(r.independent),
            float(difference),
            r.source,
            r.source_model,
            r.identity,
            words,
            r.label,
            len(found),
        )
    return out


def substituted_table(table: ModelTable, chosen: dict[tuple[str, str], Substitute]) -> ModelTable:
    """The published table with the chosen independent values in place.

    The replaced columns are labelled ``independent``.
    """
    other: dict[str, dict[str, float]] = {}
    for (model, column), s in chosen.items():
        other.setdefault(model, {})[column] = s.independent
    return table.overlay(other, LABEL)


def independent_context(
    ctx: ClaimContext, chosen: dict[tuple[str, str], Substitute], *, intervals: bool = True
) -> ClaimContext:
    """A fresh context on the substituted table (nothing cached)."""
    spec = ctx.spec
    if spec is not None and not intervals:
        from dataclasses import replace

        spec = replace(spec, resamples=0)
    return ClaimContext(
        ctx.study,
        ctx.data_dir,
        substituted_table(ctx.table, chosen),
        ctx.model_categories,
        LABEL,
        spec,
        intervals=intervals,
    )


@dataclass(frozen=True)
class IndependentOutcome:
    """One claim: its re-analysis outcome and its outcome on the substituted inputs.

    The outcome on the substituted inputs is there where some input was replaced.
    """

    study: str
    reanalysis: ClaimOutcome
    independent: ClaimOutcome | None  # None: k = 0 (or no source declared)
    total: int  # N: the claim's per-model input values
    substituted: tuple[Substitute, ...]  # the k replaced inputs
    declared: bool  # the study declares independent sources

    @property
    def k(self) -> int:
        return len(self.substituted)

    @property
    def changed(self) -> list[Substitute]:
        """The substituted inputs whose value differs from the published one.

        Largest |difference| first.
        """
        return sorted(
            (s for s in self.substituted if s.difference != 0.0),
            key=lambda s: (-abs(s.difference), s.model, s.column),
        )

    @property
    def differing(self) -> list[Substitute]:
        """The replaced inputs whose pair ``compare --independent`` labels ``differs``.

        ``differs``: beyond the column's margin. They are counted and shown, never gating the
        verdict, which is the claim's own test on these values.
        """
        return [s for s in self.substituted if s.label == DIFFERS]

    @property
    def moved(self) -> list[Substitute]:
        """The changed inputs that alone move the claim's statistic, largest |effect| first.

        Rank statistics often move only when several inputs change together.
        """
        return sorted(
            (s for s in self.changed if s.effect),
            key=lambda s: (-abs(s.effect or 0.0), s.model, s.column),
        )

    @property
    def shift(self) -> float | None:
        """The claim's statistic on independent inputs minus its re-analysis value."""
        if self.independent is None:
            return None
        a, b = float(self.independent.result.value), float(self.reanalysis.result.value)
        return None if math.isnan(a) or math.isnan(b) else a - b

    @property
    def verdict(self) -> str:
        """The verdict on independent inputs (the re-analysis verdict where k = 0)."""
        return (self.independent or self.reanalysis).verdict

    def evidence_text(self) -> str:
        if not self.declared:
            return "re-analysis (no independent inputs declared)"
        if self.independent is None:
            return f"re-analysis (0 of {self.total} inputs independent)"
        return f"independent ({self.k} of {self.total} inputs)"

    def by_identity(self) -> dict[str, int]:
        return {
            lvl: n for lvl in USED_LEVELS if (n := sum(s.identity == lvl for s in self.substituted))
        }

    def by_source(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.substituted:
            out[s.source] = out.get(s.source, 0) + 1
        return out

    def as_json(self) -> dict[str, Any]:
        def side(o: ClaimOutcome) -> dict[str, Any]:
            iv = o.result.interval
            return {
                "value": None if is_nan(float(o.result.value)) else float(o.result.value),
                "interval": None if iv is None else [None if is_nan(v) else float(v) for v in iv],
                "verdict": o.verdict,
                "tolerance": o.tolerance.policy,
                "why": o.check.why,
            }

        return {
            "id": self.reanalysis.claim.id,
            "study": self.study,
            "published": self.reanalysis.claim.published,
            "reanalysis": side(self.reanalysis),
            "independent": None if self.independent is None else side(self.independent),
            "verdict": self.verdict,
            "evidence": {
                "kind": LABEL if self.independent is not None else "re-analysis",
                "independent": self.k,
                "total": self.total,
                "by_identity": self.by_identity(),
                "by_source": self.by_source(),
                "declared": self.declared,
                "text": self.evidence_text(),
            },
            "shift": self.shift,
            "substituted": [s.as_json() for s in self.substituted],
            "changed": len(self.changed),
            "differs": len(self.differing),
            "moved": [s.as_json() for s in self.moved],
        }


def claim_inputs(o: ClaimOutcome) -> list[tuple[str, str]]:
    """The claim's per-model input values as (model, column): its provenance cells."""
    if o.provenance is None:
        return []
    return [(m, c) for c, row in o.provenance.cells.items() for m in row]


def _effects(
    outcome: ClaimOutcome, ctx: ClaimContext, moved: Sequence[Substitute]
) -> dict[tuple[str, str], float]:
    """How far each moved input alone moves the claim's statistic (no intervals)."""
    base = float(outcome.result.value)
    out = {}
    for s in moved:
        one = independent_context(ctx, {(s.model, s.column): s}, intervals=False)
        value = float(evaluate(outcome.claim, one).result.value)
        if not (math.isnan(value) or math.isnan(base)):
            d = value - base
            out[(s.model, s.column)] = (
                0.0 if abs(d) <= EFFECT_RESOLUTION * max(1.0, abs(base)) else d
            )
    return out


def independent_outcomes(ctx: ClaimContext, *, effects: bool = True) -> list[IndependentOutcome]:
    """Every claim of the context's (published) study on independent inputs, in claim-file order.

    ``effects``: also each changed input's effect alone (one recomputation each, without
    intervals).
    """
    from dataclasses import replace

    published = evaluate_all(ctx)
    declared = bool(study_declarations(ctx.study))
    chosen = chosen_values(ctx) if declared else {}
    sub_ctx = independent_context(ctx, chosen) if chosen else None
    out = []
    for o in published:
        cells = claim_inputs(o)
        subs = tuple(chosen[c] for c in cells if c in chosen)
        ind = None
        if subs and sub_ctx is not None:
            ind = evaluate(o.claim, sub_ctx)
            if effects:
                moved = [s for s in subs if s.difference != 0.0]
                eff = _effects(o, ctx, moved)
                subs = tuple(replace(s, effect=eff.get((s.model, s.column))) for s in subs)
        out.append(IndependentOutcome(ctx.study.name, o, ind, len(cells), subs, declared))
    return out

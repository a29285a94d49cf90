"""Claims: the power of the gate.

How large a regression of one model's value, or of every model's, does the gate see, and which
claims does it move?

The gate on measured inputs is two tests: per-model agreement of each measured value with its
published one (``repro.claims.agreement``: ``differs`` when the Holm-adjusted test over the
models of the column excludes 0 at alpha and the difference lies outside the study's declared
margin), and each claim's check under the tolerance it gets on measured inputs
(``repro.claims.check.applicable_tolerance``). Per column scope of the study's count model
(``repro.diagnostics.counts``: a measurement's column family, shifted together, e.g. all low-pass
ratios of a model; a held family, and a grid family's derived columns, one column at a time) this
module finds:

- agreement, one model: the smallest shift that per-model agreement detects with 80% power at
  its alpha, Holm over the ``models`` of the column (for a single shifted model its p is the
  smallest, tested at alpha / models). Fixed stimuli at the full protocol have no sampling
  noise: every shift beyond the margin is detected (the margin). Random stimuli (PGD's random
  starts) are two draws: the difference's SD is sqrt(2) times one draw's, and the shift
  solves P(|d| > max(margin, z_{1 - alpha / (2 models)} SD)) = 0.8 (normal approximation). A
  run on a subset of the images (``items``; ``repro.planner.subset_plan``) adds the subset's
  sampling noise: hypergeometric (finite-population correction) for fixed stimuli, a new
  sample for random ones. A family without counts (a fitted value drawn from random noise)
  is never conclusive: no shift is detected. The range is over the models (the SD depends on
  each model's rate);
- agreement, all models shifted together: P(at least one model differs) = 0.8, each model at
  alpha / models (Bonferroni, a lower bound of Holm's power);
- claims, one model: the smallest shift of that model's values, in either direction, that
  changes some claim's verdict (its reference: the verdict on the published values under the
  tolerance for measured inputs), searched on a geometric grid up to twice the population's
  range and refined by bisection; for a rank statistic it depends on the model's rank, so the
  range over the models is given, with the model where it is smallest and the claims that shift
  moves. Deterministic: at the full protocol of fixed stimuli a measurement has no sampling
  noise, so the power jumps from 0 to 1 at that shift (PGD's random starts are not added here);
- claims, all models: the smallest common shift that changes a verdict (rank statistics never
  move: none within the range);
- the gate: per model the smaller of the two one-model shifts.

Shifts are in the columns' own units (points for accuracies in %).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

from repro.analysis.redraws import Redraws
from repro.base.numbers import fmt_num
from repro.base.result_cache import cached
from repro.claims.agreement import FIXED, study_margins
from repro.claims.check import ClaimOutcome
from repro.claims.context import ClaimContext
from repro.claims.verdict import JUDGED
from repro.diagnostics.counts import CountModel, Family, noise_sd
from repro.diagnostics.replication import GateRejudge, count_model

POWER = 0.8
ALPHA = 0.05
GRID = 24  # shift magnitudes per direction
REFINE = 12  # bisection steps after the grid


@dataclass(frozen=True)
class Scope:
    """Columns shifted together: a count family, or one column of a held family."""

    id: str
    label: str
    measurement: str
    columns: tuple[str, ...]
    family: Family

    @property
    def unit(self) -> str:
        return "points" if self.family.scale == 100 else ""


def scopes(counts: CountModel) -> list[Scope]:
    out = []
    for f in counts.families:
        if f.redrawn and f.kind != "grid":
            out.append(Scope(f.id, f.label, f.measurement, f.columns, f))
        else:
            # a held or grid family's columns are different quantities (thresholds, a fit's
            # parameters)
            out += [
                Scope(f"{f.id}:{c.rsplit('/', 1)[-1]}", f"{f.label}: {c}", f.measurement, (c,), f)
                for c in f.columns
            ]
    return out


@dataclass(frozen=True)
class Shift:
    """The smallest signed shift that changes a verdict, and the claims whose verdict it changes.

    The shift is None when there is none within ``searched``.
    """

    model: str | None  # None: every model together
    delta: float | None
    moved: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScopePower:
    scope: Scope
    claims: tuple[str, ...]  # the judged claims reading the scope
    searched: float  # the largest |shift| searched
    one_model: tuple[Shift, ...] = ()
    all_models: Shift | None = None
    agreement_one: dict[str, float | None] | None = (
        None  # per model; None: no agreement test applies
    )
    agreement_all: float | None = None
    agreement_note: str = ""

    def claims_range(self) -> tuple[float, float, Shift] | None:
        """(smallest, largest) |shift| over the models whose verdicts some shift moves.

        Also the model where it is smallest.
        """
        found = [s for s in self.one_model if s.delta is not None]
        if not found:
            return None
        best = min(found, key=lambda s: abs(s.delta))  # type: ignore[arg-type]
        mags = [abs(s.delta) for s in found]  # type: ignore[arg-type]
        return min(mags), max(mags), best

    def agreement_range(self) -> tuple[float, float] | None:
        vals = [v for v in (self.agreement_one or {}).values() if v is not None]
        return (min(vals), max(vals)) if vals else None

    def gate_range(self) -> tuple[float, float] | None:
        """Per model the smaller of the agreement and the claims shift; their range."""
        agree = self.agreement_one or {}
        per = []
        for s in self.one_model:
            cands = [
                v
                for v in (agree.get(s.model or ""), None if s.delta is None else abs(s.delta))
                if v is not None
            ]
            if cands:
                per.append(min(cands))
        for m, v in agree.items():
            if v is not None and m not in {s.model for s in self.one_model}:
                per.append(v)
        return (min(per), max(per)) if per else None

    def as_json(self) -> dict[str, Any]:
        cr, ar, gr = self.claims_range(), self.agreement_range(), self.gate_range()
        return {
            "scope": self.scope.id,
            "label": self.scope.label,
            "measurement": self.scope.measurement,
            "columns": list(self.scope.columns),
            "unit": self.scope.unit,
            "power": POWER,
            "claims": list(self.claims),
            "searched": self.searched,
            "agreement": {
                "one_model": None if ar is None else list(ar),
                "all_models": self.agreement_all,
                "note": self.agreement_note,
            },
            "claims_check": {
                "one_model": None if cr is None else [cr[0], cr[1]],
                "most_sensitive": None
                if cr is None
                else {"model": cr[2].model, "shift": cr[2].delta, "moves": list(cr[2].moved)},
                "all_models": None
                if self.all_models is None
                else {"shift": self.all_models.delta, "moves": list(self.all_models.moved)},
            },
            "gate_one_model": None if gr is None else list(gr),
        }


def _bounds(fam: Family) -> tuple[float, float]:
    if fam.kind == "binomial":
        den = fam.denominator or fam.n
        return fam.scale * fam.offset / den, fam.scale * (fam.n + fam.offset) / den
    if fam.kind == "shape_texture":
        return 0.0, 1.0
    if fam.kind == "ratio":
        return 0.0, math.inf
    return -math.inf, math.inf


class _Shifts:
    """The claims reading one scope, judged on batches of shifted tables."""

    def __init__(self, ctx: ClaimContext, scope: Scope, readers: Sequence[ClaimOutcome]):
        self.ctx, self.scope = ctx, scope
        self.gate = GateRejudge(ctx, readers)
        self.readers = self.gate.readers
        self.rows = tuple(ctx.table.models)
        self.index = {m: i for i, m in enumerate(self.rows)}
        self.base = {
            c: np.array([ctx.table.values[m].get(c, np.nan) for m in self.rows], dtype=float)
            for c in scope.columns
        }

    def flips(self, shifts: np.ndarray, who: Sequence[int | None]) -> np.ndarray:
        """(claims, B): does shifting row ``who[b]`` by ``shifts[b]`` change each claim's verdict?

        ``who[b]`` None shifts every row.
        """
        b = len(shifts)
        cols = {}
        for c, base in self.base.items():
            arr = np.tile(base, (b, 1))
            for k, (d, i) in enumerate(zip(shifts, who, strict=True)):
                if i is None:
                    arr[k] += d
                else:
                    arr[k, i] += d
            cols[c] = arr
        return ~self.gate.kept(Redraws(self.ctx.table, self.rows, cols, b))

    def search(
        self, who: Sequence[int | None], rooms: np.ndarray, top: float
    ) -> list[tuple[float | None, tuple[str, ...]]]:
        """Per ``who`` the smallest signed shift that changes a verdict, and the claims it changes.

        The shift is searched up to ``top``, within the room ``rooms[i] = (below, above)``.
        """
        mags = top * np.geomspace(1e-4, 1.0, GRID)
        cases = [(w, s) for w in range(len(who)) for s in (-1.0, 1.0)]
        shifts, whom, keep = [], [], []
        for w, s in cases:
            room = rooms[w][1] if s > 0 else rooms[w][0]
            for m in mags:
                shifts.append(s * m)
                whom.append(who[w])
                keep.append(m <= room)
        flips = self.flips(np.array(shifts), whom)
        any_flip = flips.any(axis=0) & np.array(keep)
        found: dict[int, list[tuple[float, tuple[str, ...]]]] = {}
        brackets = []  # (case, low, high) magnitudes: no change at low, a change at high
        for c in range(len(cases)):
            hits = np.flatnonzero(any_flip[c * GRID : (c + 1) * GRID])
            if hits.size:
                k = int(hits[0])
                brackets.append((c, 0.0 if k == 0 else float(mags[k - 1]), float(mags[k])))
        for _ in range(REFINE):
            if not brackets:
                break
            mids = [(lo + hi) / 2 for _, lo, hi in brackets]
            f = self.flips(
                np.array([cases[c][1] * m for (c, _, _), m in zip(brackets, mids, strict=True)]),
                [who[cases[c][0]] for c, _, _ in brackets],
            ).any(axis=0)
            brackets = [
                (c, lo, mid) if hit else (c, mid, hi)
                for (c, lo, hi), mid, hit in zip(brackets, mids, f, strict=True)
            ]
        if brackets:
            final = self.flips(
                np.array([cases[c][1] * hi for c, _, hi in brackets]),
                [who[cases[c][0]] for c, _, _ in brackets],
            )
            for j, (c, _, hi) in enumerate(brackets):
                moved = tuple(
                    o.claim.id for o, hit in zip(self.readers, final[:, j], strict=True) if hit
                )
                found.setdefault(cases[c][0], []).append((cases[c][1] * hi, moved))
        out: list[tuple[float | None, tuple[str, ...]]] = []
        for w in range(len(who)):
            options = found.get(w, [])
            out.append(min(options, key=lambda t: abs(t[0])) if options else (None, ()))
        return out


def _scope_value(ctx: ClaimContext, scope: Scope, models: Sequence[str]) -> np.ndarray:
    rows = np.array(
        [[ctx.table.values.get(m, {}).get(c, np.nan) for c in scope.columns] for m in models],
        dtype=float,
    )
    if not rows.size:
        return np.array([])
    ok = np.isfinite(
        rows
    )  # the mean of a model's finite values; NaN where it has none (an undefined fit)
    return np.where(
        ok.any(axis=1), np.where(ok, rows, 0.0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1), np.nan
    )


def claim_shifts(
    ctx: ClaimContext, outcomes: Sequence[ClaimOutcome], scope: Scope
) -> tuple[tuple[str, ...], float, list[Shift], Shift | None]:
    """(claims reading the scope, largest |shift| searched, per-model shifts, all-models shift)."""
    readers = [
        o for o in outcomes if o.verdict in JUDGED and set(o.result.sources) & set(scope.columns)
    ]
    if not readers:
        return (), 0.0, [], None
    s = _Shifts(ctx, scope, readers)
    read = {m for o in readers for m in o.result.per_model}
    models = [
        m
        for m in ctx.table.models
        if m in read and all(np.isfinite(s.base[c][s.index[m]]) for c in scope.columns)
    ]
    if (
        not models
    ):  # no model has a value to shift (a column outside the table, e.g. a published constant)
        return tuple(o.claim.id for o in readers), 0.0, [], None
    pop = _scope_value(ctx, scope, [m for m in ctx.population if m in read] or models)
    spread = float(np.nanmax(pop) - np.nanmin(pop)) if pop.size else 0.0
    top = (
        2 * spread if spread > 0 else max(1e-3, float(np.nanmax(np.abs(pop))) if pop.size else 1.0)
    )
    lo, hi = _bounds(scope.family)  # the scope's value (the mean of its columns) stays in range
    vals = _scope_value(ctx, scope, models)
    rooms = np.stack([vals - lo, hi - vals], axis=1) if len(models) else np.zeros((0, 2))
    per = s.search([s.index[m] for m in models], rooms, top)
    one = [Shift(m, d, moved) for m, (d, moved) in zip(models, per, strict=True)]
    all_rooms = (
        np.array([[rooms[:, 0].min(), rooms[:, 1].min()]])
        if len(models)
        else np.array([[top, top]])
    )
    ((d_all, moved_all),) = s.search([None], all_rooms, top)
    return tuple(o.claim.id for o in readers), top, one, Shift(None, d_all, moved_all)


def _z(alpha: float) -> float:
    return float(stats.norm.isf(alpha / 2))


def detectable_shift(
    margin: float,
    sd: float | np.ndarray,
    models: int,
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> float:
    """The smallest shift that one model's test detects with ``power``.

    ``differs`` needs the observed difference beyond the margin and beyond the Holm threshold of the
    smallest of ``models`` p-values (``z_{1 - alpha / (2 models)}`` SDs). With no noise (``sd`` 0)
    every shift beyond the margin is detected: the margin.
    """
    sd = float(sd)
    if not math.isfinite(sd):
        return math.nan
    if sd == 0:
        return margin
    c = max(margin, _z(alpha / models) * sd)

    def gap(d: float) -> float:
        return float(stats.norm.sf((c - d) / sd) + stats.norm.cdf((-c - d) / sd)) - power

    return float(optimize.brentq(gap, 0.0, c + 20 * sd))


def detectable_shift_all(
    margin: float, sds: Sequence[float], *, alpha: float = ALPHA, power: float = POWER
) -> float:
    """The smallest common shift of all models that makes at least one differ with ``power``.

    Each model is tested at alpha / models (Bonferroni, a lower bound of Holm's power).
    """
    sds = [float(s) for s in sds if math.isfinite(s)]
    if not sds:
        return math.nan
    if min(sds) == 0:
        return margin
    m = len(sds)
    cs = [max(margin, _z(alpha / m) * s) for s in sds]

    def gap(d: float) -> float:
        miss = 1.0
        for c, s in zip(cs, sds, strict=True):
            miss *= 1 - float(stats.norm.sf((c - d) / s) + stats.norm.cdf((-c - d) / s))
        return (1 - miss) - power

    return float(optimize.brentq(gap, 0.0, max(cs) + 20 * max(sds)))


def agreement_shifts(
    ctx: ClaimContext,
    scope: Scope,
    models: Sequence[str],
    *,
    items: int | None = None,
    alpha: float = ALPHA,
) -> tuple[dict[str, float | None] | None, float | None, str]:
    """Per model the shift per-model agreement detects with 80% power, the all-models shift, a note.

    ``items``: a run on that many of the family's items (a subset) instead of all.
    """
    margins = study_margins(ctx.study)
    fams = [margins.family(c) for c in scope.columns]
    if any(f is None for f in fams):
        return (
            None,
            None,
            f"no implementation margin declared for {scope.columns[0]} (study `agreement` file)",
        )
    if not scope.family.redrawn:
        return (
            None,
            None,
            (
                "no counts published (a fitted value): per-model agreement is inconclusive "
                "whatever the shift"
            ),
        )
    margin = min(f.margin for f in fams)  # type: ignore[union-attr]
    fixed = all(f.stimuli == FIXED for f in fams)  # type: ignore[union-attr]
    n_models = max(len(models), 1)
    per: dict[str, float | None] = {}
    sds = []
    for m in models:
        sd = np.inf
        for c in scope.columns:  # the most precise column of the scope
            # a subset's sampling noise around our full run; two draws of random stimuli (ours, the
            # study's)
            sub = (
                0.0 if items is None else float(noise_sd(scope.family, ctx.table, [m], c, items)[0])
            )
            draws = (
                0.0
                if fixed
                else math.sqrt(2) * float(noise_sd(scope.family, ctx.table, [m], c, None)[0])
            )
            sd = min(sd, math.hypot(sub, draws))
        sds.append(sd)
        per[m] = (
            None if not math.isfinite(sd) else detectable_shift(margin, sd, n_models, alpha=alpha)
        )
    note = (
        ("fixed stimuli" if fixed else "random stimuli (two draws)")
        + f", margin {margin:g}"
        + (f", {items:,} of {scope.family.n:,} items" if items is not None else "")
    )
    return per, detectable_shift_all(margin, sds, alpha=alpha), note


def scope_power(ctx: ClaimContext, outcomes: Sequence[ClaimOutcome], scope: Scope) -> ScopePower:
    claims, top, one, everyone = claim_shifts(ctx, outcomes, scope)
    models = [
        m
        for m in ctx.population
        if all(ctx.table.values.get(m, {}).get(c) is not None for c in scope.columns)
    ]
    agree, agree_all, note = agreement_shifts(ctx, scope, models)
    return ScopePower(scope, claims, top, tuple(one), everyone, agree, agree_all, note)


def power_inputs(
    ctx: ClaimContext, outcomes: Sequence[ClaimOutcome], counts: CountModel
) -> dict[str, Any]:
    """Everything the power is computed from (``repro.base.result_cache``).

    The values of every column of the count model, the claims, the analysis definition, the count
    model, the margins, the parameters and the code.
    """
    cols = [c for f in counts.families for c in f.columns]
    table = {m: {c: row.get(c) for c in cols if c in row} for m, row in ctx.table.values.items()}
    statistics = sorted({o.claim.statistic.partition(":")[0] for o in outcomes})
    agreement = ctx.study.agreement
    return {
        "table": table,
        "claims": [o.claim for o in outcomes],
        "population": ctx.population,
        "spec": None if ctx.spec is None else ctx.spec.raw,
        "counts": counts.digest,
        "agreement": None
        if agreement is None
        else hashlib.sha256(agreement.read_bytes()).hexdigest(),
        "parameters": {"grid": GRID, "refine": REFINE, "alpha": ALPHA, "power": POWER},
        "statistics": statistics,  # the code: the package's source, in every key
    }


def gate_power(ctx: ClaimContext, outcomes: Sequence[ClaimOutcome]) -> list[dict[str, Any]]:
    """The power of every scope of the study's count model as JSON data (``ScopePower.as_json``).

    It is memoised on the context and kept in the user cache under the digest of its inputs, so it
    is computed once; [] for a study without a count model.
    """
    if "power" not in ctx.cache:
        counts = count_model(ctx)
        if counts is None:
            ctx.cache["power"] = []
        else:
            ctx.cache["power"], _ = cached(
                "power",
                power_inputs(ctx, outcomes, counts),
                lambda: [scope_power(ctx, outcomes, s).as_json() for s in scopes(counts)],
            )  # type: ignore[union-attr]
    return ctx.cache["power"]


def _fmt(v: float | None) -> str:
    return fmt_num(v, 3, style="g", nan="-", inf="-")


def _range(r: Sequence[float] | None) -> str:
    if r is None:
        return "-"
    return _fmt(r[0]) if math.isclose(r[0], r[1], rel_tol=1e-9) else f"{_fmt(r[0])}-{_fmt(r[1])}"


def power_rows(powers: Sequence[dict[str, Any]]) -> list[list[str]]:
    """One row per scope (``gate_power``'s entries) for the printed and the report's table."""
    rows = []
    for p in powers:
        check = p["claims_check"]
        best = check["most_sensitive"]
        if not p["claims"]:
            claims_one, moves = "no claim reads it", "-"
        elif best is None:
            claims_one, moves = f"none within +-{_fmt(p['searched'])}", "-"
        else:
            claims_one = f"{_range(check['one_model'])} ({best['model']}: {best['shift']:+.3g})"
            moves = ", ".join(best["moves"])
        every = check["all_models"]
        claims_all = (
            "-"
            if every is None
            else f"none within +-{_fmt(p['searched'])}"
            if every["shift"] is None
            else f"{every['shift']:+.3g} ({', '.join(every['moves'])})"
        )
        agree = p["agreement"]
        rows.append(
            [
                f"{p['scope']} ({p['measurement']})",
                p["unit"] or "-",
                _range(agree["one_model"]),
                claims_one,
                moves,
                _range(p["gate_one_model"]),
                _fmt(agree["all_models"]),
                claims_all,
            ]
        )
    return rows


POWER_HEADER = [
    "scope (measurement)",
    "unit",
    "one model: agreement",
    "one model: claims (most sensitive model)",
    "claims it moves",
    "one model: gate",
    "all models: agreement",
    "all models: claims",
]


def power_notes(powers: Sequence[dict[str, Any]]) -> list[str]:
    """The agreement rule of each scope, grouped (``scope, scope: note``)."""
    by_note: dict[str, list[str]] = {}
    for p in powers:
        if p["agreement"]["note"]:
            by_note.setdefault(p["agreement"]["note"], []).append(p["scope"])
    return [f"{', '.join(scopes_)}: {note}" for note, scopes_ in by_note.items()]


def format_power(powers: Sequence[dict[str, Any]], study: str) -> str:
    """The power table of ``python -m repro claims --power``."""
    if not powers:
        return (
            f"{study}: no count model (study.toml `replication`): the gate's power is not computed"
        )
    body = power_rows(powers)
    widths = [max(len(r[i]) for r in [POWER_HEADER, *body]) for i in range(len(POWER_HEADER))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()  # noqa: E731
    return "\n".join(
        [
            f"{study}: the smallest shift of one model's value (range over the models) and of "
            f"every model's that the gate detects with {POWER:.0%} power at alpha {ALPHA:g}, and "
            "the claims it moves",
            "",
            line(POWER_HEADER),
            line(["-" * w for w in widths]),
            *map(line, body),
            "",
            "agreement =",
            *(f"  {n}" for n in power_notes(powers)),
        ]
    )

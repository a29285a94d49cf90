"""Placement: one model among one study's population (``[placement]`` of its study.toml).

For each placement column, each of the model's values on that column's scale (measured or
external, ``repro.placement.values``) is ranked among the population (``repro.placement.rank``:
rank, tie range, percentile, the range over the value's interval). The model's values of columns
the study declares not comparable are listed with the reason, never ranked. A model inside the
study's population (its zoo architecture is one of ``inside``) also gets its residual against each
of the study's fits (``repro.placement.fit``) and the study's claims recomputed with it as one
more model (``repro.placement.claims_n1``); a model outside gets the study's note instead. A
study model is ranked among the other members (its own published value left out) and gets
neither (it is already in the population).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from repro.analysis.chance import ChanceTest, record_test
from repro.base.errors import ConfigError, UnknownNameError
from repro.base.registry import resolve_lazy
from repro.base.study import PlacementColumn, PlacementFit, Study
from repro.placement.claims_n1 import claims_with
from repro.placement.fit import Residual, residual
from repro.placement.population import Population, population
from repro.placement.rank import Rank, rank_among
from repro.placement.reference import Reference
from repro.placement.values import ModelValues, Value
from repro.zoo import get_spec


@dataclass(frozen=True)
class Placed:
    column: PlacementColumn
    value: Value
    rank: Rank | None
    population: Population
    note: str = ""  # why there is no rank, or what it was ranked among
    # the decisions the value rests on against chance (shape bias: repro.analysis.chance)
    chance: ChanceTest | None = None

    @property
    def at_chance(self) -> bool:
        return self.chance is not None and self.chance.at_chance


@dataclass(frozen=True)
class NotPlaced:
    """A value of the model on another scale than the study's, and why it is not ranked."""

    value: Value
    reason: str


@dataclass(frozen=True)
class FitResult:
    fit: PlacementFit
    residual: Residual | None
    note: str = ""  # why there is none (a column the model lacks)
    label: str = ""  # "ID accuracy on Shape bias"


@dataclass(frozen=True)
class ReferenceRank:
    reference: Reference
    ranks: dict[str, Rank]


@dataclass
class StudyPlacement:
    study: Study
    model: str
    values: ModelValues
    placed: list[Placed] = field(default_factory=list)
    missing: list[PlacementColumn] = field(
        default_factory=list
    )  # columns the model has no value of
    not_comparable: list[NotPlaced] = field(default_factory=list)
    external: list[Value] = field(
        default_factory=list
    )  # external values of other columns (figures, fits)
    inside: bool = False
    scope: str = ""  # why inside or outside, in words
    fits: list[FitResult] = field(default_factory=list)
    claims: list[Any] = field(default_factory=list)  # repro.placement.claims_n1.ClaimN1
    references: list[ReferenceRank] = field(default_factory=list)

    @property
    def ranked(self) -> list[Placed]:
        return [p for p in self.placed if p.rank is not None]


def _interval(column: PlacementColumn, value: Value) -> tuple[float, float] | None:
    if column.interval is None or value.record is None:
        return value.interval

    got = resolve_lazy(column.interval)(value.record, value.column_value)  # type: ignore[operator]
    return None if got is None else (float(got[0]), float(got[1]))


def architecture(model: str) -> tuple[str | None, str]:
    """(the zoo architecture of ``model``, or None, and a phrase for the output)."""
    try:
        return get_spec(model).arch, ""
    except UnknownNameError:
        return None, "not a zoo model, so its architecture is unknown"


def _scope(study: Study, model: str, members: set[str]) -> tuple[bool, str]:
    placement = study.placement
    assert placement is not None
    if model in members:
        return False, (
            f"`{model}` is a model of the study: ranked among the other members (its own published "
            "value left out); no residual or n + 1 claims (it is in the population already)"
        )
    arch, why = architecture(model)
    if arch is not None and arch in placement.inside:
        return True, f"architecture `{arch}` is inside the study's population"
    inside = (
        f"not one of the study's ({', '.join(f'`{a}`' for a in placement.inside)})"
        if placement.inside
        else "not declared inside the study's population (it declares none)"
    )
    what = why or f"architecture `{arch}` is {inside}"
    return False, f"{what}. {placement.outside}".strip() if placement.outside else what


def _not_comparable(study: Study, values: ModelValues, placed_columns: set[str]) -> list[NotPlaced]:
    placement = study.placement
    assert placement is not None
    out = []
    for column, vs in sorted(values.values.items()):
        if column in placed_columns:
            continue
        for nc in placement.not_comparable:
            if any(fnmatch.fnmatchcase(column, pat) for pat in nc.values):
                out += [NotPlaced(v, nc.reason) for v in vs]
                break
    return out


def _fit(study: Study, ctx: Any, fit: PlacementFit, values: ModelValues) -> FitResult:
    analysis = ctx.analysis
    xcols, ycols = (
        analysis.columns_of("biases", fit.bias),
        analysis.columns_of("categories", fit.category),
    )
    label = (
        f"{analysis.spec.categories[fit.category].label} accuracy on "
        f"{analysis.spec.biases[fit.bias].label.lower()}"
    )
    lacking = [c for c in (*xcols, *ycols) if values.first(c) is None]
    if lacking:
        return FitResult(
            fit,
            None,
            "needs " + ", ".join(f"`{c}`" for c in lacking) + " (measured or external)",
            label,
        )
    xv, yv = [values.first(c) for c in xcols], [values.first(c) for c in ycols]
    x = sum(v.value for v in xv) / len(xv)  # type: ignore[union-attr]
    y = sum(v.value for v in yv) / len(yv)  # type: ignore[union-attr]
    xi = xv[0].interval if len(xv) == 1 else None  # type: ignore[union-attr]
    yi = yv[0].interval if len(yv) == 1 else None  # type: ignore[union-attr]
    members = analysis.population
    res = residual(
        analysis.bias(fit.bias, members),
        analysis.category(fit.category, members),
        x,
        y,
        degree=fit.degree,
        x_interval=xi,
        y_interval=yi,
    )
    return FitResult(fit, res, "", label)


def _references(study: Study, data_dir: Path, pops: dict[str, Population]) -> list[ReferenceRank]:
    placement = study.placement
    if placement is None or placement.references is None:
        return []

    out = []
    for ref in resolve_lazy(placement.references)(study, data_dir):  # type: ignore[operator]
        ranks = {
            c: rank_among(v, pops[c].values.values(), ref.intervals.get(c))
            for c, v in ref.values.items()
            if c in pops
        }
        out.append(ReferenceRank(ref, ranks))
    return out


def place(
    study: Study,
    values: ModelValues,
    data_dir: str | os.PathLike[str],
    *,
    context: Any = None,
    claims: bool = True,
    references: bool = False,
) -> StudyPlacement:
    """``values`` (one model's) placed among ``study``'s population.

    ``context``: the study's published claim context, when the caller has one; ``claims=False``:
    no n + 1 claims (the report computes them once); ``references``: rank the study's reference
    rows too."""
    placement = study.placement
    if placement is None:
        raise ConfigError(f"{study.origin}: study {study.name!r} declares no [placement]")
    root = Path(data_dir)
    model = values.model
    out = StudyPlacement(study, model, values)
    pops = {c.column: population(study, c, root, context=context) for c in placement.columns}
    members = set().union(*(p.values for p in pops.values()))
    for column in placement.columns:
        pop = pops[column.column]
        vs = values.of(column.values)
        if not vs:
            out.missing.append(column)
            continue
        others = {m: v for m, v in pop.values.items() if m != model}
        note = (
            f"ranked among the other {sum(v is not None for v in others.values())} (its own value "
            "left out)"
            if model in pop.values
            else ""
        )
        for v in vs:
            chance = record_test(v.record)
            iv = _interval(column, v)
            if (
                iv != v.interval
            ):  # the study's interval hook: shown wherever the value is, not only ranked over
                v = replace(v, interval=iv)
            try:
                r = rank_among(v.value, others.values(), iv)
            except ValueError as exc:
                out.placed.append(Placed(column, v, None, pop, f"not ranked: {exc}", chance))
                continue
            out.placed.append(Placed(column, v, r, pop, note, chance))
    placed_columns = {c for col in placement.columns for c in col.values}
    out.not_comparable = _not_comparable(study, values, placed_columns)
    shown = placed_columns | {n.value.column for n in out.not_comparable}
    out.external = [
        v
        for c, vs in sorted(values.values.items())
        if c not in shown
        for v in vs
        if v.kind == "external"
    ]
    out.inside, out.scope = _scope(study, model, members)
    if out.inside:
        ctx = context if context is not None else _published(study, root)
        if ctx.spec is not None:
            out.fits = [_fit(study, ctx, f, values) for f in placement.fits]
        if claims:
            out.claims = claims_with(ctx, values)
    if references:
        out.references = _references(study, root, pops)
    return out


def _published(study: Study, data_dir: Path) -> Any:
    from repro.claims.context import published_context

    return published_context(study, data_dir)


def placing_studies(studies: list[Study]) -> list[Study]:
    """The studies that declare a ``[placement]``."""
    return [s for s in studies if s.placement is not None]

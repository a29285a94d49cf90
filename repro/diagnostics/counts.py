"""Claims: the counts behind each published column, and how they are redrawn.

This is a study's count model, the ``replication`` file its study.toml names. The replication of a
claim (``repro.diagnostics.replication``) and the subset plan (``repro.planner.subset_plan``) draw
from it.

A count model is a list of column families (``[[family]]``), each one measurement's columns
and how a value comes from counts:

- ``binomial``: each value is a rate of ``n`` items (images), in units of ``scale`` (100 for a
  percentage), over a published ``denominator`` (default ``n``) with ``offset`` items added
  (the PGD quirk: (robust + 48) / 50,048): value = scale (k + offset) / denominator;
- ``shape_texture``: a shape bias S / (S + T) of ``n`` cue-conflict trials, each decided as
  shape, texture or other (a multinomial); S + T is the exact ratio's reduced denominator, or
  the multiple of it (at most ``n``) nearest the median S + T of the models whose denominator
  pins it (larger than n / 2): an ASSUMPTION, listed per model in the output;
- ``ratio``: filtered over clean top-1 (``clean``, in units of ``clean_scale``), both rates of
  ``n`` images; one clean count per model and redraw, shared by the columns of every ratio
  family of the same measurement and clean column (they divide by the same clean run);
- ``grid``: columns derived from a grid of per-condition counts the table holds
  (``<counts>/k/<cell>``, ``<counts>/n/<cell>``) through the study's ``derive`` hook (e.g.
  thresholds and a fit per redraw): each cell redrawn as a binomial of its n around its rate,
  what the hook derives cached on disk by the digest of its inputs
  (``repro.diagnostics.count_grids``);
- ``held``: not redrawn, with ``why`` (e.g. only fitted values are published): a claim reading
  such a column is replicated conditionally on its published values, and one reading nothing
  else is not replicated at all.

``random = true`` marks stimuli drawn at random (a new draw for every run, e.g. noise), so a
subset of them is a new sample, not a part of the full protocol's.

Two ways to draw (``draw``):

- a replication (a new sample of ``n`` items): binomial / multinomial counts around each
  model's value. Redrawing around values that are themselves noisy adds the sampling noise
  twice (a redrawn correlation is attenuated twice, a published one once); the statistics
  correct for it (``repro.analysis.redraws.debiased``), not the draw;
- a subset (``subset = {family: items}``): the values a run on ``items`` of the family's ``n``
  items (a seeded, class-stratified subset) would give: hypergeometric counts from the full
  set's (the finite-population correction; stratification only lowers the variance, which is
  not credited), or binomial ones for random stimuli; every other family keeps its value (the
  full protocol).
"""

from __future__ import annotations

import hashlib
import math
import os
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from repro.base.errors import ConfigError
from repro.base.table import ModelTable
from repro.base.textfile import read_toml
from repro.diagnostics.count_grids import derive_grid

KINDS = ("binomial", "shape_texture", "ratio", "grid", "held")
MIN_RESAMPLES = 1000
FIELDS = {
    "id",
    "label",
    "kind",
    "columns",
    "measurement",
    "n",
    "scale",
    "denominator",
    "offset",
    "clean",
    "clean_scale",
    "random",
    "why",
    "counts",
    "derive",
}


@dataclass(frozen=True)
class Family:
    """One measurement's columns and how their values come from counts.

    See the module docstring.
    """

    id: str
    label: str
    kind: str
    columns: tuple[str, ...]
    why: str
    measurement: str = ""
    n: int = 0
    scale: float = 1.0
    denominator: int = 0
    offset: int = 0
    clean: str = ""
    clean_scale: float = 1.0
    random: bool = False
    counts: str = ""  # grid: the table's count columns <counts>/k/<cell>, <counts>/n/<cell>
    derive: str = ""  # grid: "module:function" from redrawn counts to the family's columns

    @property
    def redrawn(self) -> bool:
        return self.kind != "held"


@dataclass(frozen=True)
class CountModel:
    families: tuple[Family, ...]
    resamples: int = MIN_RESAMPLES
    seed: int = 0
    origin: str = ""
    digest: str = ""  # sha256 of the file it was read from

    def family_of(self, column: str) -> Family | None:
        for f in self.families:
            if column in f.columns:
                return f
        return None

    def get(self, family: str) -> Family:
        for f in self.families:
            if f.id == family:
                return f
        raise ConfigError(
            f"{self.origin}: no column family {family!r} (known: "
            f"{', '.join(f.id for f in self.families)})"
        )


def _family(raw: Any, where: str) -> Family:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table")
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown field {unknown[0]!r} (known: {', '.join(sorted(FIELDS))})"
        )
    for key in ("id", "kind", "why"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ConfigError(f"{where}: field {key!r} must be a non-empty string")
    kind = raw["kind"]
    if kind not in KINDS:
        raise ConfigError(f"{where}: kind = {kind!r}, expected one of {', '.join(KINDS)}")
    cols = raw.get("columns")
    if not isinstance(cols, list) or not cols or not all(isinstance(c, str) and c for c in cols):
        raise ConfigError(f"{where}: field 'columns' must be a non-empty list of column names")

    def integer(key: str, default: int, least: int) -> int:
        v = raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise ConfigError(f"{where}: field {key!r} = {v!r}, expected an integer >= {least}")
        return v

    def number(key: str, default: float) -> float:
        v = raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
            raise ConfigError(f"{where}: field {key!r} = {v!r}, expected a positive number")
        return float(v)

    n = integer("n", 0, 0 if kind in ("held", "grid") else 1)
    fam = Family(
        id=raw["id"],
        label=str(raw.get("label", raw["id"])),
        kind=kind,
        columns=tuple(cols),
        why=raw["why"],
        measurement=str(raw.get("measurement", "")),
        n=n,
        scale=number("scale", 1.0),
        denominator=integer("denominator", n, 0),
        offset=integer("offset", 0, 0),
        clean=str(raw.get("clean", "")),
        clean_scale=number("clean_scale", 1.0),
        random=bool(raw.get("random", False)),
        counts=str(raw.get("counts", "")),
        derive=str(raw.get("derive", "")),
    )
    if kind == "grid" and (not fam.counts or ":" not in fam.derive):
        raise ConfigError(
            f"{where}: a grid family needs `counts` (the prefix of its count columns) and `derive` "
            '("module:function" from redrawn counts to its columns)'
        )
    if kind != "grid" and (fam.counts or fam.derive):
        raise ConfigError(
            f'{where}: `counts` and `derive` belong to a grid family (kind = "grid"), not {kind!r}'
        )
    if kind == "ratio" and not fam.clean:
        raise ConfigError(
            f"{where}: a ratio family needs `clean` (the clean top-1 column it divides by)"
        )
    if kind == "binomial" and fam.denominator < fam.n:
        raise ConfigError(f"{where}: denominator {fam.denominator} is smaller than n = {fam.n}")
    return fam


def read_count_model(path: str | os.PathLike[str]) -> CountModel:
    """A study's count model (its ``replication`` file); ConfigError naming the file and field."""
    path = Path(path)
    raw = read_toml(path, "a count model of [[family]] tables")
    where = str(path)
    unknown = sorted(set(raw) - {"resamples", "seed", "family"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r} (expected resamples, seed, [[family]])"
        )
    resamples, seed = raw.get("resamples", MIN_RESAMPLES), raw.get("seed", 0)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < MIN_RESAMPLES:
        raise ConfigError(
            f"{where}: resamples = {resamples!r}, expected an integer >= {MIN_RESAMPLES}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"{where}: seed = {seed!r}, expected a non-negative integer")
    entries = raw.get("family")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where}: no [[family]] tables")
    fams = tuple(_family(e, f"{where}: [[family]] #{i + 1}") for i, e in enumerate(entries))
    seen: dict[str, str] = {}
    for f in fams:
        if f.id in seen.values():
            raise ConfigError(f"{where}: family id {f.id!r} appears twice")
        for c in f.columns:
            if c in seen:
                raise ConfigError(f"{where}: column {c!r} is in families {seen[c]!r} and {f.id!r}")
            seen[c] = f.id
    return CountModel(fams, resamples, seed, where, hashlib.sha256(path.read_bytes()).hexdigest())


# -- drawing ------------------------------------------------------------------------------------


@dataclass
class DrawNotes:
    """What a draw assumed: the shape-texture denominators that were not pinned.

    They are kept as {model: (assumed S + T, reduced denominator)}.
    """

    assumed_denominators: dict[str, tuple[int, int]] = field(default_factory=dict)


def _values(table: ModelTable, column: str, models: Sequence[str]) -> np.ndarray:
    out = np.full(len(models), np.nan)
    for i, m in enumerate(models):
        v = table.values.get(m, {}).get(column)
        if v is not None and np.isfinite(v):
            out[i] = float(v)
    return out


def _binomial_counts(rng: np.random.Generator, n: int, p: np.ndarray, resamples: int) -> np.ndarray:
    ok = np.isfinite(p)
    k = np.full((resamples, p.size), np.nan)
    k[:, ok] = rng.binomial(n, np.clip(p[ok], 0.0, 1.0), size=(resamples, int(ok.sum())))
    return k


def _subset_counts(
    rng: np.random.Generator, total: int, p: np.ndarray, items: int, resamples: int, random: bool
) -> np.ndarray:
    """Counts of ``items`` drawn from ``total`` of which a fraction ``p`` count (hypergeometric).

    For random stimuli, a new binomial sample of ``items``.
    """
    if random:
        return _binomial_counts(rng, items, p, resamples)
    ok = np.isfinite(p)
    good = np.rint(np.clip(p[ok], 0.0, 1.0) * total).astype(np.int64)
    k = np.full((resamples, p.size), np.nan)
    k[:, ok] = rng.hypergeometric(good, total - good, items, size=(resamples, int(ok.sum())))
    return k


def shape_texture_denominators(
    x: np.ndarray, trials: int
) -> tuple[np.ndarray, dict[int, tuple[int, int]]]:
    """S + T per model from the exact ratios ``x``, and the rows whose S + T is assumed.

    See the module docstring. The assumed rows are {row: (assumed, reduced denominator)}.
    """
    dens = np.zeros(x.size, dtype=np.int64)
    for i, v in enumerate(x):
        if np.isfinite(v):
            dens[i] = Fraction(float(v)).limit_denominator(trials).denominator
    pinned = dens * 2 > trials
    median = float(np.median(dens[pinned])) if pinned.any() else trials / 2
    out, assumed = dens.copy(), {}
    for i, d in enumerate(dens):
        if d and d * 2 <= trials:
            multiples = np.arange(d, trials + 1, d)
            out[i] = int(multiples[np.argmin(np.abs(multiples - median))])
            assumed[i] = (int(out[i]), int(d))
    return out, assumed


def _rng(seed: int, key: str) -> np.random.Generator:
    """One generator per (seed, family or clean run).

    A column's draws do not depend on which other columns were drawn, or in which order.
    """
    return np.random.default_rng([seed, zlib.crc32(key.encode())])


class Draws(Mapping[str, np.ndarray]):
    """``{column: (resamples, len(models)) values}`` of every redrawn column.

    Each family is drawn when one of its columns is first read (``draw``).
    """

    def __init__(
        self,
        model: CountModel,
        table: ModelTable,
        models: Sequence[str],
        resamples: int,
        seed: int,
        subset: Mapping[str, int] | None,
    ):
        self.model, self.table, self.models, self.resamples, self.seed = (
            model,
            table,
            tuple(models),
            resamples,
            seed,
        )
        self.subset = None if subset is None else dict(subset)
        self.notes = DrawNotes()
        self._families = {}
        for fam in model.families:
            if not fam.redrawn or (self.subset is not None and fam.id not in self.subset):
                continue
            items = None if self.subset is None else int(self.subset[fam.id])
            if items is not None and fam.kind == "grid":
                raise ConfigError(
                    f"{model.origin}: family {fam.id!r}: a grid family has no subset draw (its "
                    "cells have their own n)"
                )
            if items is not None and not 1 <= items <= fam.n:
                raise ConfigError(
                    f"{model.origin}: family {fam.id!r}: subset of {items} items, expected "
                    f"1..{fam.n}"
                )
            for c in fam.columns:
                self._families[c] = fam
            if fam.kind == "shape_texture":  # what is assumed is known before drawing
                for c in fam.columns:
                    _, assumed = shape_texture_denominators(_values(table, c, self.models), fam.n)
                    self.notes.assumed_denominators.update(
                        {self.models[i]: v for i, v in assumed.items()}
                    )
        self._drawn: dict[str, np.ndarray] = {}
        self._clean: dict[tuple[str, str], np.ndarray] = {}
        self._grids: dict = {}  # the redrawn counts of each grid, shared by its families

    def __iter__(self):
        return iter(self._families)

    def __len__(self) -> int:
        return len(self._families)

    def __getitem__(self, column: str) -> np.ndarray:
        if column not in self._drawn:
            fam = self._families[column]  # KeyError: not a redrawn column
            self._drawn.update(self._draw(fam))
        return self._drawn[column]

    def _draw(self, fam: Family) -> dict[str, np.ndarray]:
        items = None if self.subset is None else int(self.subset[fam.id])
        rng, models, b = _rng(self.seed, fam.id), self.models, self.resamples
        out = {}
        if fam.kind == "grid":
            return derive_grid(
                ref=fam.derive,
                columns=fam.columns,
                counts=fam.counts,
                table=self.table,
                models=models,
                resamples=b,
                seed=self.seed,
                origin=self.model.origin,
                family=fam.id,
                drawn=self._grids,
            )
        if fam.kind == "binomial":
            for c in fam.columns:
                out[c] = _draw_binomial(fam, _values(self.table, c, models), b, rng, items)
        elif fam.kind == "shape_texture":
            for c in fam.columns:
                x = _values(self.table, c, models)
                out[c] = _draw_shape_texture(
                    fam, x, shape_texture_denominators(x, fam.n)[0], b, rng, items
                )
        else:
            clean = _values(self.table, fam.clean, models) / fam.clean_scale
            key = (fam.measurement or fam.id, fam.clean)  # one clean run per measurement
            if key not in self._clean:
                crng = _rng(self.seed, "clean:" + ":".join(key))
                self._clean[key] = (
                    _binomial_counts(crng, fam.n, clean, b)
                    if items is None
                    else _subset_counts(crng, fam.n, clean, items, b, fam.random)
                )
            for c in fam.columns:
                out[c] = _draw_ratio(
                    fam, _values(self.table, c, models), clean, self._clean[key], b, rng, items
                )
        return out


def draw(
    model: CountModel,
    table: ModelTable,
    models: Sequence[str],
    resamples: int,
    seed: int,
    *,
    subset: Mapping[str, int] | None = None,
) -> Draws:
    """The redrawn values of every column of a redrawn family (``Draws``: drawn when first read).

    Values are NaN where the table has no value. The draw is a replication (``subset`` None) or a
    subset run of ``subset[family]`` items of each family named there (see the module docstring).
    """
    return Draws(model, table, models, resamples, seed, subset)


def _draw_binomial(
    fam: Family, x: np.ndarray, resamples: int, rng: np.random.Generator, items: int | None
) -> np.ndarray:
    n, den, off, scale = fam.n, fam.denominator or fam.n, fam.offset, fam.scale
    to_rate = lambda v: np.clip((v / scale * den - off) / n, 0.0, 1.0)  # noqa: E731
    if items is None:
        return scale * (_binomial_counts(rng, n, to_rate(x), resamples) + off) / den
    if (
        items == n and not fam.random
    ):  # every item: the value itself (a mean of conditions is no whole count)
        return np.tile(x, (resamples, 1))
    k = _subset_counts(rng, n, to_rate(x), items, resamples, fam.random)
    return scale * (k / items * n + off) / den


def _draw_shape_texture(
    fam: Family,
    x: np.ndarray,
    dens: np.ndarray,
    resamples: int,
    rng: np.random.Generator,
    items: int | None,
) -> np.ndarray:
    trials = fam.n
    out = np.full((resamples, x.size), np.nan)
    for i in range(x.size):
        if not np.isfinite(x[i]) or dens[i] == 0:
            continue
        d = int(dens[i])
        s = float(np.clip(x[i], 0.0, 1.0)) * d
        if items is None:
            counts = rng.multinomial(
                trials, [s / trials, (d - s) / trials, (trials - d) / trials], size=resamples
            )
        else:
            s_int = int(round(s))
            counts = rng.multivariate_hypergeometric(
                [s_int, d - s_int, trials - d], items, size=resamples
            )
        shape, texture = counts[:, 0], counts[:, 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, i] = np.where(
                shape + texture > 0, shape / np.maximum(shape + texture, 1), np.nan
            )
    return out


def _draw_ratio(
    fam: Family,
    x: np.ndarray,
    clean: np.ndarray,
    k_clean: np.ndarray,
    resamples: int,
    rng: np.random.Generator,
    items: int | None,
) -> np.ndarray:
    n = fam.n
    filtered = np.clip(x * clean, 0.0, 1.0)
    if items is None:
        k = _binomial_counts(rng, n, filtered, resamples)
    elif items == n and not fam.random:
        return np.tile(x, (resamples, 1))
    else:
        k = _subset_counts(rng, n, filtered, items, resamples, fam.random)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(k_clean > 0, k / np.where(k_clean > 0, k_clean, 1), np.nan)


def noise_sd(
    fam: Family, table: ModelTable, models: Sequence[str], column: str, items: int | None = None
) -> np.ndarray:
    """The standard deviation of one column's value per model, in the column's units.

    It is as ``draw`` draws it: a new sample of the family's ``n`` items (``items`` None), or a run
    on ``items`` of them (a subset: the finite-population correction for fixed stimuli, a new sample
    of ``items`` for random ones). Normal approximations of the draws (delta method for ratios); NaN
    where the table has no value or the family is a grid (its values derive from many cells: no
    closed form); 0 for a held family (nothing is drawn) and for the full set of fixed stimuli.
    """
    x = _values(table, column, models)
    if not fam.redrawn:
        return np.where(np.isfinite(x), 0.0, np.nan)
    if (
        fam.kind == "grid"
    ):  # a value derived from a grid of counts (a threshold, a fit): no closed form
        return np.full(x.shape, np.nan)
    n = fam.n
    m = n if items is None else items
    fpc = 1.0 if items is None or fam.random else (n - m) / max(n - 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if fam.kind == "binomial":
            den, scale = fam.denominator or n, fam.scale
            p = np.clip((x / scale * den - fam.offset) / n, 0.0, 1.0)
            return scale * n / den * np.sqrt(p * (1 - p) / m * fpc)
        if fam.kind == "shape_texture":
            dens, _ = shape_texture_denominators(x, n)
            decided = np.where(dens > 0, dens * m / n, np.nan)  # S + T among the items
            return np.sqrt(x * (1 - x) / decided * fpc)
        clean = _values(table, fam.clean, models) / fam.clean_scale
        filtered = np.clip(x * clean, 0.0, 1.0)
        return np.sqrt(
            (filtered * (1 - filtered) + x * x * clean * (1 - clean)) / (m * clean * clean) * fpc
        )

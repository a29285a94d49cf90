"""The models measured here (the study's session ``real``: ``nox -s real``), read back from the
measurement store for the report section ``models_here``: each (model x measurement) as a
usable record or the reason it is not (never a fallback value), the shape bias of the study's
48 models and of the model-vs-human references (ResNet-50, 10 human subjects), and ranks.

Shape bias is measured here by the study's own protocol (the same 1,280 cue-conflict images,
the same 16-class decision: mean softmax per category, S / (S + T) without the 80 images whose
shape and texture agree), so a rank among the study's published values is comparable. The
critical band and spectral values are measured on the 16-class GraySplit protocol of
Subramanian et al. 2023, not the study's 1000-class ImageNet-val protocol: they are not ranked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro.base.stats import binomial_interval

SESSION = "real"
SHAPE, PREMADE, SYNTH, SPECTRAL = "shape_bias", "critical_band_16_premade", "critical_band_16", "spectral_16"
SHAPE_COLUMN = "shape-bias"
REFERENCE_DIR = "model-vs-human/cue-conflict/"
OK = "ok"


@dataclass
class Stored:
    """One (model x measurement) of the store: ``status`` is ``ok`` or why its values are not shown."""

    model: str
    measurement: str
    status: str
    record: Any = None  # repro.store.record.JobRecord when status == ok
    items: list[dict[str, str]] | None = None  # per-item rows, read on demand

    @property
    def ok(self) -> bool:
        return self.status == OK


@dataclass(frozen=True)
class ShapeCount:
    label: str
    shape: int
    texture: int

    @property
    def n(self) -> int:
        return self.shape + self.texture

    @property
    def value(self) -> float:
        return self.shape / self.n

    @property
    def interval(self) -> tuple[float, float]:
        return binomial_interval(self.shape, self.n)


@dataclass(frozen=True)
class Rank:
    """Where a value lands among ``population`` values (1 = the largest)."""

    rank: int
    best: int  # the rank at the upper end of the value's interval
    worst: int  # the rank at the lower end
    percentile: float  # share of the population below the value, ties counted half, in %
    of: int


def rank_among(value: float, population: Sequence[float], interval: tuple[float, float] | None = None) -> Rank:
    def rank_of(v: float) -> int:
        return 1 + sum(1 for p in population if p > v)

    below = sum(1 for p in population if p < value) + 0.5 * sum(1 for p in population if p == value)
    lo, hi = interval if interval is not None else (value, value)
    return Rank(rank_of(value), rank_of(hi), rank_of(lo), 100.0 * below / len(population), len(population))


@dataclass
class ModelsHere:
    """What the section shows: the session, the store's entries, the study's and the references'
    shape bias."""

    models: list[str]
    measurements: list[str]
    entries: dict[tuple[str, str], Stored] = field(default_factory=dict)
    population: dict[str, float] = field(default_factory=dict)  # study model -> published shape bias
    categories: dict[str, str] = field(default_factory=dict)  # study model -> its model category
    resnet50: ShapeCount | None = None
    humans: list[ShapeCount] = field(default_factory=list)

    def get(self, model: str, measurement: str) -> Stored:
        return self.entries[model, measurement]

    def missing(self) -> list[Stored]:
        return [e for e in self.entries.values() if not e.ok]

    def shape(self, model: str) -> ShapeCount | None:
        e = self.get(model, SHAPE)
        if not e.ok:
            return None
        v = e.record.values
        return ShapeCount(model, int(v["shape"]), int(v["texture"]))

    def humans_pooled(self) -> ShapeCount:
        return ShapeCount("humans (10 subjects, pooled)", sum(h.shape for h in self.humans),
                          sum(h.texture for h in self.humans))

    def rank(self, count: ShapeCount) -> Rank:
        return rank_among(count.value, list(self.population.values()), count.interval)


def stored(store: Any, model: str, measurement: str, version: str | None) -> Stored:
    """The store's record of (model, measurement) when it is current and evidence, else why not."""
    from repro.base.errors import DataError
    from repro.store.validate import evidence_problem

    try:
        rec = store.read(model, measurement)
    except DataError as exc:
        return Stored(model, measurement, f"corrupt record ({exc})")
    if rec is None:
        return Stored(model, measurement, "not measured")
    if not rec.ok:
        err = rec.error or {}
        return Stored(model, measurement, f"failed ({err.get('type', '?')}: {err.get('message', '')})")
    if version is not None and rec.version != version:
        return Stored(model, measurement, f"stale (measured with version {rec.version}, current {version}): re-measure")
    problem = evidence_problem(rec.provenance)
    if problem:
        return Stored(model, measurement, f"not evidence ({problem}): re-measure on the full set")
    return Stored(model, measurement, OK, rec)


def items(store: Any, entry: Stored) -> list[dict[str, str]]:
    """The per-item rows of an ok entry (read once)."""
    if entry.items is None:
        entry.items = store.read_items(entry.record)
    return entry.items


def reference_counts(study: Any, data_dir: str | os.PathLike[str]) -> tuple[ShapeCount, list[ShapeCount]]:
    """Shape bias of the model-vs-human ResNet-50 and of the 10 human subjects, scored from their
    pinned per-trial CSVs (``repro.scoring.shape_bias``; each file sha256-verified)."""
    from repro.published.fetch import require_file
    from repro.scoring.shape_bias import read_decisions_csv, shape_bias

    def count(relpath: str, label: str) -> ShapeCount:
        s = shape_bias(read_decisions_csv(require_file(relpath, data_dir), data_dir=data_dir))
        return ShapeCount(label, int(s.shape), int(s.texture))

    pins = [p.path for p in study.published if p.path.startswith(REFERENCE_DIR)]
    resnet = [p for p in pins if Path(p).name.startswith("cue-conflict_resnet50_")]
    subjects = sorted(p for p in pins if "_subject-" in Path(p).name)
    if len(resnet) != 1 or len(subjects) != 10:
        from repro.base.errors import ConfigError

        raise ConfigError(f"{study.origin}: expected 1 ResNet-50 and 10 human cue-conflict CSVs among the pinned "
                          f"files, found {len(resnet)} and {len(subjects)}")
    humans = [count(p, Path(p).name.split("_")[1]) for p in subjects]
    return count(resnet[0], "ResNet-50 (model-vs-human)"), humans


def gather(ctx: Any) -> ModelsHere | None:
    """The section's data from ``ctx`` (a ReportContext in the study's group); None when the study
    has no session ``real``."""
    from repro.measurements.registry import current_versions
    from repro.published.study_data import study_table
    from repro.store.files import Store

    claims = ctx.claims
    session = claims.study.sessions.get(SESSION)
    if session is None:
        return None
    out = ModelsHere(list(session.models), list(session.measurements))
    versions = current_versions(out.measurements)
    store = Store(ctx.store) if ctx.store is not None else None
    for model in out.models:
        for m in out.measurements:
            out.entries[model, m] = (stored(store, model, m, versions.get(m)) if store is not None
                                     else Stored(model, m, "not measured (no store given to the report)"))
    table = study_table(claims.study, claims.data_dir)
    population = claims.analysis.population
    out.population = {m: float(table.values[m][SHAPE_COLUMN]) for m in population}
    out.categories = {m: cat for cat, ms in claims.model_categories.items() for m in ms if m in out.population}
    out.resnet50, out.humans = reference_counts(claims.study, claims.data_dir)
    return out


def store_of(ctx: Any) -> Any:
    from repro.store.files import Store

    return Store(ctx.store)


def shape_rows(data: ModelsHere) -> list[ShapeCount]:
    """Our models' shape-bias counts (those measured), then the references."""
    ours = [c for c in (data.shape(m) for m in data.models) if c is not None]
    refs = [data.resnet50] if data.resnet50 is not None else []
    return ours + refs + ([data.humans_pooled()] if data.humans else [])


def condition_counts(record: Any) -> dict[str, tuple[int, int]]:
    return {str(c["condition"]): (int(c["k"]), int(c["n"])) for c in record.conditions}


def values(record: Any) -> Mapping[str, float | None]:
    return record.values

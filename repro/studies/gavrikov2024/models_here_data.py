"""The 16-class measurements of the models a report places, for the section ``models_here``.

The models are ``repro.placement.selection``'s (a run's models, else the store's; study models left
out), read back from the measurement store: each (model x measurement of the study's session
``real``) as a usable record or the reason it is not (never a fallback value). Also the shape-bias
references of model-vs-human (ResNet-50, 10 human subjects) for the study's placement references.

The critical band and spectral values are measured on the 16-class GraySplit protocol of
Subramanian et al. 2023, not the study's 1000-class ImageNet-val protocol: they are not ranked
among the study's models (its ``[placement] not_comparable``). Shape bias, measured by the
study's own protocol, is ranked by the report's section "Placement".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError, DataError
from repro.base.stats import binomial_interval
from repro.measurements.registry import current_versions
from repro.placement.selection import models_to_place
from repro.published.fetch import require_file
from repro.scoring.shape_bias import read_decisions_csv, shape_bias
from repro.store.files import Store
from repro.store.validate import evidence_problem

SESSION = "real"
SHAPE, PREMADE, SYNTH, SPECTRAL = (
    "shape_bias",
    "critical_band_16_premade",
    "critical_band_16",
    "spectral_16",
)
SHAPE_COLUMN = "shape-bias"
REFERENCE_DIR = "model-vs-human/cue-conflict/"
OK = "ok"


@dataclass
class Stored:
    """One (model x measurement) of the store.

    ``status`` is ``ok`` or why its values are not shown."""

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


@dataclass
class ModelsHere:
    """What the section shows: the models, the session's measurements and the store's entries."""

    models: list[str]
    measurements: list[str]
    entries: dict[tuple[str, str], Stored] = field(default_factory=dict)

    def get(self, model: str, measurement: str) -> Stored:
        return self.entries[model, measurement]

    def missing(self) -> list[Stored]:
        return [e for e in self.entries.values() if not e.ok]


def stored(store: Any, model: str, measurement: str, version: str | None) -> Stored:
    """The store's record of (model, measurement) when it is current and evidence, else why not."""
    try:
        rec = store.read(model, measurement)
    except DataError as exc:
        return Stored(model, measurement, f"corrupt record ({exc})")
    if rec is None:
        return Stored(model, measurement, "not measured")
    if not rec.ok:
        err = rec.error or {}
        return Stored(
            model, measurement, f"failed ({err.get('type', '?')}: {err.get('message', '')})"
        )
    if version is not None and rec.version != version:
        return Stored(
            model,
            measurement,
            f"stale (measured with version {rec.version}, current {version}): re-measure",
        )
    problem = evidence_problem(rec.provenance)
    if problem:
        return Stored(model, measurement, f"not evidence ({problem}): re-measure on the full set")
    return Stored(model, measurement, OK, rec)


def items(store: Any, entry: Stored) -> list[dict[str, str]]:
    """The per-item rows of an ok entry (read once)."""
    if entry.items is None:
        entry.items = store.read_items(entry.record)
    return entry.items


def reference_counts(
    study: Any, data_dir: str | os.PathLike[str]
) -> tuple[ShapeCount, list[ShapeCount]]:
    """Shape bias of the model-vs-human ResNet-50 and of the 10 human subjects.

    Scored from their pinned per-trial CSVs (``repro.scoring.shape_bias``; each file
    sha256-verified)."""

    def count(relpath: str, label: str) -> ShapeCount:
        s = shape_bias(read_decisions_csv(require_file(relpath, data_dir), data_dir=data_dir))
        return ShapeCount(label, int(s.shape), int(s.texture))

    pins = [p.path for p in study.published if p.path.startswith(REFERENCE_DIR)]
    resnet = [p for p in pins if Path(p).name.startswith("cue-conflict_resnet50_")]
    subjects = sorted(p for p in pins if "_subject-" in Path(p).name)
    if len(resnet) != 1 or len(subjects) != 10:
        raise ConfigError(
            f"{study.origin}: expected 1 ResNet-50 and 10 human cue-conflict CSVs among the pinned "
            f"files, found {len(resnet)} and {len(subjects)}"
        )
    humans = [count(p, Path(p).name.split("_")[1]) for p in subjects]
    return count(resnet[0], "ResNet-50 (model-vs-human)"), humans


def session_models(ctx: Any, session: Any) -> list[str]:
    """The models the report places that have a record of one of ``session``'s measurements.

    In placement order (``repro.placement.selection``); study models left out."""
    if ctx.store is None:
        return []

    store = Store(ctx.store)
    members = set(ctx.claims.population)
    return [
        m
        for m in models_to_place(ctx.plans, ctx.store, {}, with_store=ctx.place_stored)
        if m not in members
        and any(store.record_path(m, meas).is_file() for meas in session.measurements)
    ]


def gather(ctx: Any) -> ModelsHere | None:
    """The section's data from ``ctx`` (a ReportContext in the study's group).

    None when the study has no session ``real`` or the report places no model with a record of its
    measurements."""
    claims = ctx.claims
    session = claims.study.sessions.get(SESSION)
    if session is None:
        return None
    models = session_models(ctx, session)
    if not models:
        return None
    out = ModelsHere(models, list(session.measurements))
    versions = current_versions(out.measurements)
    store = Store(ctx.store)
    for model in out.models:
        for m in out.measurements:
            out.entries[model, m] = stored(store, model, m, versions.get(m))
    return out


def store_of(ctx: Any) -> Any:
    return Store(ctx.store)


def condition_counts(record: Any) -> dict[str, tuple[int, int]]:
    return {str(c["condition"]): (int(c["k"]), int(c["n"])) for c in record.conditions}


def values(record: Any) -> Mapping[str, float | None]:
    return record.values

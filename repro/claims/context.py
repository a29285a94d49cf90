"""Claims: the context every statistic function receives, built FROM a study.

It gives the study (``repro.base.study.Study``), the data directory (for statistics that read
further published files of their study), the study's per-model input table with its per-column
source labels, its model categories, and its analysis (built once from the study's analysis
definition, cached on the context; a study without one has no ``analysis``).

``without_models`` gives the same context with some models left out of the population (the
hook of leave-one-out robustness, ``repro.diagnostics.robustness``).

A context on our measurements carries ``inputs`` (``repro.claims.provenance.RunInputs``: what
the run was to measure and what the store holds), from which each claim's provenance and the
inputs it needs measured follow, and ``agreement`` (``repro.claims.agreement``: each measured
value of a published column against its published value, by (model, column)); a published
context has neither (every value published).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro.analysis.analysis import Analysis
from repro.analysis.spec import AnalysisSpec, Selector, load_spec
from repro.base.errors import ConfigError
from repro.base.settings import data_dir as resolve
from repro.base.study import Study, select
from repro.base.table import ModelTable
from repro.claims.provenance import RunInputs, run_inputs
from repro.measurements.registry import current_versions, names, split_configured
from repro.published.study_data import study_categories, study_table

if TYPE_CHECKING:
    from repro.claims.agreement import Agreement


@dataclass
class ClaimContext:
    study: Study
    data_dir: Path
    table: ModelTable
    model_categories: dict[str, list[str]]
    source: str = "published"  # published | store | measure
    spec: AnalysisSpec | None = None
    cache: dict[str, Any] = field(
        default_factory=dict
    )  # for statistic modules to memoise their work
    intervals: bool = True  # False: statistics may skip their (bootstrap) intervals
    left_out: tuple[str, ...] = ()  # models left out of the population (``without_models``)
    inputs: RunInputs | None = (
        None  # on our measurements: what the run measured (None: published data)
    )
    # on our measurements: per-model agreement of each measured published column, by (model, column)
    agreement: Mapping[tuple[str, str], Agreement] | None = None

    @cached_property
    def analysis(self) -> Analysis:
        if self.spec is None:
            raise ConfigError(
                f"{self.study.origin}: study {self.study.name!r} has no analysis definition "
                "(field `analysis`), which this statistic needs"
            )
        return Analysis(self.spec, self.table, self.model_categories)

    @property
    def population(self) -> list[str]:
        """The models the study's statistics run over.

        The analysis population, or, for a study without an analysis definition, the rows of its
        table."""
        return self.analysis.population if self.spec is not None else self.table.models

    def without_models(self, models: Iterable[str], *, intervals: bool = True) -> ClaimContext:
        """A fresh context (nothing cached) on the same inputs with ``models`` left out.

        With an analysis definition they are excluded from the population and from every group
        (``exclude_models``; the table keeps their rows, so a statistic that names a model
        explicitly still reads it); without one, their rows leave the table. ``intervals=False``: no
        bootstrap intervals (analysis resamples 0, ``intervals`` False), for recomputations whose
        verdict does not read them."""
        drop = tuple(dict.fromkeys(models))
        table, spec = self.table, self.spec
        if spec is not None:

            def exclude(sel: Selector) -> Selector:
                return replace(
                    sel, exclude_models=tuple(dict.fromkeys([*sel.exclude_models, *drop]))
                )

            spec = replace(
                spec,
                population=exclude(spec.population),
                groups={
                    g: replace(grp, selector=exclude(grp.selector))
                    for g, grp in spec.groups.items()
                },
                resamples=spec.resamples if intervals else 0,
            )
        else:
            table = table.without_models(drop)
        return ClaimContext(
            self.study,
            self.data_dir,
            table,
            self.model_categories,
            self.source,
            spec,
            intervals=intervals,
            left_out=(*self.left_out, *drop),
            inputs=self.inputs,
            agreement=self.agreement,
        )

    @property
    def measured(self) -> bool:
        """True when some input column comes from our measurements rather than the paper's file."""
        return any(label != "published" for label in self.table.sources.values())


def _spec(
    study: Study, analysis: str | os.PathLike[str] | AnalysisSpec | None
) -> AnalysisSpec | None:
    if isinstance(analysis, AnalysisSpec):
        return analysis
    if analysis is not None:
        return load_spec(analysis)
    return load_spec(study.analysis) if study.analysis is not None else None


def published_context(
    study: Study,
    data_dir: str | os.PathLike[str] | None = None,
    analysis: str | os.PathLike[str] | AnalysisSpec | None = None,
) -> ClaimContext:
    """Context on the study's published data (its table and categories, sha256-verified).

    ``analysis``: an analysis definition (TOML) instead of the study's own."""
    root = resolve(data_dir)
    table = study_table(study, root)
    cats = study_categories(study, root, known_models=table.models)
    return ClaimContext(study, root, table, cats, "published", _spec(study, analysis))


def measured_context(
    study: Study,
    store_dir: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    analysis: str | os.PathLike[str] | AnalysisSpec | None = None,
    source: str = "store",
) -> ClaimContext:
    """The study's published table with our stored measurements overlaid.

    The measurements of the current measurement versions are overlaid
    (``repro.store.export.wide_table``); each overlaid column is labelled ``source``.

    The run (``inputs``, for each claim's provenance): every zoo model, and the measurements whose
    dataset is configured or that the store holds a record of (``repro.claims.provenance``).
    ``agreement``: each stored value of a published column against the published one
    (``attach_agreement``)."""
    from repro.store.export import job_states, wide_table

    versions = current_versions()
    ctx = published_context(study, data_dir, analysis)
    attach_agreement(ctx, store_dir, versions)
    ctx.table = ctx.table.overlay(wide_table(store_dir, versions=versions), source)
    ctx.source = source
    configured, not_configured = split_configured(names())
    stored = {m for _, m in job_states(store_dir, versions=versions)}
    run = [m for m in names() if m in configured or m in stored]
    ctx.inputs = run_inputs(
        store_dir,
        run,
        None,
        versions=versions,
        not_run={
            m: f"dataset {d} not configured, no record in the store"
            for m, d in not_configured.items()
            if m not in stored
        },
    )
    return ctx


def attach_agreement(
    ctx: ClaimContext, store_dir: str | os.PathLike[str], versions: Mapping[str, str]
) -> None:
    """Set ``ctx.agreement`` from the store's current evidence-grade values.

    They are compared with ``ctx.table``, which must still be the published table: call before
    overlaying."""
    from repro.claims.agreement import study_agreement

    rows = study_agreement(
        ctx.study, store_dir, ctx.table.values, versions=versions, data_dir=ctx.data_dir
    )
    ctx.agreement = {(r.model, r.column): r for r in rows}


def published_contexts(
    studies: Sequence[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    analysis: str | os.PathLike[str] | None = None,
) -> list[ClaimContext]:
    """One published context per study (default: every discovered study, in discovery order).

    ``analysis`` replaces the analysis definition of the studies that have one."""
    return [
        published_context(s, data_dir, analysis if s.analysis is not None else None)
        for s in select(studies)
    ]

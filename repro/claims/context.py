"""Claims: the context every statistic function receives.

It gives the data directory (for statistics that read further published files, e.g. the
ImageNet-X tables), the per-model input table with its per-column source labels, the model
categories, and the analysis (built once, cached on the context).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from repro.analysis.spec import AnalysisSpec, load_spec
from repro.analysis.study import Study
from repro.base.table import ModelTable


@dataclass
class ClaimContext:
    data_dir: Path
    table: ModelTable
    model_categories: dict[str, list[str]]
    source: str = "published"  # published | store | measure
    spec: AnalysisSpec = field(default_factory=load_spec)
    cache: dict[str, Any] = field(default_factory=dict)  # for statistic modules to memoise their work

    @cached_property
    def study(self) -> Study:
        return Study(self.spec, self.table, self.model_categories)

    @property
    def measured(self) -> bool:
        """True when some input column comes from our measurements rather than the paper's file."""
        return any(label != "published" for label in self.table.sources.values())


def published_context(data_dir: str | os.PathLike[str] | None = None,
                      spec: str | os.PathLike[str] | AnalysisSpec | None = None) -> ClaimContext:
    """Context on the published data (benchmark.csv + r50_categories.json, sha256-verified)."""
    from repro.base.settings import data_dir as resolve
    from repro.published.benchmark import load_benchmark
    from repro.published.categories import load_categories

    root = resolve(data_dir)
    table = load_benchmark(root)
    cats = load_categories(root, known_models=table.models)
    s = spec if isinstance(spec, AnalysisSpec) else load_spec(spec)
    return ClaimContext(root, table, cats, "published", s)


def measured_context(store_dir: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None,
                     spec: str | os.PathLike[str] | AnalysisSpec | None = None, source: str = "store") -> ClaimContext:
    """Published table with our stored measurements overlaid (``repro.store.export.wide_table``);
    each overlaid column is labelled ``source``."""
    from repro.store.export import wide_table  # provided by the runner stage

    ctx = published_context(data_dir, spec)
    ctx.table = ctx.table.overlay(wide_table(store_dir), source)
    ctx.source = source
    return ctx

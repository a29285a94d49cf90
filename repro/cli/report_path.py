"""Where ``reproduce`` writes its report when ``--out`` is not given.

The committed REPORT.md (and report_assets/ beside it) is what the plain run writes on a fresh
clone: no dataset configured, the study's shipped part measured (EfficientNet-Lite0 on the
stimuli of the data directory). Only that run writes there by default. Any other run is the
user's own (``--models``, ``--measurements``, ``--study``, ``--analysis``, ``--published-only``,
``[runner] models`` or ``measurements`` in repro.toml, or a configured dataset root) and writes
``<store>/../reports/<label>/REPORT.md``: ``runs/reports/my_lite1/REPORT.md`` with the default
store ``runs/store``, ignored by git. A mini run writes ``<work-dir>/REPORT.md``. An explicit
``--out`` (``--out REPORT.md`` too) always wins.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

COMMITTED = "REPORT.md"
MAX_LABEL = 60


def own_run_reasons(args: argparse.Namespace) -> list[str]:
    """Why this run is not the one that writes the committed REPORT.md (empty: it is)."""
    from repro.base.settings import current

    runner = current().runner
    reasons = [
        f"--{flag.replace('_', '-')}"
        for flag in ("models", "measurements", "study", "analysis", "published_only")
        if getattr(args, flag, None)
    ]
    if runner.models:
        reasons.append("[runner] models")
    if runner.measurements:
        reasons.append("[runner] measurements")
    if not args.published_only and _configured_datasets(args):
        reasons.append("a configured dataset")
    return reasons


def _configured_datasets(args: argparse.Namespace) -> list[str]:
    """The datasets of the selected studies' measurements that have a root.

    A root from the environment or repro.toml; the data directory's own stimuli do not count: they
    are the shipped run's."""
    from repro.base.study import select
    from repro.cli.common import split_names
    from repro.measurements.registry import configured_roots, get
    from repro.runner.selection import configured_measurements

    studies = [s for s in select(split_names(args.study)) if s.measurements]
    if not studies:
        return []
    names = configured_measurements(split_names(args.measurements) or None, studies)
    return list(configured_roots([get(m).dataset for m in names]))


def run_label(args: argparse.Namespace) -> str:
    """The run folder's name: the models (``my_lite1``, ``a+b``), else a label of the run.

    Without models ``published-only`` or ``study-models``; characters outside ``[A-Za-z0-9._+-]``
    become ``_``."""
    from repro.cli.common import split_names

    models = split_names(args.models) if args.models else []
    if models:
        label = "+".join(m.rsplit("/", 1)[-1] for m in models)
        if len(label) > MAX_LABEL:
            label = f"{len(models)}-models"
    else:
        label = "published-only" if args.published_only else "study-models"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", label)


def report_path(args: argparse.Namespace) -> tuple[str, list[str]]:
    """The report file, and why it is not the committed REPORT.md.

    The reasons are empty when it is, or when ``--out`` named it."""
    if args.out:
        return args.out, []
    if args.mini:
        return str(Path(args.work_dir) / COMMITTED), ["--mini"]
    reasons = own_run_reasons(args)
    if not reasons:
        return COMMITTED, []
    from repro.base.settings import store_dir

    return str(store_dir(args.store).parent / "reports" / run_label(args) / COMMITTED), reasons

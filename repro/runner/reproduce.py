"""Runner, ``reproduce``: for each study, measure what is configured, then recompute its claims.

Run by ``python -m repro reproduce`` and ``nox -s reproduce``. The measuring is
``repro.runner.pipeline``; the claims are recomputed from our measurements (each quantity falling
back to the published value where it was not measured). The caller writes the report from the result
(the runner and the report are independent).

A study that needs no measurement (no ``measurements`` in its study.toml), a run with
``measure=False``, or a study with nothing to measure (no dataset configured and no shipped
part: ``repro.runner.pipeline.plan``) uses the published data alone. With no dataset configured
the run measures what ships (a study session's ``reproduce`` part, e.g. EfficientNet-Lite0 on
the cue-conflict and CBMSplit stimuli of the data directory); the generated mini pipeline runs
only when asked (``mini=True``: ``reproduce --mini``, ``nox -s smoke``). Model names are checked
before anything runs (an unknown name is a one-line error with the closest zoo names).

Exit status (``Reproduction.exit_status``): 1 when a job of the run failed or left no current
record (``failed_jobs`` names each), in a mini run too: mini data and tiny random models are
generated here, so a failed mini job is a failure of the pipeline itself, which the mini run
exists to show. Otherwise a mini run is 0 whatever the verdicts (its numbers are not
evidence: reported, never gated), and a real run is 0 only when every claim's verdict is the
one its claim file records (an ``undefined`` or ``incomplete`` claim never is).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from repro.base.settings import data_dir as resolve_data_dir
from repro.base.study import Study
from repro.claims import evaluate_all
from repro.runner import pipeline
from repro.runner.selection import STUDY_KEYWORDS
from repro.zoo import get_spec


@dataclass
class Reproduction:
    contexts: list[Any]  # one repro.claims.context.ClaimContext per study
    outcomes: list[list[Any]]  # the claim outcomes of each context
    plans: list[Any]  # the measuring plans (repro.runner.pipeline.MeasurePlan)
    failed_jobs: list[str] = field(
        default_factory=list
    )  # "<model> x <measurement>: failed: <error>", ...

    @property
    def exit_status(self) -> int:
        if self.failed_jobs:
            return 1  # a job of the run failed: in a mini run too (see the module docstring)
        if any(p.mini for p in self.plans):
            return 0  # mini runs are reported, never gated
        from repro.diagnostics.strength import as_recorded

        recorded = (
            as_recorded(o, ctx)
            for ctx, os_ in zip(self.contexts, self.outcomes, strict=True)
            for o in os_
        )
        return 0 if all(recorded) else 1


def check_models(models: Sequence[str] | None) -> None:
    """Check that every named model is a zoo model (or alias, or a ``file://`` checkpoint).

    An unknown name is an UnknownNameError with the closest names, before any data is made or job
    run.
    """
    if not models:
        return

    for name in models:
        if name not in STUDY_KEYWORDS and not name.startswith("file:"):
            get_spec(name)


def reproduce(
    studies: Sequence[Study],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    analysis: str | None = None,
    measure: bool = True,
    models: Sequence[str] | None = None,
    measurements: Sequence[str] | None = None,
    store: str | None = None,
    device: str | None = None,
    mini: bool | None = None,
    work_dir: str = "runs/mini",
    batch_size: int | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    log: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
) -> Reproduction:
    """Measure (unless ``measure=False``) and evaluate the claims of every study.

    ``log`` gets the plan and the sweep summary, ``warn`` each failed, corrupt or re-measured job
    (with the reason).
    """
    from repro.claims.context import published_context

    check_models(models)
    root = resolve_data_dir(data_dir)  # resolved once, passed down
    t0 = time.perf_counter()
    contexts, plans, failed = [], [], []
    for study in studies:
        own_analysis = analysis if study.analysis is not None else None
        if not (measure and study.measurements):
            contexts.append(published_context(study, root, own_analysis))
            continue
        plan = pipeline.plan(
            study,
            models=models,
            measurements=measurements,
            store=store,
            device=device,
            mini=mini,
            work_dir=work_dir,
            data_dir=root,
        )
        if plan is None:
            log(
                f"study: {study.name}\nmode: published data only (no dataset configured, and "
                "nothing that "
                "ships to measure for it)"
            )
            contexts.append(published_context(study, root, own_analysis))
            continue
        log(plan.describe())
        summary = pipeline.measure(
            plan, batch_size=batch_size, progress=progress, retry_failed=retry_failed, log=warn
        )
        log(f"{summary.line()} ({time.perf_counter() - t0:.0f} s)")
        failed += pipeline.job_problems(plan)
        contexts.append(pipeline.claims_context(plan, root, own_analysis))
        plans.append(plan)
    return Reproduction(contexts, [evaluate_all(ctx) for ctx in contexts], plans, failed)

"""Runner, the reproduce pipeline's measuring half, for one study.

Decide what can be measured (configured datasets, configured models), else what ships (a study
session's ``reproduce`` part on the stimuli of the data directory), or, when asked (``mini=True``),
generated mini data with tiny random models; then run the missing jobs and hand the measured table
to the claims.

Real mode: every measurement of the study whose dataset has a root (``REPRO_<NAME>_ROOT`` or
``[datasets]`` in repro.toml) is measured for the configured models (``--models`` >
``[runner] models`` > the study's models, read from the data directory passed in), into the
configured store. Shipped mode (no dataset configured): the ``reproduce`` part of a session of
the study (``[sessions.<name>] reproduce = { models, measurements }``; for Gavrikov & Keuper
EfficientNet-Lite0's shape bias and pre-made critical band), on the stimuli that lie in the data
directory, with the session's device and batch size, into the configured store (``runs/store``
by default: in a fresh checkout an empty one, so the first run measures); ``models`` and
``measurements`` narrow or replace the part's. A study with no such part, or whose part's
stimuli are not in the data directory, is not measured (``plan`` returns None: its claims use
the published data). Mini mode (``mini=True`` only, e.g. ``nox -s smoke``): ``make_mini`` data
under ``<work_dir>/data``, the zoo's tiny random models, CPU, a separate store under
``<work_dir>/store``. Mini numbers are NOT evidence: they only prove that the pipeline runs; in
the claims each tiny model stands in for one study model (``[mini] stand_ins`` of the study's
study.toml), so the measured-table path is exercised end to end.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repro.base.device import resolve_device
from repro.base.settings import store_dir
from repro.base.study import Study
from repro.claims.provenance import run_inputs
from repro.datasets import make_mini
from repro.measurements.registry import configured_roots, current_versions, get, split_configured
from repro.runner.jobs import Environment, SweepSummary, jobs_for, run_sweep
from repro.runner.selection import canonical_names, configured_measurements, configured_models
from repro.store.export import JOB_OK, job_states, wide_table
from repro.store.files import Store

MINI_MODELS = ("tiny_random_a", "tiny_random_b", "tiny_random_c")  # the zoo's tiny random models
MINI_PER_CLASS = 1


@dataclass
class MeasurePlan:
    study: Study
    mini: bool
    models: list[str]
    measurements: list[str]
    store: Path
    device: str
    dataset_roots: dict[str, str]
    not_configured: dict[str, str] = field(
        default_factory=dict
    )  # measurement -> dataset without a root
    stand_ins: dict[str, str] = field(default_factory=dict)
    shipped: str | None = None  # shipped mode: the session whose `reproduce` part this is
    batch_size: int | None = None  # the session's (shipped mode); None: the caller's
    data_dir: Path | None = None  # shipped mode: the data directory its stimuli are read from

    def describe(self) -> str:
        head = (
            "MINI (generated data, tiny random models; NOT evidence)"
            if self.mini
            else f"shipped data (no dataset configured: session `{self.shipped}`'s reproduce part, "
            "on the stimuli of the data directory)"
            if self.shipped
            else "configured data"
        )
        lines = [
            f"study: {self.study.name}",
            f"mode: {head}",
            f"models ({len(self.models)}): {', '.join(self.models)}",
            f"measurements ({len(self.measurements)}): {', '.join(self.measurements) or '-'}",
            f"store: {self.store}",
            f"device: {self.device}",
        ]
        if self.not_configured:
            lines.append(
                "not measured (dataset not configured): "
                + ", ".join(f"{m} ({d})" for m, d in self.not_configured.items())
            )
        return "\n".join(lines)


def prepare_mini(
    work_dir: str | os.PathLike[str], *, per_class: int = MINI_PER_CLASS
) -> dict[str, str]:
    """Generate the mini datasets under ``<work_dir>/data`` and point the dataset roots at them.

    The datasets are generated once (reused when already there); every dataset root is set in the
    environment, for this process and its children.
    """
    data = Path(work_dir) / "data"
    manifest = data / "mini-manifest.json"
    roots: dict[str, str] = {}
    if manifest.is_file():
        info = json.loads(manifest.read_text())
        if info.get("per_class") == per_class:
            roots = {
                n: str((data / d["root"]).resolve()) for n, d in info.get("datasets", {}).items()
            }
    if not roots or not all(Path(r).is_dir() for r in roots.values()):
        # resume: complete datasets of an interrupted build are kept, the rest is (re)built
        roots = {
            n: str(p.resolve())
            for n, p in make_mini(data, per_class=per_class, resume=True).items()
        }
    for name, root in roots.items():
        os.environ[f"REPRO_{name.upper()}_ROOT"] = root
    return roots


def shipped_part(study: Study) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """The study's first session with a ``reproduce`` part.

    As (session name, models, measurements); None when there is none.
    """
    for name, session in study.sessions.items():
        if session.reproduce is not None:
            return (name, *session.reproduce)
    return None


def _shipped_plan(
    study: Study,
    models: Sequence[str] | None,
    measurements: Sequence[str] | None,
    store: str | os.PathLike[str] | None,
    device: str | None,
    data_dir: str | os.PathLike[str] | None,
) -> MeasurePlan | None:
    part = shipped_part(study)
    if part is None:
        return None
    name, part_models, part_measurements = part
    session = study.sessions[name]
    wanted = configured_measurements(
        list(measurements) if measurements else list(part_measurements)
    )
    runnable, missing = split_configured(wanted, get, data_dir)
    if not runnable:
        return None
    chosen = canonical_names(list(models) if models else list(part_models))
    roots = configured_roots([get(m).dataset for m in runnable], data_dir)
    return MeasurePlan(
        study,
        False,
        chosen,
        runnable,
        store_dir(store),
        resolve_device(device or session.device),
        roots,
        missing,
        shipped=name,
        batch_size=session.batch_size,
        data_dir=None if data_dir is None else Path(data_dir),
    )


def plan(
    study: Study,
    *,
    models: Sequence[str] | None = None,
    measurements: Sequence[str] | None = None,
    store: str | os.PathLike[str] | None = None,
    device: str | None = None,
    mini: bool | None = None,
    work_dir: str | os.PathLike[str] = "runs/mini",
    data_dir: str | os.PathLike[str] | None = None,
) -> MeasurePlan | None:
    """What ``reproduce`` will measure for ``study`` (see the module docstring).

    None when nothing (no dataset configured and nothing shipped to measure). ``mini=None``: real
    when a dataset root is configured, else shipped; ``mini=True``: mini. ``data_dir``: where the
    study's model list and the shipped stimuli are read from (never re-resolved from the defaults
    here).
    """
    wanted = configured_measurements(measurements, [study])
    runnable, missing = split_configured(wanted)
    if mini is None and not runnable:
        return _shipped_plan(study, models, measurements, store, device, data_dir)
    if mini:
        roots = prepare_mini(work_dir)
        chosen = canonical_names(models) if models else list(MINI_MODELS)
        return MeasurePlan(
            study,
            True,
            chosen,
            wanted,
            Path(store) if store else Path(work_dir) / "store",
            resolve_device(device or "cpu"),
            roots,
            {},
            {m: s for m, s in study.stand_ins.items() if m in chosen},
        )
    chosen = configured_models(models, [study], data_dir) or configured_models(
        ["all"], [study], data_dir
    )
    roots = configured_roots([get_dataset(m) for m in runnable])
    return MeasurePlan(
        study, False, chosen, runnable, store_dir(store), resolve_device(device), roots, missing
    )


def get_dataset(measurement: str) -> str:
    return get(measurement).dataset


DEFAULT_BATCH_SIZE = 128


def measure(
    p: MeasurePlan,
    *,
    batch_size: int | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    env: Environment | None = None,
    log: Callable[[str], None] | None = None,
) -> SweepSummary:
    """Run the plan's missing jobs (finished ones are skipped).

    ``log`` hears of failed, corrupt and re-measured jobs. ``batch_size``: None = the plan's (a
    session's), else 128.
    """
    size = batch_size if batch_size is not None else (p.batch_size or DEFAULT_BATCH_SIZE)
    if env is None and p.shipped:  # the shipped stimuli are read from the data directory
        env = Environment(data_dir=p.data_dir)
    return run_sweep(
        jobs_for(p.models, p.measurements),
        _store(p),
        device=p.device,
        batch_size=size,
        retry_failed=retry_failed,
        env=env,
        progress=progress,
        log=log,
    )


def _store(p: MeasurePlan):
    return Store(p.store)


def measured_table(p: MeasurePlan) -> dict[str, dict[str, float]]:
    """Our current measurements in the study table's layout.

    In mini mode keyed by the stand-in study model of each tiny model (so the claims are computed
    over the study's population).
    """
    wide = wide_table(p.store, versions=current_versions(p.measurements), allow_mini=p.mini)
    if not p.mini:  # the plan's models only: what else the store holds is not this run's
        return {m: row for m, row in wide.items() if m in set(p.models)}
    return {p.stand_ins[m]: row for m, row in wide.items() if m in p.stand_ins}


def claims_context(p: MeasurePlan, data_dir: str | os.PathLike[str] | None = None, analysis=None):
    """The study's claim context: its published table with our measurements overlaid.

    Our values are labelled ``mini`` (not evidence) or ``measured``; every other value stays
    ``published``. Its ``inputs`` say what the plan measured (its models x measurements), so a claim
    that reads a value the plan was to measure and did not get is ``incomplete``, never judged on
    the published value (``repro.claims.provenance``). A real run also compares each measured value
    with its published one (``agreement``, ``repro.claims.agreement``).
    """
    from repro.claims.context import published_context

    ctx = published_context(p.study, data_dir, analysis)
    ours = [] if p.mini else study_models(p, ctx)
    if not p.mini and not ours:
        # no study model measured (EfficientNet-Lite0 on the shipped stimuli, your own model): the
        # claims rest on the published data (a re-analysis); the run's models are placed instead
        return ctx
    if (
        not p.mini
    ):  # per-model agreement with the published values (a mini run is no evidence: none)
        from repro.claims.context import attach_agreement

        attach_agreement(ctx, p.store, current_versions(p.measurements))
    measured = measured_table(p)
    if not p.mini:  # a model the claims do not read never enters their table
        measured = {m: row for m, row in measured.items() if m in set(ours)}
    ctx.table = ctx.table.overlay(measured, "mini" if p.mini else "measured")
    ctx.source = "measure"
    ctx.inputs = run_inputs(
        p.store,
        p.measurements,
        p.models if p.mini else ours,
        mini=p.mini,
        stand_ins=p.stand_ins,
        versions=current_versions(p.measurements),
        not_run={m: f"dataset {d} not configured" for m, d in p.not_configured.items()},
    )
    return ctx


def study_models(p: MeasurePlan, ctx) -> list[str]:
    """The plan's models that the study's claims read.

    Those of its population or of its published table. The others (EfficientNet-Lite0, your own
    model) are placed among the study's models, never overlaid on its table: measuring them leaves
    every claim as the published data judges it.
    """
    members = set(ctx.population) | set(ctx.table.models)
    return [m for m in p.models if m in members]


def job_problems(p: MeasurePlan) -> list[str]:
    """The plan's jobs that did not leave a current record, one line each.

    ``<model> x <measurement>: failed: <error> (record: <store path>)`` (or stale, corrupt, not
    evidence, missing), in plan order, so that the user finds the stored error. Empty when every job
    of the plan is in the store.
    """
    store = Store(p.store)
    states = job_states(p.store, versions=current_versions(p.measurements), allow_mini=p.mini)
    out = []
    for model in canonical_names(p.models):
        for measurement in p.measurements:
            st = states.get((model, measurement))
            if st is None:
                out.append(f"{model} x {measurement}: missing (no record in {p.store})")
            elif st.status != JOB_OK:
                out.append(
                    f"{model} x {measurement}: {st.status}: {st.note} "
                    f"(record: {store.record_path(model, measurement)})"
                )
    return out

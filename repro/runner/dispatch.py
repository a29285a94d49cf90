"""Runner, ``python -m repro measure``: from a request to finished jobs in the store.

A request names models, measurements, store, device and executor; its jobs run in this process, in
one worker process per GPU, or as one cluster job per (model x measurement) through submitit.

The device is chosen by ``repro.base.device.resolve_device``; the models by
``repro.runner.selection`` (canonical names; ``all`` = the selected studies' models, read from
the data directory passed in); by default only the measurements whose dataset has a configured
root are run (``repro.measurements.registry.split_configured``). A named session of a study
(``--session NAME``: ``[sessions.NAME]`` of its study.toml) supplies the models, measurements,
device and batch size that are not given; every dataset it reads must then be found, else a
ConfigError names the missing ones before anything runs.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from repro.base.device import resolve_device
from repro.base.errors import ConfigError, DataError
from repro.base.registry import resolve_lazy
from repro.base.settings import current, store_dir
from repro.base.settings import data_dir as resolve_data_dir
from repro.base.study import Study
from repro.datasets.subset import Subset
from repro.measurements.registry import configured_roots, get, split_configured, with_pgd_rule
from repro.runner.data_major import run_sweep as run_sweep_ordered
from repro.runner.jobs import Environment, jobs_for, to_submit
from repro.runner.local import run_workers, visible_gpus
from repro.runner.selection import configured_measurements, configured_models
from repro.runner.slurm import cluster_resources, submit
from repro.runner.slurm_resources import requested
from repro.runner.timing import time_table
from repro.store.files import Store
from repro.zoo import get_spec

MAX_WORKERS = 256  # local worker processes of one sweep


@dataclass
class MeasureRequest:
    models: list[str]  # as given (aliases and `all` allowed); empty: [runner] models
    measurements: list[
        str
    ]  # as given; empty: [runner] measurements, else the studies', if configured
    studies: Sequence[Study] = ()
    data_dir: str | os.PathLike[str] | None = None
    store: str | os.PathLike[str] | None = None
    device: str | None = None
    batch_size: int | None = None  # None: the session's, else DEFAULT_BATCH_SIZE
    retry_failed: bool = False
    progress: bool = True
    env: str | None = None  # "module:factory" of a custom runner Environment
    executor: str = "local"  # local | slurm | submitit-local
    workers: int | None = None
    worker: str | None = None  # "I/N", set by --workers for its children
    # the --slurm-* flags given (partition, cpus_per_task, mem_gb, gpus, timeout_min; None: not
    # given)
    slurm: dict[str, Any] = field(default_factory=dict)
    session: str | None = None  # a named session of the selected studies ([sessions.<name>])
    subset: int | None = (
        None  # a declared subset of this many images per dataset (repro.datasets.subset)
    )
    subset_seed: int = 0
    order: str = "data-major"  # data-major | model-major (repro.runner.data_major)
    # PGD's rule (repro.benchmarks.pgd.RULES): "early_stop" runs the variant in pgd_low's place
    pgd_rule: str = "final_point"


DEFAULT_BATCH_SIZE = 128


def find_session(studies: Sequence[Study], name: str):
    """The session ``name`` of ``studies`` (exactly one study must define it)."""
    found = [s.sessions[name] for s in studies if name in s.sessions]
    if len(found) == 1:
        return found[0]
    known = sorted({n for s in studies for n in s.sessions})
    if not found:
        raise ConfigError(
            f"--session {name!r}: no selected study defines it (known sessions: "
            f"{', '.join(known) or 'none'})"
        )
    owners = [s.name for s in studies if name in s.sessions]
    raise ConfigError(
        f"--session {name!r}: defined by several studies ({', '.join(owners)}); pick one with "
        "--study"
    )


def apply_session(req: MeasureRequest, data: Path) -> MeasureRequest:
    """``req`` with the session's models, measurements, device and batch size where not given.

    A ConfigError when a dataset the session reads is not found (configured or in ``data``).
    """
    if req.session is None:
        return req
    if not req.session.strip():
        raise ConfigError(
            "--session: no name given; expected the name of a [sessions.NAME] table of a "
            "selected study.toml, or leave the option out"
        )

    sess = find_session(req.studies, req.session)
    out = replace(
        req,
        models=req.models or list(sess.models),
        measurements=configured_measurements(req.measurements or list(sess.measurements)),
        device=req.device or sess.device,
        batch_size=req.batch_size if req.batch_size is not None else sess.batch_size,
    )
    _, missing = split_configured(out.measurements, get, data)
    if missing:
        raise ConfigError(
            f"session {sess.name}: dataset(s) not found: "
            + ", ".join(f"{d} (for {m})" for m, d in missing.items())
            + f"; put them in the data directory {data} (SOURCES.md) or set REPRO_<NAME>_ROOT"
        )
    return out


def load_environment(ref: str | None, data_dir: Path | None = None):
    """The runner ``Environment``: the default one, or a factory named ``module:function``.

    The default: zoo + datasets, the datasets that lie in the data directory found in ``data_dir``.
    """
    if not ref:
        return Environment(data_dir=data_dir)

    try:
        factory = resolve_lazy(ref)
    except (
        ImportError,
        AttributeError,
        ValueError,
        TypeError,
    ) as exc:  # TypeError: a relative name (../x)
        raise ConfigError(
            f"--env {ref!r}: cannot import the environment factory ({exc}); expected "
            "module:function"
        ) from None
    if not callable(factory):
        raise ConfigError(
            f"--env {ref!r}: {type(factory).__name__} is not callable; expected module:function, "
            "a function taking no arguments that returns a runner Environment"
        )

    try:
        inspect.signature(factory).bind()
    except TypeError as exc:  # it needs arguments
        raise ConfigError(
            f"--env {ref!r}: {exc}; expected a function taking no arguments that returns a runner "
            "Environment"
        ) from None
    except ValueError:  # no signature to read (a builtin): call it and see
        pass
    env = factory()
    if not isinstance(env, Environment):
        raise ConfigError(
            f"--env {ref!r}: returned {type(env).__name__}, expected a runner Environment "
            "(repro.runner.jobs.Environment)"
        )
    return env


def _with_subset(env: Any, req: MeasureRequest) -> Any:
    """The default environment, opening a declared subset of each dataset (``--subset``)."""
    if req.env:
        raise ConfigError(
            "--subset: opens the datasets of the default environment; a custom --env opens its own "
            "(give its dataset opener the subset instead)"
        )
    if req.executor != "local":
        raise ConfigError(f"--subset: runs with --executor local (not {req.executor})")
    return Environment(data_dir=env.data_dir, subset=Subset(req.subset, req.subset_seed))


def parse_worker(text: str | None) -> tuple[int, int]:
    """``--worker I/N`` (set by ``--workers`` for its children) -> (I, N); None -> (0, 1)."""
    if text is None:
        return 0, 1
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ConfigError(f"--worker {text!r}: expected I/N, e.g. 0/4") from None
    if not 0 <= i < n:
        raise ConfigError(f"--worker {text!r}: need 0 <= I < N")
    return i, n


def measure(req: MeasureRequest, log: Callable[[str], None], warn: Callable[[str], None]) -> int:
    """Run the request and return the exit status.

    ``log`` gets the results, ``warn`` the notes (skipped measurements, failures, corrupt records).
    The exit status is 1 when a requested measurement is neither stored nor measured (a job failed
    now, or failed before and was kept because nothing it depends on changed, or its record is
    corrupt; the other jobs still ran), so that a CI retry cannot pass without the measurement.
    """
    if req.workers is not None and not 1 <= req.workers <= MAX_WORKERS:
        raise ConfigError(
            f"--workers {req.workers}: expected 1..{MAX_WORKERS} worker processes (one per GPU, "
            "or leave it out for the default)"
        )
    data = resolve_data_dir(req.data_dir)  # resolved once, passed down
    req = apply_session(req, data)
    batch_size = DEFAULT_BATCH_SIZE if req.batch_size is None else req.batch_size
    models = configured_models(req.models, req.studies, data)
    if not models:
        raise ConfigError(
            "no models to measure: pass --models NAME[,NAME...] (or set [runner] models in "
            "repro.toml)"
        )
    env = load_environment(req.env, data)
    if req.subset is not None:
        env = _with_subset(env, req)
    if not req.env:  # a misspelt model fails here (did-you-mean), not as a failed job in the store
        for name in models:
            if not name.startswith("file:"):
                get_spec(name)
    measurements = configured_measurements(req.measurements, req.studies, env.measurement)
    if not req.measurements and not req.env:  # default: what has a configured dataset
        measurements, skipped = split_configured(measurements, data_dir=data)
        if skipped:
            warn(f"not measured (dataset not configured): {', '.join(skipped)}")
        if not measurements:
            raise ConfigError(
                "no dataset is configured (set REPRO_<NAME>_ROOT or [datasets] in repro.toml; "
                "`python -m repro reproduce` runs on generated mini data)"
            )
    if req.pgd_rule != "final_point":  # a protocol variant, asked for by name (--pgd-early-stop)
        measurements = with_pgd_rule(measurements, req.pgd_rule)
    store = store_dir(req.store)
    worker, n_workers = parse_worker(req.worker)

    jobs = jobs_for(models, measurements)
    if req.executor in ("slurm", "submitit-local"):
        return _measure_on_cluster(req, jobs, Store(store), batch_size, env, data, log)
    device = resolve_device(req.device)

    workers = req.workers
    if workers is None:
        workers = (
            max(1, len(visible_gpus()))
            if device == "cuda" and n_workers == 1 and not req.worker
            else 1
        )
    if workers > 1 and not req.worker:
        argv = [
            "--models",
            *models,
            "--measurements",
            *measurements,
            "--device",
            device,
            "--batch-size",
            str(batch_size),
            "--store",
            str(store),
            "--data-dir",
            str(data),
        ]
        argv += ["--retry-failed"] * req.retry_failed + ["--no-progress"] * (not req.progress)
        argv += ["--env", req.env] if req.env else []
        argv += ["--order", req.order]
        argv += (
            ["--subset", str(req.subset), "--subset-seed", str(req.subset_seed)]
            if req.subset is not None
            else []
        )
        codes = run_workers(argv, workers, gpus=visible_gpus() if device == "cuda" else None)
        log(f"{workers} workers finished (exit codes {codes}); results in {store}")
        missing = not_stored(Store(store), jobs)
        for job, why in missing:
            log(f"  not measured: {job} ({why})")
        return max([*codes, 1 if missing else 0])

    summary = run_sweep_ordered(
        jobs,
        Store(store),
        device=device,
        batch_size=batch_size,
        retry_failed=req.retry_failed,
        env=env,
        progress=req.progress,
        worker=worker,
        n_workers=n_workers,
        log=warn,
        order=req.order,
    )
    log(summary.line() + f"; store: {store}")
    if (
        req.session is not None
    ):  # what the session's parts cost here (never in REPORT.md: machine-dependent)
        table = time_table(store, models, measurements)
        if table:
            log(table)
    kept = Store(Path(store))
    for job in summary.failed:
        log(f"  failed: {job} (see {kept.record_path(job.model, job.measurement)})")
    for job in summary.kept_failed:
        log(f"  not measured: {job} ({kept_failure(kept, job)})")
    for job, message in summary.corrupt:
        log(f"  corrupt: {job}: {message}")
    # a job another worker held: this worker's siblings report it (and the parent checks the
    # store); a separate command that held it may not have finished it
    busy = [] if req.worker else not_stored(kept, summary.busy)
    for job, why in busy:
        log(f"  not measured: {job} ({why}; another measure command held it)")
    return 1 if summary.failed or summary.corrupt or summary.kept_failed or busy else 0


def kept_failure(store: Store, job) -> str:
    """Why a failed job kept from an earlier run was not measured, and what to do."""
    rec = store.read(job.model, job.measurement)
    error = (rec.error or {}) if rec is not None else {}
    what = f"{error.get('type', 'error')}: {error.get('message', '')}".strip()
    return (
        f"it failed before ({what}) and nothing it depends on has changed since (code, model "
        f"entry, checkpoint, dataset); fix the cause, or run again with --retry-failed; see "
        f"{store.record_path(job.model, job.measurement)}"
    )


def not_stored(store: Store, jobs) -> list[tuple[Any, str]]:
    """The jobs of ``jobs`` with no ``ok`` record in ``store``, each with why in words."""
    out = []
    for job in jobs:
        try:
            rec = store.read(job.model, job.measurement)
        except DataError as exc:
            out.append((job, f"corrupt record: {exc}"))
            continue
        if rec is None:
            out.append((job, "no record stored"))
        elif not rec.ok:
            out.append((job, kept_failure(store, job)))
    return out


def _measure_on_cluster(
    req: MeasureRequest,
    jobs: list,
    store,
    batch_size: int,
    env,
    data: Path,
    log: Callable[[str], None],
) -> int:
    """``--executor slurm`` (or ``submitit-local``): submit the jobs, wait, report how they ended.

    Submits the jobs not already in the store, one cluster job each, waits, and prints what each one
    that did not measure ended as. On SLURM the device is the jobs' (the submitting machine need not
    have a GPU): by default CUDA when the partition's nodes have GPUs.
    """
    cluster = "slurm" if req.executor == "slurm" else "local"
    resources, parameters = None, {}
    if cluster == "slurm":  # checked against the partition before anything is planned or submitted
        settings = current()
        resources = cluster_resources(
            requested(req.slurm, settings.runner.slurm, settings.origin), req.device
        )
        device = resources.device
    else:
        device = resolve_device(req.device)
        if req.slurm.get("timeout_min") is not None:
            parameters["timeout_min"] = req.slurm["timeout_min"]
    todo, skipped = to_submit(jobs, store, device=device, retry_failed=req.retry_failed, env=env)
    kept_failed = [job for job, _ in not_stored(store, skipped)]  # failed before, kept
    roots = configured_roots(sorted({env.measurement(j.measurement).dataset for j in todo}), data)
    results = submit(
        todo,
        store.root,
        device=device,
        batch_size=batch_size,
        retry_failed=req.retry_failed,
        cluster=cluster,
        dataset_roots=roots,
        parameters=parameters,
        resources=resources,
        env=req.env,
        log=log,
    )
    measured = [r for r in results if r["ran"] and r["status"] == "ok"]
    done_meanwhile = [
        r for r in results if not r["ran"] and r["status"] == "ok"
    ]  # by another worker
    busy = [r for r in results if r["busy"]]
    failed = [r for r in results if r not in measured and r not in done_meanwhile and r not in busy]
    log(
        f"{len(results)} cluster job(s) finished: {len(measured)} measured, {len(failed)} failed, "
        f"{len(busy)} held by other workers; {len(skipped) + len(done_meanwhile)} already in the "
        f"store{' (not submitted)' if skipped and not done_meanwhile else ''}; results in "
        f"{store.root}"
    )
    for r in failed:
        job = f"{r['model']} x {r['measurement']}"
        if r.get("slurm_state"):
            why = f": {r['error']}" if r.get("error") else ""
            log(
                f"  {r['slurm_state'].lower()}: {job} (SLURM job {r['job_id']}{why}; not recorded, "
                "the next run measures it)"
            )
        else:
            log(f"  failed: {job} (see {store.record_path(r['model'], r['measurement'])})")
    for job in kept_failed:
        log(f"  not measured: {job} ({kept_failure(store, job)})")
    return 1 if failed or kept_failed else 0

"""Runner, the job engine: plan (model x measurement) jobs against the store and run them.

Each job runs under its lock, and its record (or its error) is stored atomically.

A sweep never stops for a failing job: the error is stored as a ``failed`` record and the
next job runs. A finished job is skipped only when its record matches the job as it would run
now (``repro.runner.identity``: measurement version, dataset fingerprint, item count, mini
flag, weights hash); any other record is re-measured, and the reason logged. A corrupt record
is reported (path and how to remove it) and its job left alone; the sweep goes on. A failed job
is run again when something it depends on has changed since (``repro.runner.inputs``: the code,
the model's entry, its checkpoint, the dataset; the measurement version as for any record), and
with ``retry_failed``; otherwise it is kept (counted in ``SweepSummary.kept_failed``: ``measure``
then exits 1, a requested measurement being neither stored nor measured). Jobs
are ordered by model so a worker loads each model once; worker ``i`` of ``n`` starts at a
different model and takes any job no other live worker holds (``Store.lock``).
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from repro.base.errors import DataError
from repro.base.registry import resolve_lazy
from repro.base.settings import weights_dir
from repro.base.stats import Count
from repro.datasets import open_dataset
from repro.measurements.columns import SummaryContext
from repro.measurements.registry import Measurement
from repro.measurements.registry import get as get_measurement
from repro.runner.identity import JobIdentity, mismatches, source_identity
from repro.runner.inputs import changed, code_identity, identity_of
from repro.runner.progress import progress_for
from repro.runner.selection import canonical_names
from repro.store.files import Store
from repro.store.record import (
    STATUS_FAILED,
    STATUS_OK,
    ColumnValue,
    JobRecord,
    base_provenance,
    utc_now,
)
from repro.zoo import get_spec, load_model
from repro.zoo.weights_identity import expected_identity, model_weights_sha256

TODO, DONE, STALE, FAILED, CORRUPT = "todo", "done", "stale", "failed", "corrupt"
RETRY = "retry"  # failed before, and something it depends on has changed since


@dataclass(frozen=True)
class Job:
    model: str
    measurement: str

    def __str__(self) -> str:
        return f"{self.model} x {self.measurement}"


def jobs_for(models: Sequence[str], measurements: Sequence[str]) -> list[Job]:
    """Every (model x measurement) pair, ordered by model (each model is loaded once).

    A model named by a zoo alias is stored under its canonical name (``repro.runner.selection``).
    """
    return [Job(m, meas) for m in canonical_names(models) for meas in dict.fromkeys(measurements)]


def _default_load_model(name: str, device: str) -> Any:
    return load_model(name, device=device)


def _default_open_source(dataset: str, data_dir: Path | None = None, subset: Any = None) -> Any:
    return open_dataset(dataset, data_dir=data_dir, subset=subset)


@dataclass
class Environment:
    """Where the runner gets models, datasets and measurement specs (tests swap in fakes)."""

    load_model: Callable[[str, str], Any] = _default_load_model
    open_source: Callable[[str], Any] = _default_open_source
    measurement: Callable[[str], Measurement] = get_measurement
    # the weights identity a model would load with, without loading it (None: load it to know)
    weights_identity: Callable[[str], str | None] | None = None
    # the data directory the caller resolved: where the default sources find the datasets that
    # lie there unless configured (GraySplit, CBMSplit; repro.datasets.roots.dataset_root)
    data_dir: Path | None = None
    # a declared subset of every dataset the default opener opens (repro.datasets.subset; measure
    # --subset)
    subset: Any = None

    def __post_init__(self) -> None:
        if self.open_source is _default_open_source and (
            self.data_dir is not None or self.subset is not None
        ):
            self.open_source = partial(
                _default_open_source, data_dir=self.data_dir, subset=self.subset
            )


def _zoo_weights_identity(name: str) -> str | None:
    return expected_identity(get_spec(name), weights_dir())


@dataclass
class SweepSummary:
    ran: list[Job] = field(default_factory=list)
    failed: list[Job] = field(default_factory=list)
    skipped: list[Job] = field(default_factory=list)
    busy: list[Job] = field(default_factory=list)  # held by another live worker
    remeasured: list[Job] = field(
        default_factory=list
    )  # record of another version, data or weights: measured again
    corrupt: list[tuple[Job, str]] = field(
        default_factory=list
    )  # record unreadable: reported, job left alone
    unverified: list[tuple[Job, str]] = field(
        default_factory=list
    )  # kept: its identity could not be checked now
    # failed before and nothing it depends on changed: kept, not measured (also in ``skipped``)
    kept_failed: list[Job] = field(default_factory=list)
    # failed before, run again because something it depends on changed (also in ``ran``)
    retried: list[Job] = field(default_factory=list)

    def line(self) -> str:
        kept = (
            f" ({len(self.kept_failed)} of them failed before and kept: nothing they depend on "
            "changed)"
            if self.kept_failed
            else ""
        )
        retried = (
            f", {len(self.retried)} failed before and run again (what they depend on changed)"
            if self.retried
            else ""
        )
        text = (
            f"{len(self.ran)} measured ({len(self.failed)} failed, {len(self.remeasured)} "
            f"re-measured after a version, data or weights change{retried}), "
            f"{len(self.skipped)} already in the store{kept}, {len(self.busy)} held by other "
            "workers"
        )
        if self.corrupt:
            text += f", {len(self.corrupt)} corrupt record(s) skipped"
        return text


def job_state(store: Store, job: Job, version: str | None, retry_failed: bool = False) -> str:
    """The state of a job from its record's version and status alone (see ``_classify``)."""
    rec = store.read(job.model, job.measurement)
    if rec is None:
        return TODO
    if version is not None and rec.version != version:
        return STALE
    if rec.status == STATUS_FAILED:
        return TODO if retry_failed else FAILED
    return DONE


def _classify(
    store: Store, job: Job, version: str, retry_failed: bool, loaded: _Loaded, spec: Measurement
) -> tuple[str, list[str]]:
    """(state, why): a finished record is DONE only when it matches the job's identity now."""
    try:
        state = job_state(store, job, version, retry_failed)
    except DataError as exc:
        return CORRUPT, [str(exc)]
    if state == STALE:
        rec = store.read(job.model, job.measurement)
        return STALE, [f"stored with version {rec.version if rec else '?'}, current {version}"]
    if state == FAILED:
        rec = store.read(job.model, job.measurement)
        why = changed(rec.provenance.get("inputs") if rec else None, loaded.inputs(job, spec))
        return (RETRY, why) if why else (FAILED, [])
    if state != DONE:
        return state, []

    rec = store.read(job.model, job.measurement)
    assert rec is not None
    try:
        expected = loaded.identity(job, spec)
    except (
        Exception
    ) as exc:  # dataset or model unavailable now: the record stays, reported as unverified
        return DONE, [
            f"kept without checking what it was measured on ({type(exc).__name__}: {exc})"
        ]
    why = mismatches(rec.provenance, expected)
    return (STALE, why) if why else (DONE, [])


def _device_provenance(device: str) -> dict[str, Any]:
    out: dict[str, Any] = {"device": device}
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch"] = torch.__version__
        if str(device).startswith("cuda") and torch.cuda.is_available():
            out["device_name"] = torch.cuda.get_device_name(torch.device(device))
    return out


class _Loaded:
    """The model and dataset sources of the current job, kept while consecutive jobs share them."""

    def __init__(self, env: Environment, device: str):
        self.env, self.device = env, device
        self.model_name: str | None = None
        self.model: Any = None
        self.model_error: BaseException | None = None
        self.sources: dict[str, Any] = {}
        self.data_ids: dict[str, dict[str, Any]] = {}
        self.weights: dict[str, str | None] = {}
        self.known_weights: dict[str, str | None] = {}
        self.entries: dict[str, str | None] = {}

    def get_model(self, name: str) -> Any:
        if name != self.model_name:
            self.model = self.model_error = None
            self.model_name = name
            try:
                self.model = self.env.load_model(name, self.device)
            except Exception as exc:  # recorded per job below
                self.model_error = exc
        if self.model_error is not None:
            raise self.model_error
        return self.model

    def get_source(self, dataset: str) -> Any:
        if dataset not in self.sources:
            self.sources[dataset] = self.env.open_source(dataset)
        return self.sources[dataset]

    def data_identity(self, dataset: str) -> dict[str, Any]:
        if dataset not in self.data_ids:
            self.data_ids[dataset] = source_identity(dataset, self.get_source(dataset))
        return self.data_ids[dataset]

    def weights_identity(self, name: str, model: Any = None) -> str | None:
        """The weights hash of model ``name``.

        Of ``model`` when given (just loaded), else what a load would give (known without loading
        for zoo models whose files are pinned or locked).
        """
        if model is not None:
            self.weights[name] = model_weights_sha256(model)
        if name not in self.weights:
            fn = self.env.weights_identity
            if fn is None and self.env.load_model is _default_load_model:
                fn = _zoo_weights_identity
            value = (
                self.known_weights.get(name)  # hashed already for the job's inputs
                if fn is not None and self.known_weights.get(name) is not None
                else fn(name)
                if fn is not None
                else None
            )
            self.weights[name] = (
                value if value is not None else model_weights_sha256(self.get_model(name))
            )
        return self.weights[name]

    def inputs(self, job: Job, spec: Measurement) -> dict[str, str | None]:
        """What ``job`` depends on besides its measurement version (``repro.runner.inputs``).

        Known without loading its model: None where it cannot be known now (a missing checkpoint, a
        dataset that does not open, a custom environment's model).
        """
        name = job.model
        default = self.env.load_model is _default_load_model
        if name not in self.entries:
            try:
                self.entries[name] = identity_of(get_spec(name)) if default else None
            except Exception:  # an unknown name: the job records it
                self.entries[name] = None
        if name not in self.known_weights:
            fn = self.env.weights_identity or (_zoo_weights_identity if default else None)
            try:
                self.known_weights[name] = fn(name) if fn is not None else None
            except Exception:  # a checkpoint that cannot be read: the job records it
                self.known_weights[name] = None
        try:
            data = identity_of(self.data_identity(spec.dataset))
        except Exception:  # a dataset that does not open: the job records it
            data = None
        return {
            "code": code_identity(),
            "model": self.entries[name],
            "weights": self.known_weights[name],
            "data": data,
        }

    def identity(self, job: Job, spec: Measurement) -> Any:
        return JobIdentity(
            **self.data_identity(spec.dataset),
            model_weights_sha256=self.weights_identity(job.model),
        )


def start_provenance(
    spec: Measurement, version: str, batch_size: int, inputs: dict[str, Any] | None = None
) -> tuple[dict[str, Any], float]:
    """A job's provenance before it runs, and its start time.

    The provenance says what the job is, what it depends on (``_Loaded.inputs``) and when it
    started.
    """
    prov: dict[str, Any] = {
        **base_provenance(),
        "measurement_version": version,
        "seed": spec.seed,
        "batch_size": batch_size,
        "dataset": spec.dataset,
        "started_utc": utc_now(),
    }
    if inputs is not None:
        prov["inputs"] = inputs
    return prov, time.perf_counter()


def job_source(
    job: Job, prov: dict[str, Any], *, spec: Measurement, loaded: _Loaded, model: Any, device: str
) -> Any:
    """The job's source; its device, weights and data identity added to its provenance."""
    prov.update(_device_provenance(device))
    prov["model_weights_sha256"] = loaded.weights_identity(job.model, model)
    source = loaded.get_source(spec.dataset)
    # fingerprint, item count, mini/partial flag (generated mini data: never evidence)
    prov.update(loaded.data_identity(spec.dataset))
    return source


def write_failed(
    job: Job, store: Store, *, version: str, prov: dict[str, Any], t0: float, exc: BaseException
) -> JobRecord:
    """Store the ``failed`` record of a job that raised ``exc`` (called in the except clause)."""
    prov.update({"finished_utc": utc_now(), "duration_s": round(time.perf_counter() - t0, 3)})
    rec = JobRecord(
        job.model,
        job.measurement,
        version,
        STATUS_FAILED,
        provenance=prov,
        error={
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": traceback.format_exc(limit=20),
        },
    )
    store.write(rec)
    return rec


def write_result(
    job: Job,
    store: Store,
    *,
    spec: Measurement,
    version: str,
    prov: dict[str, Any],
    t0: float,
    result: Any,
    n_items: int,
) -> JobRecord:
    """Store the ``ok`` record of a probe's result.

    The record holds its benchmark.csv columns, counts and per-item records; a summarizer that
    raises stores the ``failed`` record instead.
    """
    try:
        summarize: Callable[..., list[ColumnValue]] = resolve_lazy(spec.summarize)  # type: ignore[assignment]
        columns = summarize(result, SummaryContext(dataset=spec.dataset, n_items=n_items))
    except Exception as exc:
        return write_failed(job, store, version=version, prov=prov, t0=t0, exc=exc)
    headline = next(
        (
            c
            for c in columns
            if c.variant == "standard" and (not spec.columns or c.column == spec.columns[0])
        ),
        columns[0] if columns else None,
    )
    value = result.value if result.value is not None else (headline.value if headline else None)
    interval = headline.interval if headline is not None and value == headline.value else None
    conditions = [
        {"condition": c.condition, **Count(c.k, c.n).as_json()} for c in result.conditions
    ]
    prov.update(
        {
            "finished_utc": utc_now(),
            "duration_s": round(time.perf_counter() - t0, 3),
            "probe_version": result.version,
        }
    )
    rec = JobRecord(
        job.model,
        job.measurement,
        version,
        STATUS_OK,
        conditions=conditions,
        value=value,
        interval=interval,
        values=dict(result.values),
        columns=list(columns),
        provenance=prov,
    )
    store.write(rec, result.records)
    return rec


def run_job(
    job: Job,
    store: Store,
    *,
    spec: Measurement,
    version: str,
    loaded: _Loaded,
    device: str,
    batch_size: int,
    progress: Callable[[int], None] | None = None,
) -> JobRecord:
    """Run one job and store its record (status ok or failed). The caller holds the job's lock."""
    prov, t0 = start_provenance(spec, version, batch_size, loaded.inputs(job, spec))
    try:
        model = loaded.get_model(job.model)
        source = job_source(job, prov, spec=spec, loaded=loaded, model=model, device=device)
        from repro.measurements.loop import run

        result = run(
            spec,
            model,
            source,
            device=device,
            batch_size=batch_size,
            seed=spec.seed,
            progress=progress,
        )
    except Exception as exc:
        return write_failed(job, store, version=version, prov=prov, t0=t0, exc=exc)
    return write_result(
        job, store, spec=spec, version=version, prov=prov, t0=t0, result=result, n_items=len(source)
    )


def _rotate(jobs: list[Job], worker: int, n_workers: int) -> list[Job]:
    """Worker ``worker`` starts at a different model than the others (then takes the rest)."""
    if n_workers <= 1 or not jobs:
        return jobs
    models = list(dict.fromkeys(j.model for j in jobs))
    start = (worker * len(models)) // n_workers
    order = models[start:] + models[:start]
    rank = {m: i for i, m in enumerate(order)}
    return sorted(jobs, key=lambda j: rank[j.model])


def to_submit(
    jobs: Iterable[Job],
    store: Store,
    *,
    device: str = "cpu",
    retry_failed: bool = False,
    env: Environment | None = None,
) -> tuple[list[Job], list[Job]]:
    """(the jobs a sweep would run, the ones it would skip as already in the store).

    By the same test as ``run_sweep`` (a record that matches the job as it would run now), without
    running any: a cluster run submits only the first. A corrupt record is left to the job (it
    reports it).
    """
    env = env or Environment()
    loaded = _Loaded(env, device)
    run, skip = [], []
    specs: dict[str, Measurement] = {}
    for job in jobs:
        if job.measurement not in specs:
            specs[job.measurement] = env.measurement(job.measurement)
        spec = specs[job.measurement]
        try:
            version = spec.version()
        except Exception:  # probe module broken: the job records the failure
            run.append(job)
            continue
        state, _ = _classify(store, job, version, retry_failed, loaded, spec)
        (skip if state in (DONE, FAILED) else run).append(job)
    return run, skip


@dataclass
class Sweep:
    """What a sweep's jobs share; ``claim`` and ``finish`` bracket a job.

    The store, each measurement's spec and version, the loaded model and sources, the progress bars
    and the summary.
    """

    store: Store
    specs: dict[str, Measurement]
    versions: dict[str, str]
    loaded: _Loaded
    retry_failed: bool
    bars: Any
    summary: SweepSummary
    log: Callable[[str], None] | None = None

    def say(self, msg: str) -> None:
        if self.log is not None:
            self.log(msg)

    def claim(self, job: Job) -> tuple[Any, str] | None:
        """(its lock, held, and its state: TODO or STALE) when ``job`` is to be measured now.

        None when it is not (in the store, failed before, corrupt, held by another worker: counted
        in the summary, its bar done).
        """
        version, spec, summary = (
            self.versions[job.measurement],
            self.specs[job.measurement],
            self.summary,
        )
        state, why = _classify(self.store, job, version, self.retry_failed, self.loaded, spec)
        if state == CORRUPT:
            summary.corrupt.append((job, why[0]))
            self.say(f"CORRUPT {job}: {why[0]}")
            self.bars.done(job, "CORRUPT record (see the warning)")
            return None
        if state in (DONE, FAILED):
            if why:
                summary.unverified.append((job, why[0]))
                self.say(f"UNVERIFIED {job}: {why[0]}")
            summary.skipped.append(job)
            if state == FAILED:
                summary.kept_failed.append(job)
            self.bars.done(
                job,
                "already in the store"
                if state == DONE
                else "failed before, kept (--retry-failed reruns it)",
            )
            return None
        lock = self.store.lock(job.model, job.measurement)
        if not lock.acquire():
            summary.busy.append(job)
            self.bars.done(job, "another worker has it")
            return None
        # another worker may have finished it meanwhile
        state, why = _classify(self.store, job, version, self.retry_failed, self.loaded, spec)
        if state in (DONE, FAILED, CORRUPT):
            lock.release()
            summary.skipped.append(job)
            self.bars.done(job, "finished by another worker")
            return None
        if state == STALE:
            self.say(f"re-measuring {job}: {'; '.join(why)}")
        elif state == RETRY:
            self.say(f"running {job} again (it failed before; since then {'; '.join(why)})")
        return lock, state

    def finish(self, job: Job, state: str, rec: JobRecord) -> None:
        """Count a measured job (its record stored, its lock released by the caller)."""
        self.bars.done(job, "measured" if rec.ok else "FAILED")
        self.summary.ran.append(job)
        if state == STALE:
            self.summary.remeasured.append(job)
        elif state == RETRY:
            self.summary.retried.append(job)
        if not rec.ok:
            self.summary.failed.append(job)
            self.say(
                f"FAILED {job}: {rec.error['type'] if rec.error else ''}: "
                f"{(rec.error or {}).get('message', '')}"
            )


def run_sweep(
    jobs: Iterable[Job],
    store: Store,
    *,
    device: str = "cpu",
    batch_size: int = 128,
    retry_failed: bool = False,
    env: Environment | None = None,
    progress: bool = True,
    worker: int = 0,
    n_workers: int = 1,
    log: Callable[[str], None] | None = None,
    first: Callable[..., list[Job]] | None = None,
) -> SweepSummary:
    """Run every job that is not already in the store, model by model (see the module docstring).

    ``first(jobs, sweep, device=, batch_size=)`` runs the jobs it can before and returns the others
    (``repro.runner.data_major.run_sweep``: the data-major groups).
    """
    env = env or Environment()
    jobs = _rotate(list(jobs), worker, n_workers)
    versions: dict[str, str] = {}
    specs: dict[str, Measurement] = {}
    for name in dict.fromkeys(j.measurement for j in jobs):
        specs[name] = env.measurement(name)  # unknown names fail here, before any work
        try:
            versions[name] = specs[name].version()
        except (
            Exception
        ) as exc:  # probe module missing or broken: every job of it is recorded as failed
            versions[name] = f"unavailable ({type(exc).__name__})"
    # our temp files left by killed writers (only stale ones: a live writer is not harmed)
    store.clean_temp()
    bars = progress_for(len(jobs), progress, worker=worker, n_workers=n_workers)
    sweep = Sweep(
        store, specs, versions, _Loaded(env, device), retry_failed, bars, SweepSummary(), log
    )
    try:
        if first is not None:
            jobs = first(jobs, sweep, device=device, batch_size=batch_size)  # returns the others
        for job in jobs:
            claimed = sweep.claim(job)
            if claimed is None:
                continue
            lock, state = claimed
            try:
                rec = run_job(
                    job,
                    store,
                    spec=specs[job.measurement],
                    version=versions[job.measurement],
                    loaded=sweep.loaded,
                    device=device,
                    batch_size=batch_size,
                    progress=bars.start(job),
                )
            finally:
                lock.release()
            sweep.finish(job, state, rec)
    finally:
        bars.close()
    return sweep.summary

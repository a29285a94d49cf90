"""Runner, data-major execution (``measure --order data-major``, the default).

For each measurement whose inputs do not depend on the model (every one the probe loop runs except
the attack's: ``shares_inputs``), the models that still need it are loaded together, resident on the
device, and each batch is decoded once, its stimuli made once (the spectral filters, the critical
band's noise synthesis) and handed to every model (``repro.measurements.loop.Probe.take``), instead
of each model streaming, decoding and synthesising the same inputs for itself.

Each model's record is written exactly as model by model (``repro.runner.jobs.write_result``:
atomic, under the job's lock, skipped when already in the store, so a killed sweep resumes); on
the CPU the records are bit-for-bit those of the model-major path (the same stimuli, the same
forward pass per model: ``tests/unit/test_data_major.py`` compares). A model that fails (its load,
a batch) gets its ``failed`` record and leaves the group; the others go on. PGD (its stimuli are
each model's own attack) and an Environment's own ``run`` functions stay model by model.

Memory is checked up front: the group's parameters and buffers must fit in ``RESIDENT_FRACTION``
of the memory free on the device when the group starts (CUDA: ``torch.cuda.mem_get_info``; CPU:
``MemAvailable``); the rest is left for activations and stimuli. Otherwise a ConfigError names
the models, the bytes and what to do (fewer models, or ``--order model-major``), before any of
the group's batches runs. Models must not modify their input in place (the zoo's do not).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from repro.base.errors import ConfigError
from repro.measurements.registry import Measurement
from repro.runner import jobs as runner_jobs
from repro.runner.jobs import (
    Job,
    Sweep,
    SweepSummary,
    job_source,
    start_provenance,
    write_failed,
    write_result,
)

ORDERS = ("data-major", "model-major")  # measure --order

#: the share of the free device memory the resident models may take (the rest: activations, stimuli)
RESIDENT_FRACTION = 0.6


def run_sweep(
    jobs: Sequence[Job], store: Any, *, order: str = "data-major", **kwargs: Any
) -> SweepSummary:
    """``repro.runner.jobs.run_sweep`` in ``order``.

    Data-major runs the groups first (``run_data_major``), then the other jobs model by model;
    model-major runs every job model by model.
    """
    if order not in ORDERS:
        raise ConfigError(f"--order {order!r}: expected one of {', '.join(ORDERS)}")
    return runner_jobs.run_sweep(
        jobs, store, first=run_data_major if order == "data-major" else None, **kwargs
    )


def shares_inputs(spec: Measurement) -> bool:
    """Whether every model of a group can be fed the same stimuli.

    The probe loop runs the measurement (no Environment's own ``run``) and its stimuli are not made
    from the model (an attack's are).
    """
    return not spec.run and not spec.stimuli.attack_steps


def free_memory(device: str) -> int:
    """Bytes free on ``device`` now (CUDA: free device memory; CPU: the kernel's MemAvailable)."""
    import torch

    dev = torch.device(device)
    if dev.type == "cuda":
        return int(torch.cuda.mem_get_info(dev)[0])
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass

    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def resident_bytes(model: Any) -> int:
    """Bytes of a model's parameters and buffers."""
    tensors = list(model.parameters()) + list(model.buffers())
    return sum(t.numel() * t.element_size() for t in tensors)


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


class _Member:
    """One model of a group: its job, lock, provenance, probe, progress callback."""

    def __init__(self, job: Job, lock: Any, state: str, prov: dict[str, Any], t0: float):
        self.job, self.lock, self.state, self.prov, self.t0 = job, lock, state, prov, t0
        self.model: Any = None
        self.probe: Any = None


def run_data_major(
    jobs: Sequence[Job], sweep: Sweep, *, device: str, batch_size: int, budget: int | None = None
) -> list[Job]:
    """Run the jobs of every measurement that ``shares_inputs``, one group per measurement.

    A group's models are in the order of ``jobs``. Returns the other jobs, for the model-by-model
    loop. ``budget``: bytes the resident models may take (None: ``RESIDENT_FRACTION`` of the free
    memory).
    """
    rest: list[Job] = []
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        spec = sweep.specs[job.measurement]
        if sweep.versions[job.measurement].startswith("unavailable") or not shares_inputs(spec):
            rest.append(job)
        else:
            groups.setdefault(job.measurement, []).append(job)
    for name, group in groups.items():
        run_group(name, group, sweep, device=device, batch_size=batch_size, budget=budget)
    return rest


def run_group(
    name: str,
    jobs: Sequence[Job],
    sweep: Sweep,
    *,
    device: str,
    batch_size: int,
    budget: int | None = None,
) -> None:
    """Run the jobs of one measurement that are to be measured, their models loaded together.

    Claims those jobs, loads their models together, runs every batch through all of them and stores
    each one's record (see the module docstring).
    """
    spec, version = sweep.specs[name], sweep.versions[name]
    members: list[_Member] = []
    try:
        for job in jobs:
            claimed = sweep.claim(job)
            if claimed is not None:
                inputs = sweep.loaded.inputs(job, spec)
                members.append(
                    _Member(
                        job,
                        claimed[0],
                        claimed[1],
                        *start_provenance(spec, version, batch_size, inputs),
                    )
                )
        if not members:
            return
        live = _load(members, sweep, spec, version, device, budget)
        if live:
            _stream(live, sweep, spec, version, device, batch_size)
    finally:
        for m in members:
            m.lock.release()
        members.clear()
        _free(device)


def _fail(m: _Member, sweep: Sweep, version: str, exc: BaseException) -> None:
    """Store ``m``'s failed record (inside the except clause) and count it."""
    rec = write_failed(m.job, sweep.store, version=version, prov=m.prov, t0=m.t0, exc=exc)
    sweep.finish(m.job, m.state, rec)
    m.model = m.probe = None


def _load(
    members: list[_Member],
    sweep: Sweep,
    spec: Measurement,
    version: str,
    device: str,
    budget: int | None,
) -> list[_Member]:
    """Load every member's model and its probe (a failure: that member's failed record).

    A ConfigError, before anything runs, when they do not fit (``budget``).
    """
    from repro.measurements.loop import Probe

    env = sweep.loaded.env
    limit = int(RESIDENT_FRACTION * free_memory(device)) if budget is None else budget
    used = 0
    live = []
    for m in members:
        try:
            m.model = env.load_model(m.job.model, device)
        except Exception as exc:
            _fail(m, sweep, version, exc)
            continue
        used += resident_bytes(m.model)
        if used > limit:
            names = [x.job.model for x in members]
            raise ConfigError(
                f"--order data-major: the {len(names)} models of {spec.name} ({', '.join(names)}) "
                f"do not fit on {device} together: {_gib(used)} of parameters and buffers after "
                f"{len(live) + 1} of them, {_gib(limit)} allowed ({RESIDENT_FRACTION:.0%} of the "
                "free memory, the rest for activations); measure fewer --models at once, or run "
                "--order model-major"
            )
        try:
            source = job_source(
                m.job, m.prov, spec=spec, loaded=sweep.loaded, model=m.model, device=device
            )
            m.probe = Probe(
                spec,
                m.model,
                source,
                device=device,
                batch_size=m.prov["batch_size"],
                seed=spec.seed,
            )
        except Exception as exc:
            _fail(m, sweep, version, exc)
            continue
        live.append(m)
    return live


def _stream(
    live: list[_Member], sweep: Sweep, spec: Measurement, version: str, device: str, batch_size: int
) -> None:
    """Run every batch through every live model, then store each model's record.

    Every batch is decoded once and its stimuli made once.
    """
    source = sweep.loaded.get_source(spec.dataset)
    lead = live[0].probe  # makes the batches and the stimuli (the same for every model)
    progress = sweep.bars.start(f"{spec.name} x {len(live)} model(s)")  # one count for the group
    done = 0
    with contextlib.ExitStack() as stack:
        for m in live:
            stack.enter_context(m.probe)
        try:
            for part, batch in lead.batches(source):
                labels = {}
                for m in list(live):
                    try:
                        labels[id(m)] = m.probe.rule.labels(batch)
                    except Exception as exc:
                        live.remove(m)
                        _fail(m, sweep, version, exc)
                if not live:
                    return
                first = labels[id(live[0])]
                for condition, x in lead.stimuli(
                    batch, part, model=live[0].model, labels=first, device=lead.device
                ):
                    for m in list(live):
                        try:
                            m.probe.take(condition, batch, labels[id(m)], x)
                        except Exception as exc:
                            live.remove(m)
                            _fail(m, sweep, version, exc)
                    if not live:
                        return
                done += len(batch.images)
                if progress is not None:
                    progress(done)
        except Exception as exc:  # the source or the stimuli: every model of the group failed
            for m in live:
                _fail(m, sweep, version, exc)
            return
    n_items = len(source)
    for m in live:
        try:
            result = m.probe.result()
        except Exception as exc:
            _fail(m, sweep, version, exc)
            continue
        rec = write_result(
            m.job,
            sweep.store,
            spec=spec,
            version=version,
            prov=m.prov,
            t0=m.t0,
            result=result,
            n_items=n_items,
        )
        sweep.finish(m.job, m.state, rec)
        m.model = m.probe = None


def _free(device: str) -> None:
    torch = sys.modules.get("torch")
    if torch is not None and str(device).startswith("cuda") and torch.cuda.is_available():
        torch.cuda.empty_cache()

"""Runner, on demand: make sure the store holds current measurements for some models.

Only the missing or stale jobs are run (``pytest --source measure`` and ``python -m repro
reproduce``).

Safe to call from several pytest-xdist workers at once: each worker runs the jobs it can
lock, then waits for the jobs other workers hold, so every caller returns with every job
finished. On CUDA each xdist worker takes one GPU (``cuda:<worker index mod GPUs>``).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Sequence
from pathlib import Path

from repro.base.device import resolve_device
from repro.base.study import select
from repro.claims.loader import load_claims
from repro.measurements.registry import measurements_for_columns, split_configured
from repro.runner.jobs import Environment, Job, SweepSummary, jobs_for, run_sweep
from repro.store.files import Store
from repro.zoo import specs


def worker_device(device: str) -> str:
    """Under pytest-xdist on CUDA: one GPU per worker (``gw3`` on 2 GPUs -> ``cuda:1``)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if device != "cuda" or not worker.startswith("gw"):
        return device
    import torch

    n = torch.cuda.device_count()
    return f"cuda:{int(worker[2:]) % n}" if n > 1 else device


def ensure_measured(
    models: Sequence[str],
    measurements: Sequence[str],
    store_dir: str | os.PathLike[str],
    *,
    device: str | None = None,
    batch_size: int = 128,
    retry_failed: bool = False,
    progress: bool = False,
    env: Environment | None = None,
) -> SweepSummary:
    """Run the missing or stale (model x measurement) jobs into ``store_dir``.

    Waits for the ones other processes are running. Returns what this call did.
    """
    store = Store(Path(store_dir))
    dev = worker_device(resolve_device(device))
    jobs = jobs_for(models, measurements)

    def sweep(todo: Sequence[Job]) -> SweepSummary:
        return run_sweep(
            todo,
            store,
            device=dev,
            batch_size=batch_size,
            retry_failed=retry_failed,
            env=env,
            progress=progress,
        )

    summary = sweep(jobs)
    for job in summary.busy:  # block until the holder finishes (or dies), then the record is there
        lock = store.lock(job.model, job.measurement)
        _wait_for(lock)
    if summary.busy:  # a holder that died left its job undone: run what is still missing
        again = sweep(summary.busy)
        summary.ran.extend(again.ran)
        summary.failed.extend(again.failed)
    return summary


def _wait_for(lock) -> None:
    lock.path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock.path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def needs_of_claims(claim_ids: Sequence[str] | None, data_dir=None) -> tuple[list[str], list[str]]:
    """(models, measurements) the claims rest on.

    Each claim is evaluated once on its study's published table, and the columns and models its
    result used are collected (models not in the zoo, e.g. the ViTs of benchmark.csv, are left out).
    """
    from repro.claims.check import evaluate
    from repro.claims.context import published_context

    claims = load_claims()
    ids = list(claim_ids) if claim_ids else claims.names()
    chosen = [claims.get(cid) for cid in ids]
    contexts = {}
    for study in select(list(dict.fromkeys(c.study for c in chosen))):
        contexts[study.name] = published_context(study, data_dir)
    columns: dict[str, None] = {}
    models: dict[str, None] = {}
    for claim in chosen:
        result = evaluate(claim, contexts[claim.study]).result
        columns.update(dict.fromkeys(result.sources))
        models.update(dict.fromkeys(m for m in result.per_model if isinstance(m, str)))
    known = {s.name for s in specs()}
    return [m for m in models if m in known], measurements_for_columns(list(columns))


def ensure_for_claims(
    claim_ids: Sequence[str] | None,
    store_dir: str | os.PathLike[str],
    *,
    device: str | None = None,
    data_dir=None,
    batch_size: int = 128,
    log=print,
) -> SweepSummary | None:
    """``pytest --source measure``: run the missing jobs the selected claims need.

    Only for the measurements whose dataset is configured (the rest keep their published values).
    """
    models, measurements = needs_of_claims(claim_ids, data_dir)
    runnable, missing = split_configured(measurements)
    if missing:
        log(
            f"--source measure: dataset not configured for {', '.join(missing)}: published values "
            "used"
        )
    if not runnable or not models:
        return None
    log(f"--source measure: ensuring {len(models)} model(s) x {', '.join(runnable)} in {store_dir}")
    return ensure_measured(models, runnable, store_dir, device=device, batch_size=batch_size)

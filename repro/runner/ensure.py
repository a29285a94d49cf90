"""Runner, on demand: make sure the store holds current measurements for some models, running
only the missing or stale jobs (``pytest --source measure`` and ``python -m repro reproduce``).

Safe to call from several pytest-xdist workers at once: each worker runs the jobs it can
lock, then waits for the jobs other workers hold, so every caller returns with every job
finished. On CUDA each xdist worker takes one GPU (``cuda:<worker index mod GPUs>``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from repro.runner.jobs import Environment, SweepSummary, jobs_for, run_sweep
from repro.store.files import Store


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def worker_device(device: str) -> str:
    """Under pytest-xdist on CUDA: one GPU per worker (``gw3`` on 2 GPUs -> ``cuda:1``)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if device != "cuda" or not worker.startswith("gw"):
        return device
    import torch

    n = torch.cuda.device_count()
    return f"cuda:{int(worker[2:]) % n}" if n > 1 else device


def ensure_measured(models: Sequence[str], measurements: Sequence[str], store_dir: str | os.PathLike[str], *,
                    device: str | None = None, batch_size: int = 128, retry_failed: bool = False,
                    progress: bool = False, env: Environment | None = None) -> SweepSummary:
    """Run the missing or stale (model x measurement) jobs into ``store_dir``; wait for the
    ones other processes are running. Returns what this call did."""
    store = Store(Path(store_dir))
    dev = worker_device(device or default_device())
    jobs = jobs_for(models, measurements)
    summary = run_sweep(jobs, store, device=dev, batch_size=batch_size, retry_failed=retry_failed, env=env,
                        progress=progress)
    for job in summary.busy:  # block until the holder finishes (or dies), then the record is there
        lock = store.lock(job.model, job.measurement)
        _wait_for(lock)
    if summary.busy:  # a holder that died left its job undone: run what is still missing
        again = run_sweep(summary.busy, store, device=dev, batch_size=batch_size, retry_failed=retry_failed,
                          env=env, progress=progress)
        summary.ran.extend(again.ran)
        summary.failed.extend(again.failed)
    return summary


def _wait_for(lock) -> None:
    import fcntl

    lock.path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock.path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)

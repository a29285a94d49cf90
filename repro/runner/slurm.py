"""Runner, beyond one machine: submit (model x measurement) jobs through ``submitit``.

One cluster job per (model x measurement); each runs the same ``run_sweep`` path as a local
worker on a one-job list, so it takes the job's lock, writes its own record file and skips
a job already in the store. ``cluster="slurm"`` submits to SLURM; ``cluster="local"`` runs
the identical path in local subprocesses (submitit's LocalExecutor; used by the tests).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from repro.runner.jobs import Job


def run_one(store_root: str, model: str, measurement: str, device: str, batch_size: int, retry_failed: bool,
            dataset_roots: Mapping[str, str], env: str | None = None) -> dict[str, Any]:
    """The function a cluster job executes (module-level, so submitit can pickle it)."""
    for name, root in dataset_roots.items():
        os.environ[f"REPRO_{name.upper().replace('-', '_')}_ROOT"] = root
    from repro.base.registry import resolve_lazy
    from repro.runner.jobs import Environment, run_sweep
    from repro.store.files import Store

    store = Store(store_root)
    environment = resolve_lazy(env)() if env else Environment()  # type: ignore[operator]
    summary = run_sweep([Job(model, measurement)], store, device=device, batch_size=batch_size,
                        retry_failed=retry_failed, env=environment, progress=False)
    rec = store.read(model, measurement)
    return {"model": model, "measurement": measurement, "ran": bool(summary.ran), "busy": bool(summary.busy),
            "status": rec.status if rec else None}


def submit(jobs: Sequence[Job], store_root: str | os.PathLike[str], *, device: str, batch_size: int,
           retry_failed: bool = False, cluster: str = "slurm", folder: str | os.PathLike[str] | None = None,
           dataset_roots: Mapping[str, str] | None = None, parameters: Mapping[str, Any] | None = None,
           env: str | None = None, wait: bool = True) -> list[Any]:
    """Submit one cluster job per (model x measurement); with ``wait`` return their results.

    ``parameters`` go to ``executor.update_parameters`` (e.g. ``slurm_partition``,
    ``timeout_min``); by default one GPU per job when ``device`` is CUDA. ``env``: a
    ``"module:factory"`` for a custom runner Environment, imported inside each cluster job.
    """
    import submitit

    store_root = str(Path(store_root).resolve())
    folder = Path(folder) if folder else Path(store_root) / ".submitit"
    executor = submitit.AutoExecutor(folder=str(folder), cluster=None if cluster == "slurm" else cluster)
    params: dict[str, Any] = {"timeout_min": 24 * 60, "name": "repro-measure"}
    if cluster != "local":
        params.update({"gpus_per_node": 1 if str(device).startswith("cuda") else 0, "cpus_per_task": 8, "nodes": 1,
                       "tasks_per_node": 1})
    params.update(parameters or {})
    executor.update_parameters(**params)
    roots = {k: str(Path(v).resolve()) for k, v in (dataset_roots or {}).items()}
    futures = [executor.submit(run_one, store_root, j.model, j.measurement, device, batch_size, retry_failed, roots,
                               env) for j in jobs]
    if not wait:
        return futures
    return [f.result() for f in futures]

"""Runner, beyond one machine: submit (model x measurement) jobs through ``submitit``.

One cluster job per (model x measurement) that is not already in the store; each runs the same
``run_sweep`` path as a local worker on a one-job list, so it takes the job's lock, writes its
own record file and skips a job another worker finished meanwhile. ``cluster="slurm"`` submits
to SLURM; ``cluster="local"`` runs the identical path in local subprocesses (submitit's
LocalExecutor; used by the tests).

On SLURM, the resources of each job are resolved and checked against the partition before
anything is submitted (``repro.runner.slurm_resources``). The jobs are then watched with
``squeue`` (one call for all of them, at growing intervals) and their result files: submitit's
own watcher polls ``sacct``, which fails, with a warning at every poll, on the many clusters that
run without accounting, so it is never asked. A job pending for a reason that no wait resolves
(``PartitionConfig``, a QOS limit per job) cancels the run's jobs and is a ConfigError naming the
reason; a job that ends without a result (cancelled, killed, out of time) is reported with its
SLURM state, and the next run measures it again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.base.errors import ConfigError
from repro.base.registry import resolve_lazy
from repro.runner.jobs import Environment, Job, run_sweep
from repro.runner.slurm_resources import (
    SCONTROL,
    SINFO,
    Requested,
    Resources,
    never_runs,
    parse_partitions,
    resolve,
)
from repro.store.files import Store

#: SLURM job states after which no result file will come
FINISHED = frozenset(
    {
        "COMPLETED",
        "CANCELLED",
        "FAILED",
        "TIMEOUT",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "REVOKED",
        "SPECIAL_EXIT",
    }
)
#: how long a job that SLURM says has ended may take to show its result file (a shared file system's
#: lag)
RESULT_GRACE_S = 30.0
#: the longest pause between two ``squeue`` calls (they start at 1 s and grow by half each time)
MAX_POLL_S = 15.0


def run_one(
    store_root: str,
    model: str,
    measurement: str,
    device: str,
    batch_size: int,
    retry_failed: bool,
    dataset_roots: Mapping[str, str],
    env: str | None = None,
) -> dict[str, Any]:
    """The function a cluster job executes (module-level, so submitit can pickle it)."""
    for name, root in dataset_roots.items():
        os.environ[f"REPRO_{name.upper().replace('-', '_')}_ROOT"] = root

    store = Store(store_root)
    environment = resolve_lazy(env)() if env else Environment()  # type: ignore[operator]
    summary = run_sweep(
        [Job(model, measurement)],
        store,
        device=device,
        batch_size=batch_size,
        retry_failed=retry_failed,
        env=environment,
        progress=False,
    )
    rec = store.read(model, measurement)
    return {
        "model": model,
        "measurement": measurement,
        "ran": bool(summary.ran),
        "busy": bool(summary.busy),
        "status": rec.status if rec else None,
    }


# --------------------------------------------------------------------------- the cluster
def _run(argv: Sequence[str]) -> str:
    """A SLURM client command's standard output.

    A ConfigError naming it when it is missing or fails.
    """
    if shutil.which(argv[0]) is None:
        raise ConfigError(
            f"--executor slurm: {argv[0]} not found on PATH (the SLURM client commands sinfo, "
            "sbatch, squeue, scancel are needed; tests/cluster/slurm-up.sh starts a one-node "
            "SLURM)"
        )
    proc = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise ConfigError(f"--executor slurm: `{' '.join(argv)}` failed: {why} (is slurmctld up?)")
    return proc.stdout


def cluster_resources(
    req: Requested, device: str, run: Callable[[Sequence[str]], str] = _run
) -> Resources:
    """The resources of each job on this cluster (``sinfo`` and ``scontrol show partition``)."""
    return resolve(req, parse_partitions(run(SINFO), run(SCONTROL)), device)


def squeue_states(ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """job id -> (state, reason) of the jobs SLURM still lists.

    A job that left the queue is absent.
    """
    if not ids:
        return {}
    proc = subprocess.run(
        ["squeue", "--noheader", "--states=all", "--format=%i|%T|%r", "--jobs", ",".join(ids)],
        capture_output=True,
        text=True,
        check=False,
    )
    out: dict[str, tuple[str, str]] = {}
    for (
        line
    ) in proc.stdout.splitlines():  # an unknown id alone: exit status 1 and no line, i.e. all gone
        parts = line.strip().split("|")
        if len(parts) == 3:
            out[parts[0]] = (parts[1], parts[2])
    return out


def scancel(ids: Sequence[str]) -> None:
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True, check=False)


def accounting_state(job_id: str) -> str | None:
    """The final state of a job that left the queue, from accounting (``sacct``).

    Read when the cluster keeps accounting (asked once per such job); None without accounting.
    """
    config = subprocess.run(
        ["scontrol", "show", "config"], capture_output=True, text=True, check=False
    ).stdout
    if "accounting_storage/none" in config or shutil.which("sacct") is None:
        return None
    proc = subprocess.run(
        ["sacct", "--noheader", "--parsable2", "--allocations", "--format=State", "--jobs", job_id],
        capture_output=True,
        text=True,
        check=False,
    )
    states = proc.stdout.split()
    return states[0].split()[0] if proc.returncode == 0 and states else None


# --------------------------------------------------------------------------- waiting
@dataclass
class Watch:
    """How :func:`wait` sees the cluster (tests pass fakes).

    States of listed jobs, cancelling, the final state of a job no longer listed, the pause between
    polls, the clock.
    """

    states: Callable[[Sequence[str]], dict[str, tuple[str, str]]] = squeue_states
    cancel: Callable[[Sequence[str]], None] = scancel
    final_state: Callable[[str], str | None] = accounting_state
    pause: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


def _ended(job: Job, job_id: str, state: str) -> dict[str, Any]:
    return {
        "model": job.model,
        "measurement": job.measurement,
        "ran": False,
        "busy": False,
        "status": None,
        "slurm_state": state,
        "job_id": job_id,
    }


def _collect(job: Job, future: Any) -> dict[str, Any]:
    try:
        return dict(future.result())
    except (
        Exception
    ) as exc:  # the job's own Python failed outside run_sweep (submitit re-raises it here)
        last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        return {**_ended(job, str(future.job_id), "FAILED"), "error": last}


def wait(
    jobs: Sequence[Job],
    futures: Sequence[Any],
    resources: Resources | None = None,
    watch: Watch | None = None,
) -> list[dict[str, Any]]:
    """The results of the submitted jobs, in order (see the module docstring).

    Each once it has a result file or has left the queue. A job pending for a reason that never
    resolves cancels every job of the run still queued and raises a ConfigError naming it.
    """
    watch = watch or Watch()
    results: list[dict[str, Any] | None] = [None] * len(jobs)
    left = set(range(len(jobs)))
    ended_at: dict[int, float] = {}
    interval, next_query = 1.0, watch.clock()
    while left:
        for i in sorted(left):
            if Path(futures[i].paths.result_pickle).exists():
                results[i] = _collect(jobs[i], futures[i])
                left.discard(i)
        if not left:
            break
        if watch.clock() >= next_query:
            ids = {i: str(futures[i].job_id) for i in left}
            listed = watch.states(list(ids.values()))
            for i, job_id in sorted(ids.items()):
                state, reason = listed.get(job_id, ("", ""))
                if state == "PENDING" and never_runs(reason):
                    watch.cancel(sorted(ids.values()))
                    asked = f" ({resources.line()})" if resources is not None else ""
                    raise ConfigError(
                        f"cannot be scheduled: SLURM job {job_id} ({jobs[i]}) pends with reason "
                        f"{reason}, which no wait resolves: the request{asked} exceeds what the "
                        f"partition, account or QOS allows; cancelled the {len(ids)} job(s) of "
                        "this run still queued"
                    )
                if state in ("", *FINISHED):
                    first = ended_at.setdefault(i, watch.clock())
                    if state == "CANCELLED" or watch.clock() - first >= RESULT_GRACE_S:
                        final = state or watch.final_state(job_id) or "left the queue"
                        results[i] = _ended(jobs[i], job_id, final)
                        left.discard(i)
            next_query = watch.clock() + interval
            interval = min(interval * 1.5, MAX_POLL_S)
        if left:
            watch.pause(1.0)
    return [r for r in results if r is not None]


# --------------------------------------------------------------------------- submitting
def submit(
    jobs: Sequence[Job],
    store_root: str | os.PathLike[str],
    *,
    device: str,
    batch_size: int,
    retry_failed: bool = False,
    cluster: str = "slurm",
    folder: str | os.PathLike[str] | None = None,
    dataset_roots: Mapping[str, str] | None = None,
    parameters: Mapping[str, Any] | None = None,
    resources: Resources | None = None,
    env: str | None = None,
    wait_for: bool = True,
    log: Callable[[str], None] | None = None,
) -> list[Any]:
    """Submit one cluster job per (model x measurement); with ``wait_for`` return their results.

    On SLURM, ``resources`` (``cluster_resources``) are what each job asks for; ``parameters``
    go to ``executor.update_parameters`` after them (e.g. ``timeout_min`` on the local executor).
    ``env``: a ``"module:factory"`` for a custom runner Environment, imported inside each job.
    """
    import submitit

    if not jobs:
        return []
    store_root = str(Path(store_root).resolve())
    folder = Path(folder) if folder else Path(store_root) / ".submitit"
    executor = submitit.AutoExecutor(folder=str(folder), cluster=cluster)
    params: dict[str, Any] = {"timeout_min": 24 * 60, "name": "repro-measure"}
    if cluster == "slurm":
        if resources is None:
            raise ValueError("submit(cluster='slurm') needs the resources (cluster_resources)")
        params.update(resources.submitit_parameters())
    params.update(parameters or {})
    executor.update_parameters(**params)
    roots = {k: str(Path(v).resolve()) for k, v in (dataset_roots or {}).items()}
    futures = [
        executor.submit(
            run_one,
            store_root,
            j.model,
            j.measurement,
            device,
            batch_size,
            retry_failed,
            roots,
            env,
        )
        for j in jobs
    ]
    if log is not None and cluster == "slurm":
        log(
            f"submitted {len(futures)} SLURM job(s) ({resources.line() if resources else ''}): "
            f"{', '.join(str(f.job_id) for f in futures)}; logs in {folder}"
        )
    if not wait_for:
        return futures
    if cluster != "slurm":
        return [f.result() for f in futures]
    return wait(jobs, futures, resources)

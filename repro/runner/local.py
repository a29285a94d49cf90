"""Runner, several workers on one machine: one subprocess per worker.

Each worker is pinned to one GPU (``CUDA_VISIBLE_DEVICES``) when measuring on CUDA. Workers share
the store; the per-job lock keeps them from running the same job, so no coordinator is needed. On
Ctrl-C the command stops every worker and waits for them before it says how to resume (``stop``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

STOP_GRACE_S = (
    10.0  # after Ctrl-C, how long a terminated worker may take to exit before it is killed
)


def visible_gpus() -> list[str]:
    """GPU ids this process may use (``CUDA_VISIBLE_DEVICES`` or all that torch sees)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g for g in env.split(",") if g.strip()]
    try:
        import torch

        return [str(i) for i in range(torch.cuda.device_count())]
    except ImportError:
        return []


def run_workers(
    worker_argv: Sequence[str], n_workers: int, *, gpus: Sequence[str] | None = None
) -> list[int]:
    """Start ``python -m repro measure <worker_argv> --worker i/n`` for i in 0..n-1; wait for all.

    With ``gpus`` worker i sees only ``gpus[i % len(gpus)]``. Returns the exit codes.
    """
    procs = []
    for i in range(n_workers):
        env = dict(os.environ)
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = str(gpus[i % len(gpus)])
        # each worker gets its share of the cores
        threads = max(1, (os.cpu_count() or 1) // n_workers)
        env.setdefault("OMP_NUM_THREADS", str(threads))
        cmd = [
            sys.executable,
            "-m",
            "repro",
            "measure",
            *worker_argv,
            "--worker",
            f"{i}/{n_workers}",
        ]
        procs.append(subprocess.Popen(cmd, env=env))
    codes = []
    try:
        for p in procs:
            codes.append(p.wait())
    except KeyboardInterrupt:
        stop(procs)
        raise
    return codes


def stop(procs: Sequence[subprocess.Popen[bytes]], grace_s: float = STOP_GRACE_S) -> None:
    """After Ctrl-C: terminate every worker still running and wait for each one.

    Each is sent SIGTERM (a terminal's SIGINT, sent to the whole process group, has usually stopped
    it already) and waited for, killed if it has not exited after ``grace_s``, so that no worker
    outlives the command. What a worker finished is in the store; its running job is not recorded
    (records are written atomically).
    """
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

"""Runner, several workers on one machine: one subprocess per worker, each pinned to one GPU
(``CUDA_VISIBLE_DEVICES``) when measuring on CUDA. Workers share the store; the per-job lock
keeps them from running the same job, so no coordinator is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence


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


def run_workers(worker_argv: Sequence[str], n_workers: int, *, gpus: Sequence[str] | None = None) -> list[int]:
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
        cmd = [sys.executable, "-m", "repro", "measure", *worker_argv, "--worker", f"{i}/{n_workers}"]
        procs.append(subprocess.Popen(cmd, env=env))
    codes = []
    for p in procs:
        try:
            codes.append(p.wait())
        except KeyboardInterrupt:
            for q in procs:
                q.terminate()
            raise
    return codes

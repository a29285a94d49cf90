"""``python -m repro measure``: run (model x measurement) jobs into the measurement store.

Dispatched by ``repro.runner.dispatch``. Resumable: finished jobs are skipped, a failing job is
recorded and the sweep goes on; a failed job runs again once something it depends on has changed
(code, model entry, checkpoint, dataset). Exits 1 while a requested measurement is neither stored
nor measured; SIGTERM stops it as Ctrl-C does.
``--workers N`` starts N worker processes (one per GPU on CUDA); ``--executor slurm`` submits
one cluster job per (model x measurement) through submitit. ``--session NAME`` runs a study's
named session (``[sessions.NAME]``), e.g. ``--session real`` (``nox -s real``).
"""

from __future__ import annotations

import argparse

from repro.cli.common import (
    MAX_BATCH,
    MAX_SLURM_CPUS,
    MAX_SLURM_GPUS,
    MAX_SLURM_MEM_GB,
    MAX_TIMEOUT_MIN,
    add_device_option,
    add_input_options,
    command,
    float_range,
    int_range,
    split_names,
)
from repro.cli.paths import output_dir
from repro.measurements.registry import MEASUREMENTS


def _handler(args: argparse.Namespace) -> int:
    if args.list:
        for name, m in MEASUREMENTS.items():
            print(f"{name:16s} {m.dataset:16s} {m.description}")
        return 0
    from repro.base.settings import store_dir
    from repro.base.study import select
    from repro.runner.dispatch import MeasureRequest, measure
    from repro.runner.progress import write_line

    output_dir(store_dir(args.store), "--store")

    slurm = {
        "partition": args.slurm_partition,
        "cpus_per_task": args.slurm_cpus_per_task,
        "mem_gb": args.slurm_mem_gb,
        "gpus": args.slurm_gpus,
        "timeout_min": args.timeout_min,
    }
    request = MeasureRequest(
        models=split_names(args.models),
        measurements=split_names(args.measurements),
        studies=select(split_names(args.study)),
        data_dir=args.data_dir,
        store=args.store,
        device=args.device,
        batch_size=args.batch_size,
        retry_failed=args.retry_failed,
        progress=not args.no_progress,
        env=args.env,
        executor=args.executor,
        workers=args.workers,
        worker=args.worker,
        slurm=slurm,
        session=args.session,
        subset=args.subset,
        subset_seed=args.subset_seed,
        order=args.order,
        pgd_rule="early_stop" if args.pgd_early_stop else "final_point",
    )
    return measure(request, log=print, warn=write_line)


#: the per-job SLURM requests of ``--executor slurm``: option, type, metavar, what it requests
SLURM_REQUESTS = (
    (
        "--slurm-cpus-per-task",
        int_range(1, MAX_SLURM_CPUS),
        "N",
        "CPUs per job (default: [runner.slurm] cpus_per_task, else a node's share, at most 8)",
    ),
    (
        "--slurm-mem-gb",
        float_range(0.001, MAX_SLURM_MEM_GB),
        "GB",
        "memory per job (default: [runner.slurm] mem_gb, else the memory of its CPUs on the node)",
    ),
    (
        "--slurm-gpus",
        int_range(0, MAX_SLURM_GPUS),
        "N",
        "GPUs per job (default: [runner.slurm] gpus, else 1 on CUDA, 0 on the CPU)",
    ),
)


def register(sub) -> None:
    p = command(
        sub,
        "measure",
        "run (model x measurement) jobs into the measurement store (resumable)",
        __doc__,
    )
    p.add_argument(
        "--models",
        nargs="+",
        metavar="NAME",
        help="model names or aliases (comma or space separated; 'all' = the studies' models)",
    )
    p.add_argument(
        "--measurements",
        nargs="+",
        metavar="NAME",
        help="measurements (default: the studies' ones whose dataset is configured; see --list)",
    )
    add_input_options(
        p,
        study=True,
        data_dir="published data directory (where the studies' model lists are read, and "
        "GraySplit/CBMSplit unless configured)",
    )
    add_device_option(p, "cuda, cuda:1, cpu (default: cuda when available)")
    p.add_argument(
        "--batch-size",
        type=int_range(1, MAX_BATCH),
        default=None,
        help="images per forward pass (default: the session's, else 128)",
    )
    p.add_argument(
        "--session",
        metavar="NAME",
        help="a named session of the selected studies ([sessions.NAME] in its study.toml: models, "
        "measurements, device, batch size), e.g. `real` (the EfficientNet-Lite models on the CPU)",
    )
    add_input_options(
        p, store="store directory (default: REPRO_STORE_DIR, [paths] store, runs/store)"
    )
    p.add_argument(
        "--workers",
        type=int_range(1, 256),
        default=None,
        help="worker processes (default: one per visible GPU on CUDA, else 1)",
    )
    p.add_argument(
        "--executor",
        choices=["local", "slurm", "submitit-local"],
        default="local",
        help="local processes, or one SLURM job per (model x measurement) via submitit "
        "(submitit-local: the same path through submitit's local executor)",
    )
    p.add_argument(
        "--slurm-partition",
        metavar="NAME",
        help="--executor slurm: the partition (default: [runner.slurm] partition, else the "
        "cluster's default partition)",
    )
    for flag, kind, metavar, request in SLURM_REQUESTS:
        p.add_argument(flag, type=kind, metavar=metavar, help=f"--executor slurm: {request}")
    p.add_argument(
        "--timeout-min",
        type=int_range(1, MAX_TIMEOUT_MIN),
        help="per-job time limit for --executor slurm, minutes (default: [runner.slurm] "
        "timeout_min, else the partition's default time, else 1440, at most its MaxTime)",
    )
    p.add_argument(
        "--order",
        choices=["data-major", "model-major"],
        default="data-major",
        help="data-major (default, faster): the models that still need a measurement are loaded "
        "together and each batch is decoded and its stimuli made once for all of them (PGD stays "
        "model by model); model-major: one model at a time (less device memory). The same records "
        "either way",
    )
    p.add_argument(
        "--pgd-early-stop",
        action="store_true",
        help="a protocol variant, never the default: run pgd_low_early_stop in pgd_low's place "
        "(each image's attack stopped at its first misclassified iterate, the iterate recorded; "
        "its own column top1_acc/PGD-40-early-stop/low, never compared as the study's PGD-40 "
        "column)",
    )
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="run failed jobs again (default: run one again only when its code, model entry, "
        "checkpoint or dataset changed since, else keep its error and exit 1)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress (bars on a terminal, one line per finished job in a log)",
    )
    p.add_argument("--list", action="store_true", help="list the measurements and exit")
    p.add_argument(
        "--env",
        metavar="MODULE:FACTORY",
        help="custom runner Environment (model loader, dataset opener, measurements), e.g. for "
        "your own models",
    )
    p.add_argument(
        "--subset",
        type=int_range(1, 10_000_000),
        default=None,
        metavar="N",
        help="measure a declared, seeded, class-stratified subset of N images of each dataset (the "
        "same images in every condition), as python -m repro plan --confidence plans it; recorded "
        "in the provenance (size, seed, stratification, digest of the image list), evidence with "
        "its own n",
    )
    p.add_argument(
        "--subset-seed",
        type=int_range(0, 2**63 - 1),
        default=0,
        metavar="SEED",
        help="the seed of --subset (default 0)",
    )
    p.add_argument("--worker", help=argparse.SUPPRESS)  # I/N, set by --workers for its children
    p.set_defaults(handler=_handler)

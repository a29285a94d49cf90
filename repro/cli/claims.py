"""``python -m repro claims``: recompute every claim from the published data; print the table
(claim, published, recomputed, interval, verdict); optionally write the JSON document."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _handler(args: argparse.Namespace) -> int:
    from repro.claims import evaluate_all, published_context
    from repro.claims.output import claims_document, format_table

    ctx = published_context(args.data_dir, args.analysis)
    outcomes = evaluate_all(ctx)
    print(format_table(outcomes))
    ok = sum(o.as_expected for o in outcomes)
    print(f"\n{ok} of {len(outcomes)} claims as recorded "
          f"({sum(o.reproduced for o in outcomes)} reproduced; data: {ctx.table.origin}; "
          f"intervals: {ctx.study.interval_method})")
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(claims_document(ctx, outcomes), indent=1) + "\n")
        print(f"wrote {path}")
    return 0 if ok == len(outcomes) else 1


def register(sub) -> None:
    p = sub.add_parser("claims", help="recompute the published claims from the published data",
                       description=__doc__)
    p.add_argument("--data-dir", help="published data directory (default: see README, Data directory)")
    p.add_argument("--json", metavar="PATH", help="also write the claims and analysis tables as JSON")
    p.add_argument("--analysis", metavar="TOML", help="analysis definition: a variant TOML (default: gavrikov2024)")
    p.set_defaults(handler=_handler)

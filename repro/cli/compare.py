"""``python -m repro compare``: our stored measurements next to benchmark.csv, per model, with
the difference and whether the published value lies inside our 95% binomial interval."""

from __future__ import annotations

import argparse


def _handler(args: argparse.Namespace) -> int:
    from repro.cli.measure import split_names
    from repro.published.fetch import require_file
    from repro.runner.measurements import MEASUREMENTS, current_versions
    from repro.settings import data_dir, store_dir
    from repro.store.compare import compare, format_rows, read_published

    store = store_dir(args.store)
    published = read_published(require_file("gavrikov2024/benchmark.csv", data_dir(args.data_dir)))
    versions = current_versions()
    headline = None if args.all_columns else {n: MEASUREMENTS.get(n).columns for n in MEASUREMENTS.names()}
    rows = compare(store, published, versions=versions, headline=headline, models=split_names(args.models) or None)
    if args.tidy:
        from repro.store.export import write_tidy_csv

        n = write_tidy_csv(store, args.tidy, versions=versions, report=None)  # corrupt records: in the table below
        print(f"wrote {n} rows to {args.tidy}")
    if not rows:
        print(f"no measurements in {store} (run `python -m repro measure` first)")
        return 0
    print(format_rows(rows))
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    print("\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f"  (store: {store})")
    return 0


def register(sub) -> None:
    p = sub.add_parser("compare", help="our measurements next to benchmark.csv, with differences and intervals",
                       description=__doc__)
    p.add_argument("--store", help="store directory (default: REPRO_STORE_DIR, [paths] store, runs/store)")
    p.add_argument("--data-dir", help="published data directory")
    p.add_argument("--models", nargs="+", metavar="NAME")
    p.add_argument("--all-columns", action="store_true", help="every stored column (e.g. each ImageNet-C condition)")
    p.add_argument("--tidy", metavar="CSV", help="also write the tidy table (one row per value) to CSV")
    p.set_defaults(handler=_handler)

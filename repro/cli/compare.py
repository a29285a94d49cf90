"""``python -m repro compare``: our stored measurements next to each study's published table,
per model, with the difference and whether the published value lies inside our 95% binomial
interval. Exit status 1 when a stored record is corrupt (it is listed with how to remove it; the
other rows are still shown)."""

from __future__ import annotations

import argparse

from repro.cli.common import add_study_option, split_names
from repro.cli.paths import input_dir, output_file


def _handler(args: argparse.Namespace) -> int:
    from repro.base.settings import store_dir
    from repro.base.study import select
    from repro.measurements.registry import MEASUREMENTS, current_versions
    from repro.published.study_data import study_table
    from repro.runner.selection import canonical_names
    from repro.store.compare import compare, format_rows

    if args.tidy:
        output_file(args.tidy, "--tidy")
    store = input_dir(store_dir(args.store), "--store")
    published: dict[str, dict[str, float]] = {}
    for study in select(split_names(args.study)):
        if study.measurements:  # a study that measures nothing has no table to compare with
            for model, row in study_table(study, args.data_dir).values.items():
                published.setdefault(model, {}).update(row)
    versions = current_versions()
    headline = None if args.all_columns else {n: m.columns for n, m in MEASUREMENTS.items()}
    models = canonical_names(split_names(args.models)) or None
    if models:
        _check_models(models, store)
    rows = compare(store, published, versions=versions, headline=headline, models=models)
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
    return 1 if counts.get("corrupt") else 0  # the other rows are shown; a corrupt record fails the command


def _check_models(models: list[str], store) -> None:
    """``--models``: each a model of the store or of the zoo (a misspelt name compared nothing, silently)."""
    from repro.base.errors import ConfigError, UnknownNameError
    from repro.store.files import Store
    from repro.zoo import get_spec

    stored = {r.model for r in Store(store)}
    unknown = []
    for name in models:
        if name in stored:
            continue
        try:
            get_spec(name)
        except UnknownNameError:
            unknown.append(name)
    if unknown:
        shown = ", ".join(repr(n[:80]) for n in unknown[:5])
        raise ConfigError(f"--models: {shown}: neither in the store {store} nor in the zoo; expected a model "
                          "measured there or a name of `python -m repro models`")


def register(sub) -> None:
    p = sub.add_parser("compare", help="our measurements next to the published tables, with differences and intervals",
                       description=__doc__)
    p.add_argument("--store", help="store directory (default: REPRO_STORE_DIR, [paths] store, runs/store)")
    p.add_argument("--data-dir", help="published data directory")
    add_study_option(p)
    p.add_argument("--models", nargs="+", metavar="NAME")
    p.add_argument("--all-columns", action="store_true", help="every stored column (e.g. each ImageNet-C condition)")
    p.add_argument("--tidy", metavar="CSV", help="also write the tidy table (one row per value) to CSV")
    p.set_defaults(handler=_handler)

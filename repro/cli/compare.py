"""``python -m repro compare``: our stored measurements next to each study's published table.

Per model, with the difference, whether the published value lies inside our 95% binomial interval
(``status``) and the per-model agreement (``repro.claims.agreement``: ``agrees`` when the
difference's interval lies inside the implementation margin the study declares for the column,
``differs`` when a Holm-adjusted test over the models of the column excludes 0 and the difference
lies outside it, else ``inconclusive``): agreement, not ``status``, answers whether a measurement
reproduces its published value. ``--json`` writes both. Exit status 1 when a stored record is
corrupt (it is listed with how to remove it; the other rows are still shown)."""

from __future__ import annotations

import argparse

from repro.base.errors import ConfigError, UnknownNameError
from repro.cli.common import add_input_options, command, split_names
from repro.cli.paths import input_dir, output_file, write_json
from repro.measurements.registry import MEASUREMENTS, current_versions


def _handler(args: argparse.Namespace) -> int:
    if args.independent:
        from repro.cli.compare_independent import run

        if args.json:
            output_file(args.json, "--json")
        return run(args)
    from repro.base.output_schemas import VERSIONS
    from repro.base.settings import store_dir
    from repro.base.study import select
    from repro.claims.agreement import study_agreement
    from repro.claims.verdict import AGREEMENT_STATUSES, DIFFERS
    from repro.published.study_data import study_table
    from repro.runner.selection import canonical_names
    from repro.store.compare import as_json, compare, format_rows

    for path, option in ((args.tidy, "--tidy"), (args.json, "--json")):
        if path:
            output_file(path, option)
    store = input_dir(store_dir(args.store), "--store")
    versions = current_versions()
    models = canonical_names(split_names(args.models)) or None
    if models:
        _check_models(models, store)
    published: dict[str, dict[str, float]] = {}
    agreement = []
    for study in select(split_names(args.study)):
        if study.measurements:  # a study that measures nothing has no table to compare with
            table = study_table(study, args.data_dir).values
            for model, row in table.items():
                published.setdefault(model, {}).update(row)
            agreement += study_agreement(
                study, store, table, versions=versions, data_dir=args.data_dir, models=models
            )
    headline = None if args.all_columns else {n: m.columns for n, m in MEASUREMENTS.items()}
    from repro.analysis.chance import column_flag

    rows = compare(
        store,
        published,
        versions=versions,
        headline=headline,
        models=models,
        chance=column_flag,  # a value resting on decisions at chance is flagged beside it
    )
    if args.tidy:
        from repro.store.export import write_tidy_csv

        n = write_tidy_csv(
            store, args.tidy, versions=versions, report=None
        )  # corrupt records: in the table below
        print(f"wrote {n} rows to {args.tidy}")
    counts = {s: sum(a.status == s for a in agreement) for s in AGREEMENT_STATUSES}
    differs = [f"{a.model} x {a.column} ({a.diff:+.4g})" for a in agreement if a.status == DIFFERS]
    if args.json:
        doc = {
            "schema_version": VERSIONS["compare"],  # docs/json-outputs.md
            "store": str(store),
            "rows": [as_json(r) for r in rows],
            "agreement": [a.as_json() for a in agreement],
            "agreement_counts": counts,
            "differs": [
                {"model": a.model, "column": a.column, "diff": a.diff}
                for a in agreement
                if a.status == DIFFERS
            ],
        }
        write_json(args.json, doc)
    if not rows:
        print(
            f"no measurements in {store} (run `python -m repro measure` or `python -m repro store "
            "import` first)"
        )
        return 0
    shown = {}
    for a in agreement:  # the first study's row where two studies publish the same column
        shown.setdefault((a.model, a.column), a.status)
    print(format_rows(rows, shown if agreement else None))
    status_counts: dict[str, int] = {}
    for r in rows:
        status_counts[r.status] = status_counts.get(r.status, 0) + 1
    print(
        "\n"
        + ", ".join(f"{v} {k}" for k, v in sorted(status_counts.items()))
        + f"  (store: {store})"
    )
    if agreement:
        print(
            "agreement with the published values: "
            + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
            + (f"; differs: {', '.join(differs)}" if differs else "")
        )
    if args.json:
        print(f"wrote {args.json}")
    return (
        1 if status_counts.get("corrupt") else 0
    )  # the other rows are shown; a corrupt record fails the command


def _check_models(models: list[str], store) -> None:
    """``--models``: each a model of the store or of the zoo.

    A misspelt name would otherwise compare nothing, silently."""
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
        raise ConfigError(
            f"--models: {shown}: neither in the store {store} nor in the zoo; expected a model "
            "measured there or a name of `python -m repro models`"
        )


def register(sub) -> None:
    p = command(
        sub,
        "compare",
        "our measurements next to the published tables, with differences, intervals "
        "and per-model agreement",
        __doc__,
    )
    add_input_options(
        p,
        store="store directory (default: REPRO_STORE_DIR, [paths] store, runs/store)",
        data_dir="published data directory",
        study=True,
    )
    p.add_argument("--models", nargs="+", metavar="NAME")
    p.add_argument(
        "--all-columns",
        action="store_true",
        help="every stored column (e.g. each ImageNet-C condition)",
    )
    p.add_argument(
        "--tidy", metavar="CSV", help="also write the tidy table (one row per value) to CSV"
    )
    p.add_argument(
        "--json", metavar="PATH", help="also write the rows and the per-model agreement as JSON"
    )
    p.add_argument(
        "--independent",
        action="store_true",
        help="other labs' published values of the study's models beside the study's: per model, "
        "source and column, agrees / differs / inconclusive / other_protocol; and the store's "
        "per-image measurements paired with a source's per-image predictions where both exist",
    )
    p.set_defaults(handler=_handler)

"""``python -m repro claims``: recompute every claim of the selected studies and print the table.

The table: claim, published, recomputed, interval, verdict, P(verdict) (how often a replication on a
new sample of images keeps the verdict), the evidence it rests on, where its inputs came from.
Optionally writes the JSON document; ``--power``: the gate's power (``repro.diagnostics.power``).

``--source`` has the claim gate's meaning (``pytest --source``, repro.pytest_plugin):
``published`` (default) recomputes from the published data alone (a re-analysis: a
``reproduced`` verdict says the claim is consistent with the published data); ``store``
overlays the measurement store's current records (``--store``, default the configured store;
a store that does not exist is an error) and judges each claim on them, a value the store was
to hold and does not making the claim ``incomplete``; ``measure`` first runs the missing jobs
the claims need for the measurements whose dataset is configured, then reads the store (this
one loads models); ``independent`` recomputes each claim with every published input replaced
by another lab's same-protocol value of the same checkpoint where one exists, its verdict beside
the re-analysis verdict, with the evidence ``independent (k of N inputs)`` and the inputs that
moved it (``repro.cli.claims_independent``; exit status 0 once computed). Exit status 1 when a
claim's verdict, or its finding's (``repro.diagnostics.strength``), is not the one its claim file
records.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from repro.base.errors import ConfigError
from repro.cli.common import (
    add_device_option,
    add_input_options,
    add_wide_option,
    command,
    reject_options,
    split_names,
)
from repro.cli.paths import input_dir, output_file, write_json

SOURCES = ("published", "store", "measure", "independent")


def contexts(args: argparse.Namespace) -> list:
    """One claim context per selected study, from ``--source`` (see the module docstring)."""
    from repro.claims.context import published_contexts

    if args.source == "published":
        return published_contexts(split_names(args.study), args.data_dir, args.analysis)
    from repro.base.settings import data_dir as resolve_data_dir
    from repro.base.settings import store_dir
    from repro.base.study import select
    from repro.claims.context import measured_context

    studies = select(split_names(args.study))
    store = input_dir(store_dir(args.store), "--store")
    root = resolve_data_dir(args.data_dir)
    if args.source == "measure":
        from repro.claims.loader import load_claims
        from repro.runner.ensure import ensure_for_claims

        ids = [name for name, claim in load_claims(studies).items()]
        ensure_for_claims(ids, store, device=args.device, data_dir=root)
    if not store.is_dir():
        raise ConfigError(
            f"--store {store}: no such measurement store (run `python -m repro measure` or "
            "`python -m repro store import`, or pass --store)"
        )
    return [
        measured_context(
            s, store, root, args.analysis if s.analysis is not None else None, source=args.source
        )
        for s in studies
    ]


def _census(args: argparse.Namespace) -> int:
    """``claims --census``: every statement of the selected studies' papers and its status.

    With the counts per status (``repro.claims.census``); no claim is computed."""
    from repro.base.study import select
    from repro.claims.census import census_document, format_census, load_censuses

    if args.json:
        output_file(args.json, "--json")
    reject_options(
        {
            "--source": args.source != "published",
            "--store": args.store,
            "--power": args.power,
            "--analysis": args.analysis,
            "--device": args.device,
        },
        "--census",
        "it lists the papers' statements; no claim is computed",
    )
    studies = select(split_names(args.study))
    censuses = load_censuses(studies)
    missing = [s.name for s in studies if s.census is None]
    if not censuses:
        raise ConfigError(
            f"--census: no census for {', '.join(missing)} (a study.toml names its census file "
            "with `census = ...`)"
        )
    print(format_census(censuses))
    if missing:
        print(f"no census: {', '.join(missing)}")
    if args.json:
        print(f"wrote {write_json(args.json, {'census': census_document(censuses)})}")
    return 0


def _handler(args: argparse.Namespace) -> int:
    if args.census:
        return _census(args)
    if args.source == "independent":
        from repro.cli.claims_independent import run

        return run(args)
    if args.json:  # a bad path fails now, not after every claim was computed
        output_file(args.json, "--json")
    if args.store and args.source == "published":
        raise ConfigError(
            "--store: names the measurement store of --source store or measure; with --source "
            "published (the default) nothing is read from it"
        )
    if args.source == "measure":  # runs jobs first: never answered from the cache
        out = _computed(args)
    else:
        out = _cached(args)
    print(out["text"])
    if args.json:
        print(f"wrote {write_json(args.json, out['doc'])}")
    return int(out["status"])


#: the parsed arguments that do not key the command cache: the handler argparse attaches
UNKEYED = frozenset({"func", "handler"})


def _plain(value):
    """An option's value as JSON data (paths as text)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def cache_inputs(args: argparse.Namespace, trees: list[Path], width: int) -> dict:
    """What keys ``claims``' cached result besides what it read.

    Every parsed option (so an option added later can never be answered from an entry made without
    it; of ``--json`` only whether it was given, the document being kept), the terminal width and
    the trees read."""
    options = {k: v for k, v in sorted(vars(args).items()) if k not in UNKEYED}
    return {
        "command": "claims",
        "options": {k: (bool(v) if k == "json" else _plain(v)) for k, v in options.items()},
        "width": width,
        "trees": [str(t) for t in trees],
    }


def _cached(args: argparse.Namespace) -> dict:
    """``_computed``, kept by the digest of everything it read (``repro.base.command_cache``).

    What it read: the options, the data directory and (``--source store``) the store, whose every
    file's signature is part of the check; a warm call renders nothing and fits nothing."""
    from repro.base.command_cache import cached_command
    from repro.base.settings import data_dir as resolve_data_dir
    from repro.base.settings import store_dir
    from repro.base.text_width import terminal_width

    # absolute, links kept: a bad folder (a link loop) is the loader's one-line error, not ours
    trees = [Path(os.path.abspath(resolve_data_dir(args.data_dir)))]
    if args.source == "store":
        trees.append(Path(os.path.abspath(store_dir(args.store))))
    inputs = cache_inputs(args, trees, terminal_width())
    out, _ = cached_command("claims", inputs, trees, lambda: _computed(args))
    return out


def _computed(args: argparse.Namespace) -> dict:
    """The claims of the selected studies, as plain data.

    The printed text, the JSON document (``--json``) and the exit status."""
    from repro.claims import evaluate_all
    from repro.diagnostics.output import claims_document, verdict_counts
    from repro.diagnostics.terminal import claims_table, terminal_width, wrap

    results = [(ctx, evaluate_all(ctx)) for ctx in contexts(args)]
    outcomes = [o for _, os in results for o in os]
    text = [claims_table(results, wide=args.wide)]
    powers = {}
    if (
        args.power
    ):  # the gate's power (repro.diagnostics.power): minutes of CPU the first time, then cached
        from repro.diagnostics.power import format_power, gate_power

        for ctx, os in results:
            powers[ctx.study.name] = gate_power(ctx, os)
            text.append("\n" + format_power(powers[ctx.study.name], ctx.study.name))
    from repro.diagnostics.strength import as_recorded, grade_counts, strength

    ok = sum(as_recorded(o, ctx) for ctx, os in results for o in os)

    grades = grade_counts([strength(o, ctx).grade for ctx, os in results for o in os])
    intervals = "; ".join(
        f"{ctx.study.name}: {ctx.analysis.interval_method}" for ctx, _ in results if ctx.spec
    )
    data = ", ".join(dict.fromkeys(ctx.table.origin for ctx, _ in results))
    summary = (
        f"{ok} of {len(outcomes)} claims as recorded "
        f"({verdict_counts(outcomes)}; by strength: {grades}; source: {args.source}; data: {data}"
        + (f"; intervals: {intervals}" if intervals else "")
        + ")"
    )
    text.append("\n" + (summary if args.wide else "\n".join(wrap(summary, terminal_width()))))
    doc = None
    if args.json:
        doc = claims_document(results) | ({"power": powers} if args.power else {})
        doc = json.loads(json.dumps(doc))  # plain JSON data, as a cached result reads back
    return {"text": "\n".join(text), "doc": doc, "status": 0 if ok == len(outcomes) else 1}


def register(sub) -> None:
    p = command(
        sub,
        "claims",
        "recompute the published claims (from the published data, or on our measurements)",
        __doc__,
    )
    add_input_options(
        p, data_dir="published data directory (default: see README, Data directory)", study=True
    )
    p.add_argument(
        "--source",
        choices=SOURCES,
        default="published",
        help="where per-model values come from: published (default: a re-analysis of the paper's "
        "numbers), store (our stored measurements over the published table), measure (run the "
        "missing jobs first, then as store); as pytest --source; independent: other labs' "
        "same-protocol values of the same checkpoints in place of the published ones where "
        "they exist, the verdict beside the re-analysis verdict",
    )
    add_input_options(
        p,
        store="measurement store of --source store|measure (default: REPRO_STORE_DIR, "
        "[paths] store, runs/store)",
    )
    add_device_option(p, "device of --source measure (default: cuda when available)")
    p.add_argument(
        "--json", metavar="PATH", help="also write the claims and analysis tables as JSON"
    )
    p.add_argument(
        "--power",
        action="store_true",
        help="also the gate's power: per column family the smallest shift of one model's value "
        "(range over the models) and of every model's that per-model agreement and the claims' "
        "checks detect with 80%% power, and the claims it moves (minutes of CPU the first time; "
        "cached)",
    )
    p.add_argument(
        "--census",
        action="store_true",
        help="list every statement of the selected studies' papers (each study's census.toml) "
        "with its status (claim, table, open, not testable here, out of scope) and the counts "
        "per status, instead of computing the claims (with --json: write it)",
    )
    p.add_argument(
        "--analysis",
        metavar="TOML",
        help="an analysis definition (TOML; default: each study's own)",
    )
    add_wide_option(p)
    p.set_defaults(handler=_handler)

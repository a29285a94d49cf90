"""``python -m repro place --model NAME``: where a model lands among each study's population.

On the columns the study declares on its own scale (``[placement]`` of its study.toml): its value,
95% interval and what it rests on (measured in the store, with its count; or external, with its
protocol and source), its rank with the tie range, the range of ranks over its interval, the
percentile; the study's reference rows; the model's values on other scales, not ranked, with the
reason; and, for a model inside the study's population (e.g. a ResNet-50 for Gavrikov & Keuper), its
residual against the study's fits and the study's claims recomputed with it as one more model, else
a note saying why not. Any model of the store, or one with externally known values
(``[models.NAME.external]`` in repro.toml). Only the model's own records are read. Exit status 1
when the model has no value on any study's scale (it says what to measure) or one of its records is
corrupt (named, with how to remove it; the rest is still shown).
"""

from __future__ import annotations

import argparse
import sys

from repro.base.config_check import did_you_mean
from repro.base.errors import ConfigError, UnknownNameError
from repro.cli.common import add_input_options, command, split_names
from repro.cli.paths import input_dir, output_file, write_json


def _handler(args: argparse.Namespace) -> int:
    from repro.base.settings import data_dir, store_dir
    from repro.base.study import select
    from repro.placement.output import as_json, text
    from repro.placement.place import place, placing_studies
    from repro.placement.values import model_values
    from repro.zoo.external import external_values

    if args.json:
        output_file(args.json, "--json")
    store = input_dir(store_dir(args.store), "--store")
    studies = placing_studies(select(split_names(args.study)))
    if not studies:
        raise ConfigError(
            "--study: none of the selected studies declares a [placement] (docs/howto/add-study.md)"
        )
    ext = external_values()
    model = _model_name(args.model, store, ext)
    values = model_values(model, store, ext)
    root = data_dir(args.data_dir)
    results = [place(s, values, root, references=True) for s in studies]
    print("\n\n".join(text(r) for r in results))
    if args.json:
        print(f"\nwrote {write_json(args.json, [as_json(r) for r in results])}")
    corrupt = values.corrupt()
    for measurement, why in sorted(corrupt.items()):
        print(f"{model} x {measurement}: {why}", file=sys.stderr)
    if corrupt:
        return 1  # what could be placed is shown; a corrupt record fails the command (as compare)
    if not any(r.placed for r in results):
        columns = sorted({c for s in studies for col in s.placement.columns for c in col.values})  # type: ignore[union-attr]
        print(
            f"\n{model}: no value on any study's scale in {store} (columns {', '.join(columns)}); "
            "measure it, e.g. "
            f"`python -m repro measure --models {model} --measurements shape_bias`, or give a "
            "known value in "
            "repro.toml [models.NAME.external]",
            file=sys.stderr,
        )
        return 1
    return 0


def _model_name(name: str, store, external) -> str:
    """The canonical name of ``name``: a model of the store, of the zoo, or with external values.

    Else a ConfigError with the closest names."""
    from repro.placement.values import store_models
    from repro.zoo.specs import canonical_name, registry

    if not name.strip():
        raise ConfigError(
            "--model: no name given; expected a model of the store, of the zoo "
            "(`python -m repro models`) or with external values"
        )
    stored = store_models(store)
    canonical = canonical_name(name)
    if canonical in stored or canonical in external:
        return canonical
    try:
        registry().get(canonical)
        return canonical
    except UnknownNameError:
        known = [*stored, *external, *registry()]
        hint = did_you_mean(name, known) or "; see `python -m repro models` for the zoo's names"
        raise ConfigError(
            f"--model {name!r}: not a model of the store {store}, of the zoo or of the external "
            f"values{hint}"
        ) from None


def register(sub) -> None:
    p = command(
        sub,
        "place",
        "where a model lands among each study's population, on the study's own scale",
        __doc__,
    )
    p.add_argument(
        "--model",
        required=True,
        metavar="NAME",
        help="a model of the store, of the zoo, or with external values",
    )
    add_input_options(
        p,
        store="store directory (default: REPRO_STORE_DIR, [paths] store, runs/store)",
        study=True,
        data_dir="published data directory (default: see README, Data directory)",
    )
    p.add_argument("--json", metavar="FILE", help="also write the placements as JSON")
    p.set_defaults(handler=_handler)

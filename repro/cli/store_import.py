"""``python -m repro store import TIDY.csv [--store DIR]``: bring your own measurements.

Reads the tidy table ``python -m repro compare --tidy`` writes (one row per model x measurement x
condition or column, with counts and provenance) and stores one job record per model x measurement,
marked imported (the file's name and sha256 kept): an imported value has counts and provenance and
counts as measured evidence (provenance label ``imported``). Every row is checked first; a bad row
(no mini/partial provenance, an unknown model, measurement or column, k > n, a negative or NaN
count, a value that disagrees with k/n, a duplicate, a job already in the store, a job without
counts) is one error line naming the row, exit status 2, and nothing is written. Rows of a failed
job or of another measurement version are skipped, and listed."""

from __future__ import annotations

import argparse

from repro.base.errors import UnknownNameError
from repro.cli.common import add_input_options, command
from repro.cli.paths import output_dir
from repro.measurements.registry import MEASUREMENTS, measurements_for_columns


def _known_model(name: str) -> bool:
    from repro.zoo import get_spec

    try:
        get_spec(name)
    except UnknownNameError:
        return False
    return True


def _measurements() -> dict:
    """{measurement: is-this-one-of-its-columns} for every registered measurement."""

    def produces(name: str):
        return lambda column: bool(column) and name in measurements_for_columns([column])

    return {name: produces(name) for name in MEASUREMENTS.names()}


def _handler(args: argparse.Namespace) -> int:
    from repro.base.settings import store_dir
    from repro.store.importer import import_tidy

    store = output_dir(store_dir(args.store), "--store")
    done = import_tidy(args.csv, store, measurements=_measurements(), known_model=_known_model)
    for line in done.skipped:
        print(f"skipped: {line}")
    print(
        f"imported {len(done.records)} record(s) from {args.csv} (sha256 {done.sha256}) into "
        f"{store}"
    )
    return 0


def register(sub) -> None:
    p = command(
        sub, "import", "import measurements from a tidy CSV (what `compare --tidy` writes)", __doc__
    )
    p.add_argument("csv", metavar="TIDY.csv", help="the tidy table to import")
    add_input_options(p, store="target store (default: REPRO_STORE_DIR, [paths] store, runs/store)")
    p.set_defaults(handler=_handler)

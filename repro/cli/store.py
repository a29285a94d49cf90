"""``python -m repro store <what>``: the measurement store (bring your own measurements)."""

from repro.cli._groups import register_group

MODULES = [
    "repro.cli.store_import",  # import
]


def register(subparsers) -> None:
    register_group(
        subparsers, "store", "the measurement store: import measurements made elsewhere", MODULES
    )

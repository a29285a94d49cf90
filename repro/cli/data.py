"""``python -m repro data <what>``: the published data and generated mini datasets."""

from repro.cli._groups import register_group

MODULES = [
    "repro.cli.data_fetch",  # fetch, verify
    "repro.cli.data_mini",  # make-mini
]


def register(subparsers) -> None:
    register_group(
        subparsers, "data", "published reference data and generated mini datasets", MODULES
    )

"""``python -m repro score <what>``: scoring of stored decisions / predictions (no model)."""

from repro.cli._groups import register_group

MODULES = [
    "repro.cli.score_biases",  # shape-bias, critical-band
    "repro.cli.score_generalization",  # benchmark, imagenet-x
]


def register(subparsers) -> None:
    register_group(
        subparsers, "score", "score stored decisions or predictions (pure maths, no model)", MODULES
    )

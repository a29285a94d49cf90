"""Runner: the closing lines of ``python -m repro plan``, which total answers which question.

The command prints several totals for one precision (for bfloat16: the device hours of the first
table, the wall hours model-major and data-major of the second, and with ``--confidence`` the
wall hours on the planned subsets); each answers another question, and these lines say which,
with the numbers printed above.
"""

from __future__ import annotations

from collections.abc import Mapping

#: the marker of the plan's columns that count PGD under the early-stop variant
EARLY_STOP = "PGD-ES"


def _listed(values: Mapping[str, float]) -> str:
    return ", ".join(f"{v:.2f} {k}" for k, v in values.items())


def which_total(
    device: Mapping[str, float],
    orders: Mapping[tuple[str, str], float],
    *,
    models: int,
    gpus: int,
    subset: str | None = None,
) -> str:
    """The plan's note on which total answers which question.

    ``device``: the first table's totals per column (device hours of every model); ``orders``: the
    second table's per (column, order) on ``gpus`` devices; ``subset``: the second table's column of
    the planned subsets, when there is one."""
    full = {f"{o} {t}": h for (t, o), h in orders.items() if t != subset}
    lines = [
        "which total answers which question:",
        f"  how much computation: the first table's total ({_listed(device)}): device hours of "
        f"the {models} models' forward and backward passes at the device rates above, nothing "
        "else (no decoding; PGD in each column's precision)",
        f"  how long a run takes: the second table's total ({_listed(full)}): wall hours of "
        f"`measure` on {gpus} device(s) in each execution order (`--order`, data-major by "
        "default), decoding and the crop cache counted, PGD in float32",
    ]
    early = [t for t in dict.fromkeys(t for t, _ in orders) if EARLY_STOP in t]
    if early:
        lines.append(
            f"  the {', '.join(early)} column(s): the same with PGD stopped at each image's first "
            "misclassified iterate (`measure --pgd-early-stop`, a protocol variant: its values are "
            "not the study's PGD-40 column)"
        )
    if subset is not None:
        part = {f"{o} {t}": h for (t, o), h in orders.items() if t == subset}
        lines.append(
            f"  how long a run on the planned subsets takes: its columns' total ({_listed(part)}): "
            "the same, each measurement reading only the subset planned above for the confidence "
            "asked"
        )
    lines.append("  the goal lines compare the second table's totals with the suite's target")
    return "\n".join(lines)

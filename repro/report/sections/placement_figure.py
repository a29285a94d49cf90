"""The strip figure of the report's section "Placement", for one placement column.

The population's values are grey dots (a fixed vertical spread so that close values stay
visible), beside the study's reference rows and each placed model with its 95% interval; an
external value is a hollow marker labelled with its protocol; a value that rests on decisions
at chance (``repro.analysis.chance``) is a grey cross labelled ``AT CHANCE``, never the placed
colour."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

PLACED_COLOR = "tab:red"
CHANCE_COLOR = "dimgray"
CHANCE_LABEL = "AT CHANCE"


def strip(
    column: Any,
    population: Any,
    rows: Sequence[tuple[str, Any]],
    references: Sequence[Any],
    chance: Sequence[bool] = (),
):
    """The strip figure of one placement column.

    ``rows``: (model, repro.placement.values.Value); ``references``:
    repro.placement.reference.Reference; ``chance``: per row, whether its value rests on
    decisions at chance (default: none)."""
    from matplotlib.figure import Figure

    flags = list(chance) + [False] * (len(rows) - len(chance))
    labels = [
        (f"{m}\n({v.label})" if v.kind != "measured" else m)
        + (f"\n({CHANCE_LABEL})" if low else "")
        for (m, v), low in zip(rows, flags, strict=True)
    ]
    labels += [r.label for r in references] + [population.label]
    fig = Figure(figsize=(8.0, 0.55 * len(labels) + 1.4), layout="constrained")
    ax = fig.subplots()
    y = {label: len(labels) - 1 - i for i, label in enumerate(labels)}
    values = sorted(v for v in population.values.values() if v is not None)
    for i, v in enumerate(values):
        ax.scatter(
            v,
            y[population.label] + ((i % 5) - 2) * 0.09,
            s=16,
            color="grey",
            linewidths=0,
            alpha=0.85,
        )

    def bar(
        value: float, interval: Any, row: float, color: str, marker: str, hollow: bool = False
    ) -> None:
        err = None if interval is None else [[value - interval[0]], [interval[1] - value]]
        ax.errorbar(
            value,
            row,
            xerr=err,
            fmt=marker,
            color=color,
            markersize=7,
            capsize=3,
            markeredgecolor=color if hollow else "black",
            markerfacecolor="none" if hollow else color,
            markeredgewidth=1.0 if hollow else 0.5,
        )

    for ref in references:
        bar(
            ref.values[column.column],
            ref.intervals.get(column.column),
            y[ref.label],
            "dimgray",
            "D",
        )
    for (_, v), label, low in zip(rows, labels, flags, strict=False):
        bar(
            v.value,
            v.interval,
            y[label],
            CHANCE_COLOR if low else PLACED_COLOR,
            "X" if low else "*" if v.kind == "measured" else "o",
            hollow=v.kind != "measured",
        )
    ax.set_yticks([y[r] for r in labels], labels, fontsize=8)
    ax.set_ylim(-0.7, len(labels) - 0.4)
    ax.set_xlabel(f"{column.label} (bars: 95% interval; rank 1 = the largest)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", linewidth=0.3)
    return fig

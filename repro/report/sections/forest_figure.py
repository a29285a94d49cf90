"""The forest plot that follows REPORT.md's summary: the claims' effects on [-1, 1], one row each.

It draws every claim whose statistic is a tested effect on [-1, 1] (a rank correlation, tau,
Kendall's W, R^2, a share of models; the summary section picks them), one row each: its
recomputed value with its one interval (``repro.diagnostics.statements.table_interval``: solid
for a 95% interval, dashed for a leave-one-cluster-out range), the published value as a hollow
diamond where the paper prints one, and the strength grade as the colour. Other claims (a
null's smallest p, a count, a bandwidth ratio, a quadratic coefficient) are named in the
caption, never drawn on this axis."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

FIGURE = "claims_forest.png"
#: the colour of each grade (repro.diagnostics.strength.GRADES)
GRADE_COLORS = {
    "robust": "tab:green",
    "fragile": "tab:orange",
    "unexamined": "tab:gray",
    "not supported": "tab:red",
    "untestable": "tab:purple",
    "derived": "tab:brown",
    "not checked": "black",
}


@dataclass(frozen=True)
class Row:
    claim: str
    value: float
    interval: tuple[float, float] | None
    range_kind: bool  # the interval is a leave-one-cluster-out range (dashed)
    published: float | None
    grade: str


def on_scale(value: float, interval: tuple[float, float] | None, published: float | None) -> bool:
    """Whether a claim can be drawn on the common [-1, 1] axis."""
    values = [value, *(interval or ()), *(() if published is None else (published,))]
    return all(math.isfinite(v) and -1.0 <= v <= 1.0 for v in values)


def forest(rows: Sequence[Row]):
    """The figure: one row per claim, top to bottom in report order."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=(8.0, 0.28 * len(rows) + 1.6), layout="constrained")
    ax = fig.subplots()
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows, strict=True):
        color = GRADE_COLORS[r.grade]
        if r.interval is not None:
            ax.plot(r.interval, [y, y], color=color, lw=2, ls="--" if r.range_kind else "-")
        ax.plot([r.value], [y], "o", color=color, ms=5)
        if r.published is not None:
            ax.plot([r.published], [y], "D", mfc="none", mec="black", ms=6)
    ax.axvline(0.0, color="0.6", lw=0.8)
    ax.set_yticks(ys, [r.claim for r in rows], fontsize=6)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("tested effect on [-1, 1] (rho, tau, W, R^2, share of models)", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    shown = [g for g in GRADE_COLORS if any(r.grade == g for r in rows)]
    handles = [Line2D([], [], color=GRADE_COLORS[g], marker="o", lw=2, label=g) for g in shown]
    handles += [
        Line2D([], [], color="black", lw=2, label="95% interval"),
        Line2D([], [], color="black", lw=2, ls="--", label="leave-one-cluster-out range"),
        Line2D([], [], color="black", marker="D", mfc="none", lw=0, label="published"),
    ]
    ax.legend(handles=handles, fontsize=6, loc="lower left", bbox_to_anchor=(1.01, 0.0))
    return fig

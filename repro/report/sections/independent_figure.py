"""The figure of the report's section "What other labs measured", one panel per study column.

Small multiples: the study's published value (x) against another lab's value of the same
checkpoint (y), the identity line dashed, the marker by the pair's label (agrees / differs /
inconclusive / other protocol / name collision) and the largest differences of each panel
labelled."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

FIGURE = "independent_vs_published.png"
TABLE = "independent_vs_published.csv"
LABELLED = 3  # the compared points of largest |difference| labelled in each panel
COLUMNS = 4  # panels per row
# label: (marker, colour, hollow, legend text)
STYLE = {
    "agrees": ("o", "tab:green", False, "agrees (same protocol)"),
    "differs": ("o", "tab:red", False, "differs beyond the margin"),
    "inconclusive": ("o", "tab:orange", False, "inconclusive"),
    "other_protocol": ("^", "tab:blue", True, "other protocol (ranking only)"),
    "not_same": ("x", "dimgray", False, "name collision (other weights)"),
}


def figure_rows(rows: Sequence[Any]) -> list[Any]:
    """The rows drawn: every pair with both values, the cell families left out.

    A cell family is a column map row over many columns, e.g. ImageNet-C's corruption x severity
    cells."""
    return [
        r
        for r in rows
        if "<" not in r.entry
        and r.published is not None
        and r.difference is not None
        and not math.isnan(r.published)
    ]


def _marker(marker: str, colour: str, hollow: bool) -> dict[str, Any]:
    if marker == "x":  # an unfilled marker: one colour
        return {"marker": marker, "color": colour, "linewidths": 0.8}
    face = "none" if hollow else colour
    return {"marker": marker, "facecolors": face, "edgecolors": colour, "linewidths": 0.8}


def _short(name: str, width: int = 32) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def _outliers(rows: Sequence[Any]) -> list[Any]:
    """The compared pairs of largest |difference|.

    A name collision is other weights: drawn, and named in the section's table, not labelled
    here."""
    ranked = sorted(
        (r for r in rows if r.difference != 0.0 and r.label != "not_same"),
        key=lambda r: (-abs(r.difference), r.study_model, r.source),
    )
    return ranked[:LABELLED]


def figure(rows: Sequence[Any]):
    """The figure: one panel per column of ``rows``, in first-seen order.

    ``rows``: ``repro.diagnostics.independent.Row`` objects."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    columns: dict[str, list[Any]] = {}
    for r in rows:
        columns.setdefault(r.column, []).append(r)
    n = max(1, len(columns))
    ncols = min(COLUMNS, n)
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(3.1 * ncols, 3.0 * nrows + 0.8), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    for ax, (column, rs) in zip(axes, columns.items(), strict=False):
        values = [v for r in rs for v in (r.published, r.independent)]
        lo, hi = min(values), max(values)
        pad = 0.05 * (hi - lo or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "--", color="grey", linewidth=0.8)
        for label, (marker, colour, hollow, _) in STYLE.items():
            pts = [r for r in rs if r.label == label]
            if not pts:
                continue
            ax.scatter(
                [r.published for r in pts],
                [r.independent for r in pts],
                s=18,
                **_marker(marker, colour, hollow),
            )
        for i, r in enumerate(_outliers(rs)):
            ax.annotate(  # stacked in the panel's lower right corner, a line to the point
                f"{_short(r.study_model)} ({r.source}, {r.difference:+.3g})",
                (r.published, r.independent),
                xytext=(0.98, 0.04 + 0.07 * i),
                textcoords="axes fraction",
                ha="right",
                fontsize=5.5,
                arrowprops={"arrowstyle": "-", "linewidth": 0.4, "color": "black"},
            )
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(lo - pad, hi + pad)
        compared = {r.study_model for r in rs if r.label != "not_same"}
        ax.set_title(f"{column} ({len(compared)} models)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(linewidth=0.3)
    fig.supxlabel("published (the study's table)", fontsize=8)
    fig.supylabel("another lab's value of the same checkpoint", fontsize=8)
    handles = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker=marker,
            markersize=5,
            color=colour,
            markerfacecolor="none" if hollow else colour,
            label=text,
        )
        for marker, colour, hollow, text in STYLE.values()
    ]
    fig.legend(handles=handles, loc="outside upper center", ncols=len(STYLE), fontsize=7)
    return fig

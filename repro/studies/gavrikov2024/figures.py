"""Report section: each bias against each generalization category as scatter plots.

These are the paper's main figures: one panel per (bias, category) over the population,
adversarially trained models marked with their quadratic fit, and models measured here overlaid.

Overlay hook: ``scatter_grid(analysis, overlays)`` draws any ``Overlay`` (labelled per-model
points, by the study's column names) over the published models. The section collects them
from every provider in ``OVERLAYS`` (lazy ``"module:function"`` references, each
``(ReportContext) -> list[Overlay]``): today the models of the measurement store of a
``reproduce`` run; a section of other measured models (e.g. the real-stimuli models) adds its
own provider to the list (``placement:overlay``: the models the report places, measured values
and externally known ones, each external value labelled with its protocol; a model with the bias
but no category accuracy is a dotted vertical line at its bias).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from repro.base.registry import resolve_lazy
from repro.measurements.registry import current_versions
from repro.published.study_data import study_table
from repro.store.export import wide_table

MARKED_GROUP = "at"  # the group drawn as its own marker, with its quadratic fit
OVERLAYS: list[str] = [
    "repro.studies.gavrikov2024.figures:store_overlay",
    "repro.studies.gavrikov2024.placement:overlay",
]


@dataclass(frozen=True)
class Overlay:
    """Extra labelled points drawn over the published models.

    ``rows`` maps a model to its values by the study's column names (e.g. ``{"shape-bias": 0.31,
    "top1_acc/imagenet": 71.2, ...}``). A panel draws the models that have every column of its bias
    and its category."""

    label: str
    rows: Mapping[str, Mapping[str, float]]
    marker: str = "*"
    color: str = "tab:red"


def _mean(row: Mapping[str, float], columns: Sequence[str]) -> float | None:
    vals = [row.get(c) for c in columns]
    if any(v is None or not np.isfinite(v) for v in vals):
        return None
    return float(np.mean(vals))  # type: ignore[arg-type]


def overlay_xy(
    overlay: Overlay, x_columns: Sequence[str], y_columns: Sequence[str]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The overlay's models with every one of the columns, and their x and y.

    Each of x and y is the mean of its columns (``x_columns``, ``y_columns``), as a bias and a
    category are."""
    names, xs, ys = [], [], []
    for model, row in overlay.rows.items():
        x, y = _mean(row, x_columns), _mean(row, y_columns)
        if x is not None and y is not None:
            names.append(model)
            xs.append(x)
            ys.append(y)
    return names, np.array(xs), np.array(ys)


def overlay_x_only(
    overlay: Overlay, x_columns: Sequence[str], y_columns: Sequence[str]
) -> list[float]:
    """The x of the overlay's models that have the bias but not the category.

    They are drawn as dotted vertical lines: where the model lies on the bias axis, with no accuracy
    to place it by."""
    return [
        x
        for row in overlay.rows.values()
        if (x := _mean(row, x_columns)) is not None and _mean(row, y_columns) is None
    ]


def fitted_panels(outcomes: Sequence[Any]) -> set[tuple[str, str]]:
    """The (bias, category) panels whose claim tests a quadratic (a ``curvilinear`` statistic).

    These are the only panels that draw the marked group's quadratic fit."""
    out: set[tuple[str, str]] = set()
    for o in outcomes:
        if o.claim.statistic.endswith(":curvilinear"):
            out |= {(o.claim.params["bias"], c) for c in o.claim.params["categories"]}
    return out


def scatter_grid(
    analysis: Any, overlays: Sequence[Overlay] = (), fitted: set[tuple[str, str]] | None = None
):
    """The (biases x categories) grid of scatter plots of ``analysis`` (an Analysis).

    ``overlays`` are drawn on top; the marked group's quadratic fit only on the ``fitted`` panels
    (None: every panel)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    spec = analysis.spec
    biases, cats = list(spec.biases), list(spec.categories)
    models = analysis.population
    marked = set(analysis.groups.get(MARKED_GROUP, []))
    is_marked = np.array([m in marked for m in models])
    fig = Figure(figsize=(3.1 * len(cats), 2.45 * len(biases) + 0.6), layout="constrained")
    axes = fig.subplots(len(biases), len(cats), squeeze=False)
    for i, b in enumerate(biases):
        x = analysis.bias(b, models)
        for j, c in enumerate(cats):
            ax = axes[i][j]
            y = analysis.category(c, models)
            ax.scatter(
                x[~is_marked],
                y[~is_marked],
                s=14,
                marker="o",
                color="tab:blue",
                alpha=0.8,
                linewidths=0,
            )
            if is_marked.sum() >= 3:
                xm, ym = x[is_marked], y[is_marked]
                ax.scatter(xm, ym, s=18, marker="^", color="tab:orange", linewidths=0)
                if fitted is None or (b, c) in fitted:
                    coef = np.polyfit(xm, ym, 2)
                    xs = np.linspace(xm.min(), xm.max(), 60)
                    ax.plot(xs, np.polyval(coef, xs), color="tab:orange", linewidth=1.0)
            for ov in overlays:
                names, ox, oy = overlay_xy(ov, spec.biases[b].columns, spec.categories[c].columns)
                if names:
                    ax.scatter(
                        ox,
                        oy,
                        s=60,
                        marker=ov.marker,
                        color=ov.color,
                        edgecolors="black",
                        linewidths=0.5,
                    )
                for x_only in overlay_x_only(
                    ov, spec.biases[b].columns, spec.categories[c].columns
                ):
                    ax.axvline(x_only, color=ov.color, linestyle=":", linewidth=1.0)
            corr = analysis.cell(b, c, "total").corr if "total" in analysis.groups else None
            if corr is not None:
                ax.text(
                    0.02,
                    0.97,
                    f"rho {corr.rho:+.2f}, p {corr.p:.1g}",
                    transform=ax.transAxes,
                    fontsize=7,
                    va="top",
                    ha="left",
                    bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0, "pad": 1},
                )
            ax.tick_params(labelsize=7)
            ax.set_xlabel(spec.biases[b].label, fontsize=7)
            ax.set_ylabel(f"{spec.categories[c].label} accuracy (%)", fontsize=7)
    marked_label = spec.groups[MARKED_GROUP].label if MARKED_GROUP in spec.groups else MARKED_GROUP
    handles = [
        Line2D([], [], linestyle="", marker="o", color="tab:blue", label="other models"),
        Line2D(
            [],
            [],
            linestyle="-",
            marker="^",
            color="tab:orange",
            label=f"{marked_label} models"
            + (
                " and their quadratic fit"
                if fitted is None
                else " (quadratic fit where a claim tests it)"
            ),
        ),
    ]
    handles += [
        Line2D(
            [],
            [],
            linestyle="",
            marker=ov.marker,
            color=ov.color,
            markeredgecolor="black",
            markersize=9,
            label=ov.label,
        )
        for ov in overlays
    ]
    fig.legend(
        handles=handles, loc="outside upper center", ncol=len(handles), fontsize=8, frameon=False
    )
    return fig


def store_overlay(ctx) -> list[Overlay]:
    """The models of each of this study's measuring plans (a ``reproduce`` run) from its store.

    They are in the study's column layout (the published variant of each quirk): study models (and,
    in a mini run, the tiny ones); other models are the placement overlay's."""
    out = []
    for plan in ctx.plans:
        if plan.study.name != ctx.claims.study.name or not plan.store.exists():
            continue
        rows = wide_table(
            plan.store, versions=current_versions(plan.measurements), allow_mini=plan.mini
        )
        # the plan's own models only (the store may hold others); models that are not study models
        # are drawn by the placement overlay, with the evidence of each value
        population = set() if plan.mini else set(ctx.claims.population)
        rows = {
            m: r for m, r in rows.items() if m in plan.models and (plan.mini or m in population)
        }
        if rows:
            label = (
                "measured here (mini run: NOT evidence)" if plan.mini else "measured here (store)"
            )
            out.append(Overlay(label, rows))
    return out


def overlays(ctx) -> list[Overlay]:
    """Every provider's overlays (``OVERLAYS``), in order."""
    out: list[Overlay] = []
    for ref in OVERLAYS:
        out += resolve_lazy(ref)(ctx)  # type: ignore[operator]
    return out


def published_analysis(ctx) -> Any:
    """The analysis of the study's published table.

    It is the base of the figure even when the claims ran on measured inputs, so measured models
    show next to their published values."""
    claims = ctx.claims
    if not claims.measured:
        return claims.analysis
    from repro.analysis.analysis import Analysis

    return Analysis(
        claims.spec, study_table(claims.study, claims.data_dir), claims.model_categories
    )


def render(ctx) -> str:
    analysis = published_analysis(ctx)
    spec = analysis.spec
    extra = overlays(ctx)
    fitted = fitted_panels(ctx.outcomes)
    link = ctx.save_figure(scatter_grid(analysis, extra, fitted), "bias_vs_category_scatter.png")
    marked = spec.groups[MARKED_GROUP].label if MARKED_GROUP in spec.groups else MARKED_GROUP
    n_marked = len(analysis.groups.get(MARKED_GROUP, []))
    over = "; ".join(f"{ov.label}: {len(ov.rows)} model(s)" for ov in extra)
    alt = (
        f"Scatter plots of each of the {len(spec.biases)} biases (rows) against each of the "
        f"{len(spec.categories)} generalization categories (columns) for the "
        f"{len(analysis.population)} published models; the {n_marked} {marked} models are orange "
        f"triangles, with their quadratic fit on the {len(fitted)} panels whose claim tests it "
        f"({', '.join(f'{b} x {c}' for b, c in sorted(fitted))}), the others blue dots; each panel "
        "gives the Total Spearman rho and p" + (f"; overlaid: {over}" if over else "") + "."
    )
    lines = [
        "## Biases against generalization",
        "",
        f"Each bias (x) against each category's accuracy (y) over the {len(analysis.population)} "
        f"models of the published table; {marked} models (triangles), with their least-squares "
        "quadratic fit only on the panels whose claim tests one (the paper's curvilinear AT "
        "claim; elsewhere a fitted curve would suggest a finding no claim checks). "
        + (
            f"Overlaid: {over}."
            if over
            else "No measured models to overlay (a `reproduce` run with a "
            "measurement store overlays its models here)."
        ),
        "",
        f"![{alt}]({link})",
    ]
    return "\n".join(lines) + "\n"

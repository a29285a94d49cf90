"""Report section: the bias x category Spearman table per group and its heat map.

The table is masked as in the paper. The same heat map is masked after Holm and Benjamini-Hochberg
correction over the whole table, with which of the paper's significant cells survive each
correction.

An undefined cell (NaN rho or p: a constant column in the group) is drawn hatched in grey and
written "undefined", never as the 0 of a non-significant cell; the legend names both.
"""

from __future__ import annotations

import numpy as np

from repro.analysis.multiple import METHODS

METHOD_LABEL = {
    "holm": "Holm (family-wise error)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
}
UNDEFINED_COLOR = "#bdbdbd"  # grey, outside the red-blue scale of rho
UNDEFINED_HATCH = "xx"

# the state each heat-map cell is drawn in (``cell_states``)
SIGNIFICANT, NOT_SIGNIFICANT, UNDEFINED_CELL = "significant", "not significant", "undefined"


def cell_states(grid: np.ndarray) -> np.ndarray:
    """The state of each cell of a masked grid: undefined, not significant or significant.

    The grid holds rho where significant, 0 where not and NaN where undefined. ``undefined`` cells
    are drawn hatched grey with 'undef.', ``not significant`` ones white with '0', ``significant``
    ones in the colour of rho. The panels are drawn from this matrix, so an undefined cell can never
    be drawn as a non-significant one."""
    grid = np.asarray(grid, dtype=float)
    out = np.full(grid.shape, SIGNIFICANT, dtype=object)
    out[grid == 0] = NOT_SIGNIFICANT
    out[np.isnan(grid)] = UNDEFINED_CELL
    return out


def masked_grid(study, group: str) -> np.ndarray:
    """The heat map of ``group``: ``study.masked`` of each (bias, category) cell."""
    return np.array(
        [
            [study.masked(study.cell(b, c, group)) for c in study.spec.categories]
            for b in study.spec.biases
        ],
        dtype=float,
    )


def corrected_grid(study, group: str, method: str) -> np.ndarray:
    """The heat map of ``group`` after the ``method`` correction (``corrected_cell``)."""
    return np.array(
        [
            [corrected_cell(study, (b, c, group), method) for c in study.spec.categories]
            for b in study.spec.biases
        ],
        dtype=float,
    )


def _panel(ax, grid: np.ndarray, spec, cats: list[str], title: str):
    """One heat map panel; undefined cells hatched grey and labelled, not coloured as 0."""
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle

    states = cell_states(grid)
    cmap = colormaps["RdBu_r"].with_extremes(bad=UNDEFINED_COLOR)
    image = ax.imshow(
        np.ma.masked_where(states == UNDEFINED_CELL, grid),
        cmap=cmap,
        vmin=-1,
        vmax=1,
        aspect="auto",
    )
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            v = grid[i, j]
            if states[i, j] == UNDEFINED_CELL:
                ax.add_patch(
                    Rectangle(
                        (j - 0.5, i - 0.5),
                        1,
                        1,
                        facecolor=UNDEFINED_COLOR,
                        hatch=UNDEFINED_HATCH,
                        edgecolor="dimgray",
                        linewidth=0,
                    )
                )
                ax.text(j, i, "undef.", ha="center", va="center", fontsize=7, color="black")
                continue
            ax.text(
                j,
                i,
                "0" if states[i, j] == NOT_SIGNIFICANT else f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if abs(v) > 0.6 else "black",
            )
    ax.set_xticks(
        range(len(cats)),
        [spec.categories[c].label for c in cats],
        rotation=30,
        ha="right",
        fontsize=8,
    )
    ax.set_title(title, fontsize=9)
    return image


def _legend(fig, zero: str) -> None:
    """What a 0 cell and a hatched cell mean (below the panels)."""
    from matplotlib.patches import Patch

    fig.legend(
        handles=[
            Patch(facecolor="white", edgecolor="dimgray", label=f"0: {zero}"),
            Patch(
                facecolor=UNDEFINED_COLOR,
                hatch=UNDEFINED_HATCH,
                edgecolor="dimgray",
                label="undef.: undefined correlation (a constant column), not tested",
            ),
        ],
        loc="outside lower center",
        ncols=2,
        fontsize=8,
        frameon=False,
    )


def corrected_cell(study, key: tuple[str, str, str], method: str) -> float:
    """rho where the ``method``-adjusted p is below alpha, 0 where not, NaN where undefined."""
    rho, p_adj = study.cell(*key).corr.rho, study.adjusted_p[key][method]
    if np.isnan(rho) or np.isnan(p_adj):
        return float("nan")
    return rho if p_adj < study.spec.alpha else 0.0


def _figure(study):
    from matplotlib.figure import Figure

    spec = study.spec
    biases, cats, groups = list(spec.biases), list(spec.categories), list(spec.groups)
    fig = Figure(figsize=(3.0 * len(groups) + 3.6, 0.55 * len(biases) + 1.6), layout="constrained")
    axes = fig.subplots(1, len(groups), sharey=True, squeeze=False)[0]
    images = []
    for ax, g in zip(axes, groups, strict=True):
        grid = masked_grid(study, g)
        images.append(
            _panel(ax, grid, spec, cats, f"{spec.groups[g].label} (n={len(study.groups[g])})")
        )
    axes[0].set_yticks(range(len(biases)), [spec.biases[b].label for b in biases], fontsize=8)
    fig.colorbar(
        images[0], ax=list(axes), shrink=0.8, label=f"Spearman rho (0 if p >= {spec.alpha:g})"
    )
    _legend(fig, f"p >= {spec.alpha:g} (not significant)")
    return fig


def corrected_figure(study):
    """The corrected heat maps: one row per correction (Holm, BH), one column per group.

    Each cell is rho, 0 where the adjusted p >= alpha."""
    from matplotlib.figure import Figure

    spec = study.spec
    biases, cats, groups = list(spec.biases), list(spec.categories), list(spec.groups)
    fig = Figure(
        figsize=(3.0 * len(groups) + 3.6, 2 * (0.55 * len(biases) + 1.2)), layout="constrained"
    )
    axes = fig.subplots(len(METHODS), len(groups), sharey=True, sharex=True, squeeze=False)
    images = []
    for r, method in enumerate(METHODS):
        for ax, g in zip(axes[r], groups, strict=True):
            grid = corrected_grid(study, g, method)
            images.append(
                _panel(
                    ax,
                    grid,
                    spec,
                    cats,
                    f"{spec.groups[g].label}: {'Holm' if method == 'holm' else 'BH'}",
                )
            )
        axes[r][0].set_yticks(
            range(len(biases)), [spec.biases[b].label for b in biases], fontsize=8
        )
    fig.colorbar(
        images[0],
        ax=axes.ravel().tolist(),
        shrink=0.6,
        label=f"Spearman rho (0 if adjusted p >= {spec.alpha:g})",
    )
    _legend(fig, f"adjusted p >= {spec.alpha:g} (does not survive)")
    return fig


def survival_rows(study) -> list[dict[str, object]]:
    """The paper's significant cells (p < alpha before correction), with their adjusted p."""
    adj = study.adjusted_p
    out = []
    for c in study.bias_vs_category():
        if c.corr.p < study.spec.alpha:
            a = adj[(c.bias, c.category, c.group)]
            out.append(
                {
                    "bias": c.bias,
                    "category": c.category,
                    "group": c.group,
                    "rho": c.corr.rho,
                    "p": c.corr.p,
                    **{f"p_{m}": a[m] for m in METHODS},
                }
            )
    return out


def _survival(study, link: str) -> list[str]:
    spec = study.spec
    rows = survival_rows(study)
    n_cells = len(study.bias_vs_category())
    kept = {m: sum(r[f"p_{m}"] < spec.alpha for r in rows) for m in METHODS}
    lines = [
        "### Which significant cells survive a multiple-comparison correction",
        "",
        f"The paper masks each of the {n_cells} cells at p < {spec.alpha:g} without correction: "
        f"{len(rows)} cells are significant so. Adjusted over the whole table of {n_cells} tests, "
        f"{kept['holm']} survive {METHOD_LABEL['holm']} and {kept['bh']} survive "
        f"{METHOD_LABEL['bh']}. Holm holds under any dependence between the tests; BH assumes "
        "independent or positively dependent tests (the groups overlap: Total holds AT and "
        "Other). `python -m repro claims --json` gives `p_holm` and `p_bh` for every cell.",
        "",
        "![Bias x category heat maps masked after Holm (top row) and Benjamini-Hochberg (bottom "
        "row) correction over all cells of the table, one column per group; a cell shows rho when "
        f"its adjusted p is below alpha, else 0]({link})",
        "",
        "| bias | category | group | rho | p | p Holm | survives Holm | p BH | survives BH |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {spec.biases[str(r['bias'])].label} | {spec.categories[str(r['category'])].label} "
            f"| {spec.groups[str(r['group'])].label} | {r['rho']:+.3f} | {r['p']:.2g} | "
            f"{r['p_holm']:.2g} | {'yes' if r['p_holm'] < spec.alpha else '**no**'} | "
            f"{r['p_bh']:.2g} | "  # type: ignore[operator]
            f"{'yes' if r['p_bh'] < spec.alpha else '**no**'} |"
        )  # type: ignore[operator]
    return lines


def render(ctx) -> str:
    study = ctx.claims.analysis
    spec = study.spec
    link = ctx.save_figure(_figure(study), "bias_vs_category.png")
    corrected = ctx.save_figure(corrected_figure(study), "bias_vs_category_corrected.png")
    lines = [
        "## Bias x category correlations",
        "",
        "Spearman rho of each bias with each category, within each group; a cell is shown as 0 "
        f"when p >= {spec.alpha:g} (as in the paper), and hatched grey ('undef.') when the "
        "correlation is undefined (a constant column). Full values with p and interval below.",
        "",
        f"![bias x category heat map]({link})",
        "",
    ]
    groups = list(spec.groups)
    cats = list(spec.categories)
    for g in groups:
        lines += [
            f"### {spec.groups[g].label} (n = {len(study.groups[g])})",
            "",
            "| bias | " + " | ".join(spec.categories[c].label for c in cats) + " |",
            "|---|" + "---|" * len(cats),
        ]
        for b in spec.biases:
            cells = []
            for c in cats:
                corr = study.cell(b, c, g).corr
                lo, hi = corr.interval
                if np.isnan(study.masked(study.cell(b, c, g))):
                    cells.append(f"undefined (constant column, n={corr.n})")
                    continue
                shown = "0" if corr.p >= spec.alpha else f"{corr.rho:+.2f}"
                cells.append(f"{shown} ({corr.rho:+.3f}, p={corr.p:.2g}, [{lo:+.2f}, {hi:+.2f}])")
            lines.append(f"| {spec.biases[b].label} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [*_survival(study, corrected), ""]
    lines += [
        "### Bias x bias (all models)",
        "",
        "| a | b | rho | p | 95% interval |",
        "|---|---|---|---|---|",
    ]
    for a, b, corr in study.bias_vs_bias():
        lines.append(
            f"| {a} | {b} | {corr.rho:+.3f} | {corr.p:.2g} | [{corr.interval[0]:+.3f}, "
            f"{corr.interval[1]:+.3f}] |"
        )
    return "\n".join(lines) + "\n"

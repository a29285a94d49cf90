"""Report section: the bias x category Spearman table per group (masked as in the paper) and its heat map."""

from __future__ import annotations

import numpy as np


def _figure(study):
    from matplotlib.figure import Figure

    spec = study.spec
    biases, cats, groups = list(spec.biases), list(spec.categories), list(spec.groups)
    fig = Figure(figsize=(3.0 * len(groups) + 3.6, 0.55 * len(biases) + 1.6), layout="constrained")
    axes = fig.subplots(1, len(groups), sharey=True, squeeze=False)[0]
    images = []
    for ax, g in zip(axes, groups, strict=True):
        grid = np.array([[study.masked(study.cell(b, c, g)) for c in cats] for b in biases])
        images.append(ax.imshow(grid, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto"))
        for i in range(len(biases)):
            for j in range(len(cats)):
                v = grid[i, j]
                ax.text(j, i, "0" if v == 0 else f"{v:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if abs(v) > 0.6 else "black")
        ax.set_xticks(range(len(cats)), [spec.categories[c].label for c in cats], rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{spec.groups[g].label} (n={len(study.groups[g])})", fontsize=9)
    axes[0].set_yticks(range(len(biases)), [spec.biases[b].label for b in biases], fontsize=8)
    fig.colorbar(images[0], ax=list(axes), shrink=0.8, label=f"Spearman rho (0 if p >= {spec.alpha:g})")
    return fig


def render(ctx) -> str:
    study = ctx.claims.analysis
    spec = study.spec
    link = ctx.save_figure(_figure(study), "bias_vs_category.png")
    lines = ["## Bias x category correlations", "",
             f"Spearman rho of each bias with each category, within each group; a cell is shown as 0 "
             f"when p >= {spec.alpha:g} (as in the paper). Full values with p and interval below.", "",
             f"![bias x category heat map]({link})", ""]
    groups = list(spec.groups)
    cats = list(spec.categories)
    for g in groups:
        lines += [f"### {spec.groups[g].label} (n = {len(study.groups[g])})", "",
                  "| bias | " + " | ".join(spec.categories[c].label for c in cats) + " |",
                  "|---|" + "---|" * len(cats)]
        for b in spec.biases:
            cells = []
            for c in cats:
                corr = study.cell(b, c, g).corr
                lo, hi = corr.interval
                shown = "0" if corr.p >= spec.alpha else f"{corr.rho:+.2f}"
                cells.append(f"{shown} ({corr.rho:+.3f}, p={corr.p:.2g}, [{lo:+.2f}, {hi:+.2f}])")
            lines.append(f"| {spec.biases[b].label} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["### Bias x bias (all models)", "", "| a | b | rho | p | 95% interval |", "|---|---|---|---|---|"]
    for a, b, corr in study.bias_vs_bias():
        lines.append(f"| {a} | {b} | {corr.rho:+.3f} | {corr.p:.2g} | [{corr.interval[0]:+.3f}, {corr.interval[1]:+.3f}] |")
    return "\n".join(lines) + "\n"

"""Report section: the Spearman matrix of the 8 ImageNet benchmarks as a heat map and a table.

The section gives both row-mean variants."""

from __future__ import annotations


def heatmap(bc):
    """The benchmark Spearman matrix (``BenchmarkCorrelation``) as an annotated heat map."""
    from matplotlib.figure import Figure

    ids = bc.benchmarks
    fig = Figure(figsize=(0.75 * len(ids) + 2.4, 0.65 * len(ids) + 1.4), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    image = ax.imshow(bc.matrix, cmap="viridis", vmin=min(0.0, float(bc.matrix.min())), vmax=1.0)
    for i in range(len(ids)):
        for j in range(len(ids)):
            v = bc.matrix[i, j]
            ax.text(
                j,
                i,
                f"{v:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="black" if v > 0.6 else "white",
            )
    labels = [b.replace("imagenet_", "IN-").replace("imagenet", "ImageNet") for b in ids]
    ax.set_xticks(range(len(ids)), labels, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(
        range(len(ids)),
        [f"{lab} ({m:.3f})" for lab, m in zip(labels, bc.row_mean_including_diagonal, strict=True)],
        fontsize=8,
    )
    ax.set_title(
        f"Spearman rho over {bc.n} models (row mean incl. diagonal in brackets)", fontsize=9
    )
    fig.colorbar(image, ax=ax, shrink=0.8, label="Spearman rho")
    return fig


def render(ctx) -> str:
    bc = ctx.claims.analysis.benchmark_correlation
    ids = bc.benchmarks
    link = ctx.save_figure(heatmap(bc), "benchmark_correlation.png")
    first = ids[int(bc.row_mean_including_diagonal.argmax())]
    alt = (
        f"Heat map of the Spearman correlations between the {len(ids)} ImageNet benchmarks over "
        f"{bc.n} models; the row labels give each benchmark's mean correlation including the "
        f"diagonal; {first} has the highest"
    )
    lines = [
        "## Benchmark correlation matrix",
        "",
        f"Spearman over the {bc.n} models. Mean correlation of a benchmark with the others, "
        "averaged per row including the diagonal 1.0 (as in the paper) and excluding it.",
        "",
        f"![{alt}]({link})",
        "",
        "| benchmark | "
        + " | ".join(ids)
        + " | row mean incl. diagonal | row mean excl. diagonal |",
        "|---|" + "---|" * (len(ids) + 2),
    ]
    for i, b in enumerate(ids):
        lo, hi = bc.interval_including_diagonal[i]
        lo2, hi2 = bc.interval_excluding_diagonal[i]
        lines.append(
            f"| {b} | "
            + " | ".join(f"{v:.3f}" for v in bc.matrix[i])
            + f" | {bc.row_mean_including_diagonal[i]:.3f} [{lo:.3f}, {hi:.3f}]"
            + f" | {bc.row_mean_excluding_diagonal[i]:.3f} [{lo2:.3f}, {hi2:.3f}] |"
        )
    return "\n".join(lines) + "\n"

"""Report section: the Spearman matrix of the 8 ImageNet benchmarks and both row-mean variants."""

from __future__ import annotations


def render(ctx) -> str:
    bc = ctx.claims.analysis.benchmark_correlation
    ids = bc.benchmarks
    lines = ["## Benchmark correlation matrix", "",
             f"Spearman over the {bc.n} models. Mean correlation of a benchmark with the others, "
             "averaged per row including the diagonal 1.0 (as in the paper) and excluding it.", "",
             "| benchmark | " + " | ".join(ids) + " | row mean incl. diagonal | row mean excl. diagonal |",
             "|---|" + "---|" * (len(ids) + 2)]
    for i, b in enumerate(ids):
        lo, hi = bc.interval_including_diagonal[i]
        lo2, hi2 = bc.interval_excluding_diagonal[i]
        lines.append(f"| {b} | " + " | ".join(f"{v:.3f}" for v in bc.matrix[i])
                     + f" | {bc.row_mean_including_diagonal[i]:.3f} [{lo:.3f}, {hi:.3f}]"
                     + f" | {bc.row_mean_excluding_diagonal[i]:.3f} [{lo2:.3f}, {hi2:.3f}] |")
    return "\n".join(lines) + "\n"

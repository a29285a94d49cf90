"""Report section "The two seeds linked (exploratory)", with a heat map of rho and its data.

Gavrikov et al.'s biases against ImageNet-X's per-factor error ratios of the same checkpoints,
and Subramanian et al.'s shape score against Gavrikov's shape bias
(``repro.report.seeds_linked``), with a heat map of rho (BH q marked) and its data as CSV.
Rendered in the group of the study the analysis reads (``STUDY``) only."""

from __future__ import annotations

import math
from typing import Any

from repro.report.seeds_linked import STUDY, TRIALS, SeedsLinked, seeds_linked

FIGURE = "seeds_linked.png"
TABLE = "seeds_linked.csv"
SHOWN = 5  # the cells of smallest q shown in the table
MARKS = ((0.05, "**"), (0.10, "*"))  # q below: marker in the figure and the table


def mark(q: float) -> str:
    return next((m for limit, m in MARKS if math.isfinite(q) and q < limit), "")


def figure(result: SeedsLinked):
    """Two heat maps (bias x factor): rho, and rho with clean accuracy held fixed; q marked."""
    import numpy as np
    from matplotlib.figure import Figure

    biases = list(result.bias_labels)
    factors = list(dict.fromkeys(c.factor for c in result.cells))
    by = {(c.bias, c.factor): c for c in result.cells}
    fig = Figure(figsize=(11.5, 5.6), layout="constrained")
    axes = fig.subplots(2, 1)
    n = max((c.n for c in result.cells), default=0)
    for ax, (title, rho, q) in zip(
        axes,
        [
            (f"Spearman rho (n = {n} models)", "rho", "q"),
            ("partial rho, clean ImageNet top-1 held fixed", "partial_rho", "partial_q"),
        ],
        strict=True,
    ):
        grid = np.array([[getattr(by[b, f], rho) for f in factors] for b in biases])
        im = ax.imshow(grid, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
        for i, b in enumerate(biases):
            for j, f in enumerate(factors):
                text = mark(getattr(by[b, f], q))
                if text:
                    ax.text(j, i, text, ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(factors)), [f.replace("_", " ") for f in factors], fontsize=7)
        ax.set_yticks(range(len(biases)), [result.bias_labels[b] for b in biases], fontsize=7)
        ax.tick_params(axis="x", labelrotation=35)
        ax.set_title(f"{title}; ** q < 0.05, * q < 0.10 (BH over {len(result.cells)})", fontsize=8)
        fig.colorbar(im, ax=ax, shrink=0.8).ax.tick_params(labelsize=7)
    fig.suptitle(
        "Exploratory: Gavrikov et al.'s biases vs ImageNet-X error ratios of the same checkpoints",
        fontsize=9,
    )
    return fig


def _f(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None or not math.isfinite(x) else format(x, fmt)


def render(ctx: Any) -> str:
    if ctx.claims is None or ctx.claims.study.name != STUDY:
        return ""
    result = seeds_linked(ctx.claims.data_dir)
    cells = result.cells
    link = ctx.save_figure(figure(result), FIGURE)
    fields = ["bias", "factor", "n", "rho", "p", "q", "partial_n", "partial_rho", "partial_p"]
    data = ctx.save_csv(
        [*fields, "partial_q"],
        [[*(getattr(c, k) for k in fields), c.partial_q] for c in cells],
        TABLE,
    )
    levels = [m.level for m in result.models.values()]
    n = len(result.models)
    lines = [
        "## The two seeds linked (exploratory)",
        "",
        f"No published counterpart: a look, not a verdict. The {n} study models that ImageNet-X's "
        f"factor tables cover through the declared identity maps ({levels.count('certain')} "
        f"certain, {levels.count('probable')} probable; testbed and model-vs-human sets): each "
        "bias against each factor's error ratio, Spearman's rho and the partial rho with clean "
        f"ImageNet top-1 held fixed; Benjamini-Hochberg q over each table's {len(cells)} cells. "
        f"The cells of smallest q ([figure]({link}), [all cells]({data})):",
        "",
        "| bias | factor | n | rho | q | partial rho | partial q |",
        "|---|---|---|---|---|---|---|",
    ]
    best = sorted(cells, key=lambda c: (min(c.q, c.partial_q), c.bias, c.factor))[:SHOWN]
    for c in best:
        lines.append(
            f"| {result.bias_labels[c.bias]} | {c.factor.replace('_', ' ')} | {c.n} | "
            f"{_f(c.rho)} | {_f(c.q, '.3f')}{mark(c.q)} | {_f(c.partial_rho)} | "
            f"{_f(c.partial_q, '.3f')}{mark(c.partial_q)} |"
        )
    limit = MARKS[-1][0]
    plain = sum(c.q < limit for c in cells)
    partial = sum(c.partial_q < limit for c in cells)
    verdict = (
        "no cell survives the correction: the table shows leads, not findings"
        if plain + partial == 0
        else "leads for a measured study, not findings"
    )
    s = result.shape_summary
    lines += [
        "",
        f"Cells with q < {limit:.2f}: {plain} of {len(cells)} (rho), {partial} of {len(cells)} "
        f"(partial rho); {verdict}.",
        "",
        f"Subramanian et al.'s shape score is shape decisions over all {TRIALS} cue-conflict "
        "trials, S / 1200; Gavrikov's shape bias is S / (S + T). So score = bias x (S + T) / "
        f"1200, never above the bias (holds for {s['score_below_bias']} of {s['n']} shared "
        f"networks). Spearman rho of the two: {_f(s.get('rho'))} (n = {s['n']}, "
        f"p = {_f(s.get('p'), '.1e')}). Recovering Gavrikov's S from its printed bias "
        f"({s['recovered']} of {s['n']} networks unique) and predicting the score: "
        f"{s['exact']} exact, median |difference| {_f(s['median_abs_difference'], '.0f')} "
        f"decision(s), largest {s['max_abs_difference']}" + _largest(result) + ".",
    ]
    return "\n".join(lines) + "\n"


def _largest(result: SeedsLinked) -> str:
    rows = [r for r in result.shape if r.shape_decisions is not None]
    if not rows:
        return ""
    r = max(rows, key=lambda r: abs(r.shape_decisions - r.published_decisions))
    note = "; VOneNet's front end is stochastic" if r.study_model.startswith("vonenet") else ""
    return f" ({r.study_model}: {r.shape_decisions} vs {r.published_decisions}{note})"

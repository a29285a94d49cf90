"""Report section: ImageNet-X.

Per-factor error ratios of the four models with published per-image predictions (scored by
``repro.scoring.imagenet_x`` from the prediction files, as a figure and a table with counts), and
the augmentation spill-over table (monotone trend of every factor's error ratio over every training
sweep's augmentation strength)."""

from __future__ import annotations

from typing import Any

import numpy as np

from repro.base.numbers import fmt_num
from repro.published.fetch import require_file
from repro.scoring.imagenet_x import FACTORS, factor_accuracies
from repro.scoring.predictions import read_predictions

BASE_MODELS = ("ResNet50", "DINO", "SimCLR", "ViT")
TREND_SWEEPS = ("crop", "colorjitter", "gaussian_blur")


def _base_results(data_dir) -> dict[str, Any]:
    out = {}
    for model in BASE_MODELS:
        path = require_file(f"imagenetx/model_predictions/{model}.csv", data_dir)
        out[model] = factor_accuracies(read_predictions(path))
    return out


def error_ratio_figure(results: dict[str, Any]):
    """Grouped bars: error ratio per factor, one bar per model.

    Factors are ordered by the models' mean error ratio; whiskers from each factor accuracy's Wilson
    95% interval."""
    from matplotlib.figure import Figure

    models = list(results)
    order = sorted(FACTORS, key=lambda f: -np.mean([results[m].error_ratio(f) for m in models]))
    fig = Figure(figsize=(10, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(models)
    x = np.arange(len(order))
    for i, m in enumerate(models):
        r = results[m]
        y = np.array([r.error_ratio(f) for f in order])
        iv = np.array([r.error_ratio_interval(f) for f in order])
        ax.bar(
            x + (i - (len(models) - 1) / 2) * width,
            y,
            width,
            label=f"{m} (acc {100 * r.overall.rate:.1f}%)",
            yerr=np.vstack([y - iv[:, 0], iv[:, 1] - y]),
            error_kw={"elinewidth": 0.6, "capsize": 1.5},
        )
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels([f.replace("_", " ") for f in order], rotation=45, ha="right")
    ax.set_ylabel("error ratio (1 - acc_f) / (1 - acc)")
    ax.set_title("ImageNet-X error ratios (top factor, class labels)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def _fmt_p(p: float) -> str:
    return "<1e-300" if p == 0 else fmt_num(p, 1, style="e")


def render(ctx) -> str:
    from repro.studies.imagenetx.statistics import SWEEPS, spillover_table

    data_dir = ctx.claims.data_dir
    results = _base_results(data_dir)
    link = ctx.save_figure(error_ratio_figure(results), "imagenetx_error_ratios.png")
    lines = [
        "## ImageNet-X: failure factors",
        "",
        "Error ratio of factor f = (1 - acc_f) / (1 - acc_overall) on the ImageNet-X top-factor "
        "annotations (46,110 validation images after removing the annotators' prototypes), "
        "class-level correctness; recomputed from the published per-image predictions (`python -m "
        "repro score imagenet-x --predictions FILE.csv`). Accuracies are counts k/n; whiskers are "
        "the Wilson 95% interval of the factor accuracy.",
        "",
        f"![ImageNet-X error ratios]({link})",
        "",
        "| factor | " + " | ".join(f"{m} k/n | {m} ratio" for m in results) + " |",
        "|---|" + "---:|---:|" * len(results),
    ]
    for f in FACTORS:
        cells = []
        for r in results.values():
            c = r.factors[f]
            cells.append(f"{c.k}/{c.n} | {r.error_ratio(f):.3f}")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    lines.append(
        "| overall | "
        + " | ".join(f"{r.overall.k}/{r.overall.n} | 1" for r in results.values())
        + " |"
    )

    rows = spillover_table(ctx.claims, sweeps=SWEEPS)
    by = {(r["sweep"], r["factor"]): r for r in rows}
    single = [s for s in SWEEPS if by[(s, FACTORS[0])]["levels"] < 2]
    lines += [
        "",
        "### Augmentation spill-over",
        "",
        "Spearman rho between a training sweep's augmentation strength (parsed from the model "
        "name: crop = 100 - RandomResizedCrop minimum scale %, colorjitter = jitter strength, "
        "gaussian_blur = blur strength) and each factor's error ratio, over the sweep's ResNet-50s "
        "(published tables, facebookresearch/imagenetx `results/val/top_factor`). rho > 0: "
        "stronger augmentation, relatively more errors on that factor. p: Holm-adjusted over all "
        "cells.",
        "",
        "| factor | "
        + " | ".join(f"{s} (n={by[(s, FACTORS[0])]['n']}) rho | p" for s in TREND_SWEEPS)
        + " |",
        "|---|" + "---:|---:|" * len(TREND_SWEEPS),
    ]
    for f in FACTORS:
        cells = []
        for s in TREND_SWEEPS:
            r = by[(s, f)]
            cells.append(f"{r['rho']:+.3f} | {_fmt_p(r['p_holm'])}")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    if single:
        lines += [
            "",
            "No trend for "
            + ", ".join(f"`{s}` ({by[(s, FACTORS[0])]['n']} models, one strength)" for s in single)
            + ": these sets vary the seed only.",
        ]
    lines += ["", *strength_section(ctx), *tie_lines(ctx.outcomes), *subset_lines(ctx.outcomes)]
    return "\n".join(lines) + "\n"


def subset_lines(outcomes) -> list[str]:
    """Lines that set each concordance beside the same over the more accurate models.

    Those are the models that rank factors by more than noise (the ``w_min_accuracy`` detail of
    ``failure_mode_concordance``)."""
    out = []
    for o in outcomes:
        sub = o.result.details.get("w_min_accuracy")
        if sub is not None:
            out += [
                "",
                f"`{o.claim.id}`: Kendall's W {o.result.value:.3f} over the {o.result.n} models; "
                f"{sub['value']:.3f} over the {sub['n']} with overall accuracy >= "
                f"{sub['min_accuracy']:.0%} (p {sub['p']:.2g}), whose factor rankings are less "
                "noise.",
            ]
    return out


def tie_lines(outcomes) -> list[str]:
    """A count that rests on how ties are broken, as the range it spans."""
    from scipy import stats

    out = []
    for o in outcomes:
        d = o.result.details
        if "k_range" in d and d["k_range"][0] != d["k_range"][1]:
            lo, hi = d["k_range"]
            p_lo, p_hi = (
                stats.binomtest(k, o.result.n, 0.5, alternative="greater").pvalue for k in (lo, hi)
            )
            out += [
                "",
                f"`{o.claim.id}`: {d['factor']} is among the {d['top']} highest error ratios of "
                f"{d['k']} of {o.result.n} models in the stable order of tied values; {lo} to {hi} "
                f"of {o.result.n} as ties are broken against it or for it (one-sided binomial p "
                f"against 1/2: {p_lo:.2g} and {p_hi:.2g}).",
            ]
    return out


HIGHLIGHT = "smaller"  # the factor of the crop spill-over claim


def strength_figure(rows: list[list[Any]]):
    """One panel per sweep: each factor's mean error ratio per strength.

    The claim's factor is drawn bold.
    """
    from matplotlib.figure import Figure

    sweeps = list(dict.fromkeys(r[0] for r in rows))
    fig = Figure(figsize=(3.6 * len(sweeps), 3.4), layout="constrained")
    axes = fig.subplots(1, len(sweeps), squeeze=False)[0]
    for ax, sweep in zip(axes, sweeps, strict=True):
        for f in FACTORS:
            pts = [(r[1], r[4]) for r in rows if r[0] == sweep and r[2] == f]
            bold = f == HIGHLIGHT
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                color="tab:red" if bold else "0.6",
                linewidth=1.6 if bold else 0.6,
                zorder=3 if bold else 2,
            )
        ax.axhline(1.0, color="black", linewidth=0.5)
        ax.set_title(sweep, fontsize=9)
        ax.set_xlabel("augmentation strength", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].set_ylabel("error ratio (mean over the runs of a strength)", fontsize=8)
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color="tab:red", linewidth=1.6, label=f"{HIGHLIGHT} (the claim's factor)"),
        Line2D([], [], color="0.6", linewidth=0.6, label=f"the {len(FACTORS) - 1} other factors"),
        Line2D([], [], color="black", linewidth=0.5, label="1: the factor's error = overall"),
    ]
    axes[0].legend(handles=handles, fontsize=7, frameon=False)
    return fig


def strength_section(ctx) -> list[str]:
    from repro.studies.imagenetx.statistics import STRENGTH_MEANING, strength_profile

    rows = [r for s in TREND_SWEEPS for r in strength_profile(ctx.claims, s)]
    png = ctx.save_figure(strength_figure(rows), "imagenetx_error_ratio_vs_strength.png")
    data = ctx.save_csv(
        ["sweep", "strength", "factor", "runs", "mean_error_ratio"],
        rows,
        "imagenetx_error_ratio_vs_strength.csv",
    )
    levels = {s: len({r[1] for r in rows if r[0] == s}) for s in TREND_SWEEPS}
    alt = (
        f"{len(TREND_SWEEPS)} panels "
        f"({', '.join(f'{s}: {levels[s]} strengths' for s in TREND_SWEEPS)}): the mean error ratio "
        f"of each of the {len(FACTORS)} factors per augmentation strength, '{HIGHLIGHT}' in red."
    )
    return [
        "**Error ratio against augmentation strength** (the paper's spill-over figure): per "
        "strength, the mean error ratio over that strength's runs (seeds), every factor grey, the "
        "crop claim's `smaller` red; strength: "
        + "; ".join(f"{s} = {STRENGTH_MEANING[s]}" for s in TREND_SWEEPS)
        + f". Data: [{data.split('/')[-1]}]({data}).",
        "",
        f"![{alt}]({png})",
    ]

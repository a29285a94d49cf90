"""Figures of the section "Models measured here" (matplotlib, deterministic bytes through
``ReportContext.save_figure``): the shape bias of the models measured here among the study's 48
models and the model-vs-human references, and per model the two critical-band grids (our
synthesis, the authors' pre-made stimuli) with both fitted channels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from repro.analysis.noise_agreement import grid as accuracy_grid
from repro.scoring.critical_band import N_BANDS, NOISE_SDS, band_centre

from .models_here_data import ModelsHere, ShapeCount

OURS_COLOR = "tab:red"


def shape_bias_strip(data: ModelsHere, ours: Sequence[ShapeCount]):
    """One row per group: the 48 study models (published, by model category), the 10 human
    subjects (and their pooled value), the model-vs-human ResNet-50, each model measured here;
    95% Wilson intervals as bars."""
    from matplotlib.figure import Figure

    rows = [c.label for c in ours] + ["ResNet-50 (model-vs-human)", "humans (10 subjects)", "48 study models"]
    fig = Figure(figsize=(8.0, 0.55 * len(rows) + 1.6), layout="constrained")
    ax = fig.subplots()
    y = {label: len(rows) - 1 - i for i, label in enumerate(rows)}
    cats = sorted(set(data.categories.values()))
    cmap = [f"C{i % 10}" for i in range(len(cats))]
    names = sorted(data.population, key=lambda m: data.population[m])
    for i, m in enumerate(names):  # deterministic vertical spread, so close values stay visible
        offset = ((i % 5) - 2) * 0.09
        cat = data.categories.get(m)
        color = cmap[cats.index(cat)] if cat in cats else "grey"
        ax.scatter(data.population[m], y["48 study models"] + offset, s=16, color=color, linewidths=0, alpha=0.85)
    for i, cat in enumerate(cats):
        ax.scatter([], [], s=16, color=cmap[i], label=cat)

    def bar(count: ShapeCount, row: float, color: str, marker: str) -> None:
        lo, hi = count.interval
        ax.errorbar(count.value, row, xerr=[[count.value - lo], [hi - count.value]], fmt=marker, color=color,
                    markersize=7, capsize=3, markeredgecolor="black", markeredgewidth=0.5)

    for i, h in enumerate(data.humans):
        ax.scatter(h.value, y["humans (10 subjects)"] + ((i % 5) - 2) * 0.09, s=16, color="black", linewidths=0)
    if data.humans:
        bar(data.humans_pooled(), y["humans (10 subjects)"] - 0.3, "black", "D")
    if data.resnet50 is not None:
        bar(data.resnet50, y["ResNet-50 (model-vs-human)"], "dimgray", "s")
    for c in ours:
        bar(c, y[c.label], OURS_COLOR, "*")
    ax.set_yticks([y[r] for r in rows], rows, fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.7, len(rows) - 0.4)
    ax.set_xlabel("shape bias S / (S + T), 1,280 cue-conflict images (bars: 95% Wilson interval)", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", linewidth=0.3)
    ax.legend(title="study model category", fontsize=6, title_fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def _heat(ax: Any, counts: Mapping[str, tuple[int, int]] | None, title: str) -> None:
    ax.set_title(title, fontsize=8)
    if counts is None:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes, fontsize=9)
        return
    ax.set_xticks(range(N_BANDS), [f"{band_centre(f):g}" for f in range(N_BANDS)], fontsize=7)
    ax.set_yticks(range(len(NOISE_SDS)), [f"{s:g}" for s in NOISE_SDS], fontsize=7)
    ax.set_xlabel("band centre (cycles/image)", fontsize=7)
    ax.set_ylabel("noise SD", fontsize=7)
    g = accuracy_grid(counts)
    ax.imshow(g, vmin=0, vmax=1, cmap="viridis", aspect="auto", origin="upper")
    for i in range(g.shape[0]):
        for j in range(g.shape[1]):
            ax.text(j, i, f"{100 * g[i, j]:.0f}", ha="center", va="center", fontsize=6,
                    color="white" if g[i, j] < 0.6 else "black")


def _fit_curve(vector: Sequence[int]) -> np.ndarray | None:
    from repro.scoring.critical_band import fit, gaussian

    result = fit(vector)
    if not result.defined or result.params is None:  # degenerate: no curve is drawn
        return None
    return gaussian(np.linspace(0, N_BANDS - 1, 61), *result.params)


def critical_band_pair(model: str, synth: Mapping[str, tuple[int, int]] | None,
                       premade: Mapping[str, tuple[int, int]] | None,
                       vectors: Mapping[str, Sequence[int] | None]):
    """Our synthesised 5 x 7 grid, the pre-made grid (16-class accuracy, %), and the threshold
    vectors of both (absolute and ``_norm``) with their fitted Gaussians."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11.5, 3.0), layout="constrained")
    a, b, c = fig.subplots(1, 3, width_ratios=[1, 1, 1.1])
    n_syn = "" if synth is None else f", {synth['sd=0'][1]:,} images per cell"
    _heat(a, synth, f"{model}: our synthesis on GraySplit{n_syn}")
    _heat(b, premade, f"{model}: pre-made CBMSplit (~30 per cell)")
    xs = np.linspace(0, N_BANDS - 1, 61)
    styles = {"ours, absolute": ("tab:red", "-", "o"), "ours, _norm": ("tab:red", "--", "^"),
              "pre-made, absolute": ("tab:blue", "-", "s"), "pre-made, _norm": ("tab:blue", "--", "v")}
    for label, (color, ls, marker) in styles.items():
        vec = vectors.get(label)
        if vec is None:
            continue
        offset = 0.06 if label.startswith("pre") else -0.06
        c.plot(np.arange(N_BANDS), np.asarray(vec) + offset, linestyle="", marker=marker, color=color, markersize=4)
        curve = _fit_curve(vec)
        if curve is not None:
            c.plot(xs, curve, linestyle=ls, color=color, linewidth=1, label=label)
        else:
            c.plot([], [], linestyle=ls, color=color, label=f"{label} (degenerate fit)")
    c.set_xticks(range(N_BANDS), [f"{band_centre(f):g}" for f in range(N_BANDS)], fontsize=7)
    c.set_yticks(range(5))
    c.tick_params(labelsize=7)
    c.set_ylim(-0.3, 4.6)
    c.set_xlabel("band centre (cycles/image)", fontsize=7)
    c.set_ylabel("threshold (noise levels, 0-4)", fontsize=7)
    c.set_title("thresholds and fitted Gaussians", fontsize=8)
    c.legend(fontsize=6, frameon=False)
    return fig

"""Figures of the section "Models measured here": per model, its two critical-band grids.

Drawn with matplotlib, deterministic bytes through ``ReportContext.save_figure``: per model the two
critical-band grids (our synthesis, the authors' pre-made stimuli) with both fitted channels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from repro.analysis.noise_agreement import grid as accuracy_grid
from repro.scoring.critical_band import N_BANDS, NOISE_SDS, band_centre, fit, gaussian


def _heat(ax: Any, counts: Mapping[str, tuple[int, int]] | None, title: str) -> None:
    ax.set_title(title, fontsize=8)
    if counts is None:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.text(
            0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes, fontsize=9
        )
        return
    ax.set_xticks(range(N_BANDS), [f"{band_centre(f):g}" for f in range(N_BANDS)], fontsize=7)
    ax.set_yticks(range(len(NOISE_SDS)), [f"{s:g}" for s in NOISE_SDS], fontsize=7)
    ax.set_xlabel("band centre (cycles/image)", fontsize=7)
    ax.set_ylabel("noise SD", fontsize=7)
    g = accuracy_grid(counts)
    ax.imshow(g, vmin=0, vmax=1, cmap="viridis", aspect="auto", origin="upper")
    for i in range(g.shape[0]):
        for j in range(g.shape[1]):
            ax.text(
                j,
                i,
                f"{100 * g[i, j]:.0f}",
                ha="center",
                va="center",
                fontsize=6,
                color="white" if g[i, j] < 0.6 else "black",
            )


def _fit_curve(vector: Sequence[int]) -> np.ndarray | None:
    result = fit(vector)
    if not result.defined or result.params is None:  # degenerate: no curve is drawn
        return None
    return gaussian(np.linspace(0, N_BANDS - 1, 61), *result.params)


def critical_band_pair(
    model: str,
    synth: Mapping[str, tuple[int, int]] | None,
    premade: Mapping[str, tuple[int, int]] | None,
    vectors: Mapping[str, Sequence[int] | None],
):
    """Our synthesised 5 x 7 grid, the pre-made grid and the threshold vectors of both.

    The grids show 16-class accuracy (%); the threshold vectors (absolute and ``_norm``) are drawn
    with their fitted Gaussians."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11.5, 3.0), layout="constrained")
    a, b, c = fig.subplots(1, 3, width_ratios=[1, 1, 1.1])
    n_syn = "" if synth is None else f", {synth['sd=0'][1]:,} images per cell"
    _heat(a, synth, f"{model}: our synthesis on GraySplit{n_syn}")
    _heat(b, premade, f"{model}: pre-made CBMSplit (~30 per cell)")
    xs = np.linspace(0, N_BANDS - 1, 61)
    styles = {
        "ours, absolute": ("tab:red", "-", "o"),
        "ours, _norm": ("tab:red", "--", "^"),
        "pre-made, absolute": ("tab:blue", "-", "s"),
        "pre-made, _norm": ("tab:blue", "--", "v"),
    }
    for label, (color, ls, marker) in styles.items():
        vec = vectors.get(label)
        if vec is None:
            continue
        offset = 0.06 if label.startswith("pre") else -0.06
        c.plot(
            np.arange(N_BANDS),
            np.asarray(vec) + offset,
            linestyle="",
            marker=marker,
            color=color,
            markersize=4,
        )
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

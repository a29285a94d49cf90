"""Report section: further figures of the paper, drawn from the published table.

Each figure's data is written beside it as a CSV (``report_assets/<name>.csv``, what the tests
check):

- spectral curves: low-pass (LFC) and high-pass (HFC) filtered accuracy relative to clean accuracy
  against the cut-off, one line per study model (``metric/bandpass/{LFC,HFC}/<c>``);
- critical-band threshold profiles: each model's fitted Gaussian threshold profile over the 7
  bands, from its published ``_norm`` triple (bandwidth, centre frequency, peak noise sensitivity;
  METHODS 3 step 5 inverted: A = 4 + log2(pns), mu = log2(cf / 1.75), sigma = bw / (2 sqrt(ln 4)));
- the bias x bias matrix: Spearman's rho of every pair of the study's biases over the population.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CUTOFFS = ("0.01", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.99")
BANDS = 7
BAND_CENTRE = 1.75  # cycles/image of band 0; band f is centred at 1.75 x 2^f
FLAT = 2 * math.sqrt(math.log(4))  # bandwidth = FLAT x |sigma| (octaves)
MARKED = "adversarial_training"


def _category_of(claims) -> dict[str, str]:
    return {m: c for c, ms in claims.model_categories.items() for m in ms}


def spectral_rows(claims) -> list[list[Any]]:
    """The rows of the spectral curves: (model, category, kind, cut-off, ratio).

    For every population model, LFC and HFC, every cut-off."""
    table, cat = claims.table, _category_of(claims)
    rows: list[list[Any]] = []
    for m in claims.analysis.population:
        for kind in ("LFC", "HFC"):
            for c in CUTOFFS:
                rows.append(
                    [
                        m,
                        cat.get(m, ""),
                        kind,
                        float(c),
                        table.value(m, f"metric/bandpass/{kind}/{c}"),
                    ]
                )
    return rows


def gaussian_parameters(bw: float, cf: float, pns: float) -> tuple[float, float, float]:
    """The threshold profile's (A, mu, |sigma|) from a published (bandwidth, centre, pns) triple."""
    return 4.0 + math.log2(pns), math.log2(cf / BAND_CENTRE), bw / FLAT


def profile_rows(claims) -> list[list[Any]]:
    """The rows of the threshold profiles: (model, category, band, band centre, fitted threshold).

    For every population model and band.
    """
    table, cat = claims.table, _category_of(claims)
    rows: list[list[Any]] = []
    for m in claims.analysis.population:
        a, mu, sigma = gaussian_parameters(
            *(table.value(m, f"metric/criticalband/{k}_norm") for k in ("bw", "cf", "pns"))
        )
        for band in range(BANDS):
            rows.append(
                [
                    m,
                    cat.get(m, ""),
                    band,
                    BAND_CENTRE * 2.0**band,
                    a * math.exp(-((band - mu) ** 2) / (2 * sigma * sigma)),
                ]
            )
    return rows


def bias_matrix_rows(claims) -> list[list[Any]]:
    """(bias a, bias b, rho, p, n) for every ordered pair of the study's biases (the diagonal 1)."""
    analysis = claims.analysis
    ids = list(analysis.spec.biases)
    pairs = {(a, b): c for a, b, c in analysis.bias_vs_bias()}
    n = len(analysis.population)
    rows: list[list[Any]] = []
    for a in ids:
        for b in ids:
            if a == b:
                rows.append([a, b, 1.0, 0.0, n])
                continue
            c = pairs.get((a, b)) or pairs[(b, a)]
            rows.append([a, b, float(c.rho), float(c.p), int(c.n)])
    return rows


def _legend_handles(rows: list[list[Any]], category: int) -> list[Any]:
    """The two line colours, with their model counts (``category``: the rows' category field)."""
    from matplotlib.lines import Line2D

    cats = dict((r[0], r[category]) for r in rows)
    marked = sum(c == MARKED for c in cats.values())
    return [
        Line2D([], [], color="tab:orange", label=f"adversarially trained ({marked})"),
        Line2D([], [], color="tab:blue", label=f"other models ({len(cats) - marked})"),
    ]


def _model_line(ax: Any, xs: list[float], ys: list[float], marked: bool, **style: Any) -> None:
    """One model's curve: orange for the marked models, blue for the others."""
    ax.plot(xs, ys, color="tab:orange" if marked else "tab:blue", linewidth=0.8, alpha=0.6, **style)


def _spectral_figure(rows: list[list[Any]]):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 3.6), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, kind in zip(axes, ("LFC", "HFC"), strict=True):
        for model in dict.fromkeys(r[0] for r in rows):
            pts = [(r[3], r[4], r[1]) for r in rows if r[0] == model and r[2] == kind]
            _model_line(ax, [p[0] for p in pts], [p[1] for p in pts], pts[0][2] == MARKED)
        ax.axvspan(0.1, 0.5, color="0.9", zorder=0)
        ax.set_title(f"{'low' if kind == 'LFC' else 'high'}-pass ({kind})", fontsize=9)
        ax.set_xlabel("cut-off (fraction of the spectrum kept / removed)", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].set_ylabel("filtered / clean top-1", fontsize=8)
    from matplotlib.patches import Patch

    band = Patch(color="0.9", label="cut-offs 0.1-0.5 (averaged into the bias)")
    axes[0].legend(handles=[*_legend_handles(rows, 1), band], fontsize=7, loc="lower right")
    return fig


def _profile_figure(rows: list[list[Any]]):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.6, 3.6), layout="constrained")
    ax = fig.subplots()
    for model in dict.fromkeys(r[0] for r in rows):
        pts = [r for r in rows if r[0] == model]
        xs, ys = [p[3] for p in pts], [p[4] for p in pts]
        _model_line(ax, xs, ys, pts[0][1] == MARKED, marker="o", markersize=2)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("band centre (cycles/image)", fontsize=8)
    ax.set_ylabel("fitted threshold (noise levels passed, _norm)", fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(handles=_legend_handles(rows, 1), fontsize=7)
    return fig


def _matrix_figure(rows: list[list[Any]], labels: dict[str, str]):
    from matplotlib.figure import Figure

    ids = list(dict.fromkeys(r[0] for r in rows))
    m = np.array([[next(r[2] for r in rows if r[0] == a and r[1] == b) for b in ids] for a in ids])
    fig = Figure(figsize=(6.4, 5.2), layout="constrained")
    ax = fig.subplots()
    im = ax.imshow(m, vmin=-1, vmax=1, cmap="RdBu_r")
    for i in range(len(ids)):
        for j in range(len(ids)):
            ax.text(j, i, f"{m[i, j]:+.2f}", ha="center", va="center", fontsize=7)
    names = [labels.get(b, b) for b in ids]
    ax.set_xticks(range(len(ids)), names, rotation=40, ha="right", fontsize=7)
    ax.set_yticks(range(len(ids)), names, fontsize=7)
    fig.colorbar(im, ax=ax, shrink=0.8, label="Spearman rho")
    return fig


def render(ctx) -> str:
    claims = ctx.claims
    analysis = claims.analysis
    n = len(analysis.population)
    spectral = spectral_rows(claims)
    profiles = profile_rows(claims)
    matrix = bias_matrix_rows(claims)
    header_s = ["model", "model_category", "filter", "cutoff", "ratio"]
    header_p = [
        "model",
        "model_category",
        "band",
        "band_centre_cycles_per_image",
        "fitted_threshold",
    ]
    header_m = ["bias_a", "bias_b", "rho", "p", "n"]
    labels = {b: d.label for b, d in analysis.spec.biases.items()}
    png_s = ctx.save_figure(_spectral_figure(spectral), "spectral_curves.png")
    csv_s = ctx.save_csv(header_s, spectral, "spectral_curves.csv")
    png_p = ctx.save_figure(_profile_figure(profiles), "critical_band_profiles.png")
    csv_p = ctx.save_csv(header_p, profiles, "critical_band_profiles.csv")
    png_m = ctx.save_figure(_matrix_figure(matrix, labels), "bias_x_bias.png")
    csv_m = ctx.save_csv(header_m, matrix, "bias_x_bias.csv")
    n_at = sum(1 for r in profiles if r[1] == MARKED and r[2] == 0)
    lines = [
        "## The paper's figures, from the published table",
        "",
        f"Drawn from benchmark.csv over the {n} study models (adversarially trained models orange, "
        "the others blue); each figure's data is the CSV beside it.",
        "",
        "**Spectral curves.** Filtered top-1 relative to clean top-1 against the cut-off "
        "(low-pass keeps the centre of the spectrum, high-pass removes it); the grey band is the "
        "cut-offs 0.1-0.5 whose mean is the study's low- and high-frequency bias. Data: "
        f"[{csv_s.split('/')[-1]}]({csv_s}).",
        "",
        "![Two panels, low-pass and high-pass, filtered over clean top-1 against the cut-off for "
        f"the {n} models, one line each; {n_at} adversarially trained models in orange.]({png_s})",
        "",
        "**Critical-band threshold profiles.** Each model's Gaussian threshold profile over the 7 "
        "bands, rebuilt from its published `_norm` triple (A = 4 + log2(pns), mu = log2(cf / "
        f"1.75), sigma = bandwidth / (2 sqrt(ln 4))). Data: [{csv_p.split('/')[-1]}]({csv_p}).",
        "",
        "![The fitted threshold (noise levels passed) against the band centre in cycles per image "
        f"(log scale) for the {n} models.]({png_p})",
        "",
        f"**Bias x bias.** Spearman's rho of every pair of biases over the {n} models (the table "
        f"above gives p). Data: [{csv_m.split('/')[-1]}]({csv_m}).",
        "",
        f"![A {len(labels)} x {len(labels)} heat map of Spearman's rho between the biases, with "
        f"the values printed in the cells.]({png_m})",
    ]
    return "\n".join(lines) + "\n"

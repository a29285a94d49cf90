"""Report section: Subramanian et al. 2023, the networks' channels.

Which files and networks the populations hold (and which not, why); a figure of the channels
(threshold profiles and fitted Gaussians: the human one, the 76 networks', the adversarial-training
sweep's); the variance-explained models and their variants; the sweep; and the per-network table,
every row scored from its file by the suite's grid scorer
(``python -m repro score critical-band --grid``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from repro.base.numbers import fmt_num
from repro.scoring.critical_band import BANDS, N_BANDS, band_centre, fit, gaussian
from repro.studies.subramanian2023.population import population
from repro.studies.subramanian2023.statistics import human_fit

FIGURE = "subramanian2023_channels.png"
ROBUSTNESS = "accuracy/waccs_eps0.1"


def _num(v: Any, digits: int = 2) -> str:
    return fmt_num(v, digits, nan="-")


def _fit_cells(row: dict[str, float]) -> str:
    """Bandwidth | centre | PNS cells of the absolute thresholds' fit.

    Each to the decimals its conditioning leaves stable (``repro.scoring.fit_conditioning``); a flat
    vector's fit is ``undefined (flat)``."""
    if "threshold/f=0" not in row:
        return "- | - | -"
    from repro.scoring.fit_conditioning import sensitivity, stable_text

    vector = tuple(row[f"threshold/f={b}"] for b in range(N_BANDS))
    if len(set(vector)) == 1:
        return "undefined (flat) | - | -"
    rel = sensitivity(vector) if row.get("fit_defined") else None
    if rel is None:
        return "undefined (no fit) | - | -"
    cells = (
        stable_text(row[key], r, digits)
        for key, r, digits in zip(("bw", "cf", "pns"), rel, (2, 1, 2), strict=True)
    )
    return " | ".join(cells)


def _thresholds(row: dict[str, float], key: str = "threshold") -> str:
    if f"{key}/f=0" not in row:
        return "-"
    return ",".join(str(int(row[f"{key}/f={b}"])) for b in range(N_BANDS))


def _curve(ax, row, x, **style) -> None:
    res = fit([row[f"threshold/f={b}"] for b in range(N_BANDS)])
    if res.defined:
        ax.plot(x, gaussian(x, *res.params), **style)


def channels_figure(table, pop, human):
    """The channels figure: the 76 networks and the human channel (left), the sweep (right).

    Left: the median and interquartile band of the 76 networks' fitted channels (a flat profile, no
    fit, at the cap 4), their median threshold per band, and the human channel with its group
    thresholds; right: the sweep's channels coloured by eps (flat fits dashed at 4)."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2), layout="constrained")
    x = np.linspace(0, N_BANDS - 1, 121)
    ticks = [f"{band_centre(b):g}" for b in range(N_BANDS)]
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2, sharey=None)
    nets = [n for n in pop.networks if n in table.values]
    curves = []
    for n in nets:  # each defined fit on the grid; a flat profile (no fit) sits at the cap, 4
        res = fit([table.values[n][f"threshold/f={b}"] for b in range(N_BANDS)])
        curves.append(gaussian(x, *res.params) if res.defined else np.full_like(x, 4.0))
    q25, q50, q75 = np.percentile(np.array(curves), [25, 50, 75], axis=0)
    left.fill_between(x, q25, q75, color="0.75", alpha=0.8, linewidth=0, label="networks: 25-75%")
    left.plot(x, q50, color="0.35", linewidth=1.8, label=f"networks: median of {len(nets)} fits")
    thresholds = np.array(
        [[table.values[n][f"threshold/f={b}"] for b in range(N_BANDS)] for n in nets]
    )
    left.plot(
        BANDS,
        np.median(thresholds, axis=0),
        "s",
        color="0.35",
        ms=4,
        label="networks: median threshold",
    )
    hfit = human
    left.plot(
        x,
        gaussian(x, *hfit.params),
        color="black",
        linewidth=2.2,
        label="human (14 observers, group)",
    )
    left.plot(
        BANDS,
        pop.human.thresholds,
        "o",
        mfc="white",
        mec="black",
        ms=6,
        label="human thresholds",
    )
    cmap = colormaps["viridis"]
    for i, n in enumerate(pop.sweep):
        row = table.values.get(n)
        if row is None:
            continue
        colour = cmap(i / max(1, len(pop.sweep) - 1))
        eps = pop.sweep_eps[n]
        if row["fit_defined"] == 1.0:
            _curve(right, row, x, color=colour, linewidth=1.5, label=f"eps {eps:g}")
        else:
            right.plot(
                x,
                np.full_like(x, 4.0),
                color=colour,
                linewidth=1.5,
                linestyle="--",
                label=f"eps {eps:g} (flat: no fit)",
            )
    right.plot(x, gaussian(x, *hfit.params), color="black", linewidth=2.2, label="human")
    for ax, title in ((left, "Networks and humans"), (right, "ResNet-50, L2 adversarial training")):
        ax.set_xticks(range(N_BANDS), ticks)
        ax.set_xlabel("noise band centre (cycles/image)")
        ax.set_ylim(-0.2, 4.3)
        ax.set_yticks(range(5), ["> 0.16", "0.16", "0.08", "0.04", "0.02"])
        ax.set_title(title, fontsize=10)
    left.set_ylabel("threshold noise SD (50% correct)")
    left.legend(fontsize=7, loc="upper left", framealpha=0.9)
    right.legend(fontsize=7, loc="lower right", ncol=2, framealpha=0.9)
    return fig


def _outcome(ctx, claim_id: str):
    for o in ctx.outcomes:
        if o.claim.id == claim_id:
            return o
    return None


def _r2_cells(d: dict) -> str:
    """R^2 | adjusted R^2 | p cells of a detail row.

    To the digits stable over fit starts where the statistic computed them (``stable``), else as
    computed."""
    st = d.get("stable") or {}
    return (
        f"{st.get('r2', _num(d['r2'], 3))} | {st.get('adjusted_r2', _num(d['adjusted_r2'], 3))} | "
        f"{st.get('p', format(d['p'], '.2g'))}"
    )


def _r2_rows(o, claims) -> list[str]:
    from repro.diagnostics.estimand import estimand_of

    if o is None:
        return []
    d = o.result.details
    est = estimand_of(o, claims)
    iv = est.intervals.get(est.headline)
    interval = "-" if iv is None else iv.text(method=False)
    st = d.get("stable") or {}
    rows = [
        f"| {d['model']} | {o.result.n} | {st.get('r2', _num(o.result.value, 3))} | "
        f"{st.get('adjusted_r2', _num(d['adjusted_r2'], 3))} | {st.get('p', f'{o.result.p:.2g}')} "
        f"| {interval} |"
    ]
    a = d["as_the_authors_code_computes_it"]
    rows.append(
        "| the same, as the authors' code computes it (signed bandwidth; flat fits kept, whose "
        "arbitrary centres move it: only its digits stable over fit starts) | "
        f"{a['n']} | {a['r2_stable_digits']} | - | - | - |"
    )
    if d.get("norm_criterion"):
        nm = d["norm_criterion"]
        rows.append(
            # its fits include near-degenerate _norm vectors whose end points wander: R^2 moved
            # 0.1715-0.1718 across OpenBLAS kernel families (and its spread over fit starts with
            # them), so it is printed to 2 decimals and p to 1 significant digit
            f"| the same, `_norm` thresholds (relative to the SD-0 accuracy; 2 decimals: "
            f"ill-conditioned fits) | {nm['n']} | {nm['r2']:.2f} | {nm['adjusted_r2']:.2f} | "
            f"{nm['p']:.1g} | - |"
        )
    ex = d.get("fit_exclusion", {}).get("by_slack", {})
    for slack, v in ex.items():
        rows.append(
            f"| the same, without the {len(v['left_out'])} fits whose half-maximum edge lies more "
            f"than {slack} octave(s) outside the tested bands (extrapolated) | {v['n']} | "
            f"{_r2_cells(v)} | - |"
        )
    for col, v in d.get("other_outcomes", {}).items():
        rows.append(f"| outcome `{col}` instead | {v['n']} | {_r2_cells(v)} | - |")
    return rows


def render(ctx) -> str:
    table = ctx.claims.table
    pop = population()
    human = human_fit()
    link = ctx.save_figure(channels_figure(table, pop, human), FIGURE)
    nets = [n for n in pop.networks if n in table.values]
    flat = [n for n in nets if table.values[n]["fit_defined"] != 1.0]
    no_acc = [n for n in nets if ROBUSTNESS not in table.values[n]]
    lines = [
        "## Subramanian et al.: spatial-frequency channels of 85 networks",
        "",
        "Every network file of `critical-band-masking/network_data/` scored by the suite's grid "
        "scorer (`python -m repro score critical-band --grid FILE`: the per-band threshold is the "
        "number of noise levels, counted from SD 0.16 down, at which 16-class accuracy does not "
        "exceed 50%; the fit and its three summaries as in `score critical-band`). The files' 35 "
        "conditions map onto the suite's 29 by pooling the 7 SD-0 cells into `sd=0` (221 trials "
        "per network), which only the `_norm` criterion reads.",
        "",
        f"Populations (`repro/studies/subramanian2023/population.toml`): **{len(pop.networks)} "
        "networks**, the paper's count, taken to be every network of the files except the "
        "adversarially trained ResNet-50s with eps > 0 (an assumption: the paper's list was not "
        f"available); **the sweep**, {len(pop.sweep)} ResNet-50s trained with L2 eps "
        f"{', '.join(f'{pop.sweep_eps[n]:g}' for n in pop.sweep)}. Files left "
        "out: " + "; ".join(f"`{f}` ({reason})" for f, reason in pop.left_out) + ". Networks whose "
        "thresholds are all equal (no fit; listed, never given the flat fit's numbers): "
        + ", ".join(f"`{n}`" for n in flat)
        + " of the 76; "
        + ", ".join(f"`{n}`" for n in pop.sweep if table.values[n]["fit_defined"] != 1.0)
        + " of the sweep. "
        "Without an accuracy under attack: "
        + (", ".join(f"`{n}`" for n in no_acc) or "none")
        + ". "
        f"Families (the clusters of the intervals): {len(pop.families)}.",
        "",
        "The human channel is the authors' group result (thresholds "
        f"{','.join(map(str, pop.human.thresholds))} of the {pop.human.observers} observers' mean "
        f"accuracy matrix; bandwidth {human.bandwidth:.2f} octave, centre "
        f"{human.center_frequency:.1f} cycles/image): the per-trial human data is not in the "
        "repository snapshot, so the human side carries no uncertainty here. Per observer the "
        f"authors' notebook prints bandwidth {pop.human.per_observer['bandwidth']['mean']:.2f} +- "
        f"{pop.human.per_observer['bandwidth']['sd']:.2f} (mean +- SD over observers).",
        "",
        "![Critical-band channels: the median and interquartile band of the 76 networks' fitted "
        "Gaussians with their median threshold per band, and the human channel with its group "
        f"thresholds; the adversarial-training sweep coloured by eps]({link})",
        "",
    ]
    lines += [
        "### Variance explained by the three channel properties",
        "",
        "In-sample R^2 of ordinary least squares with an intercept (the model the suite assumes: "
        "the paper's own is not stated in its abstract or its code); p of the overall F-test; the "
        "interval the claim's estimand calls for: the core's percentile cluster bootstrap over "
        "whole network families (2,000 resamples, seed 0; the sweep is one family: not estimable).",
        "",
        "| model | n | R^2 | adjusted R^2 | F-test p | 95% interval (families) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    lines += _r2_rows(_outcome(ctx, "subramanian2023_channel_explains_shape_bias"), ctx.claims)
    lines += _r2_rows(_outcome(ctx, "subramanian2023_channel_explains_at_robustness"), ctx.claims)
    lines += [
        "",
        "### The adversarial-training sweep",
        "",
        "| network | eps | thresholds | bandwidth | centre | PNS | shape bias | clean | L2 PGD eps "
        "0.1 |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for n in pop.sweep:
        row = table.values[n]
        lines.append(
            f"| `{n}` | {pop.sweep_eps[n]:g} | {_thresholds(row)} | {_fit_cells(row)} | "
            f"{_num(row.get('shape_bias'), 3)} | "
            f"{_num(row.get('accuracy/baccs'), 3)} | {_num(row.get(ROBUSTNESS), 3)} |"
        )
    lines += [
        "",
        "### Per-network table",
        "",
        "Thresholds under the protocol's absolute 50% criterion and the `_norm` variant; bandwidth "
        "(octaves), centre (cycles/image) and peak noise sensitivity (PNS) of the absolute "
        "thresholds' fit, each to the decimals that stay the same when the fit starts from "
        "slightly moved points (an ill-conditioned fit's end point moves with the start and with "
        "the CPU's kernels; `undetermined`: not even the leading digit is stable; `undefined "
        "(flat)`: all thresholds equal, no fit); *SD 0*: 16-class accuracy without "
        "noise (the `_norm` criterion's baseline; chance is 1/16 = 0.062, where relative "
        "thresholds mean nothing); shape bias = shape decisions of 1,200 cue-conflict trials; "
        "accuracies of 1,000 ImageNet validation images (clean, and under L2 PGD eps 0.1). *pop.*: "
        "in the 76 (`76`), the sweep (`AT`) or both.",
        "",
        "| network | family | pop. | thresholds | `_norm` | bandwidth | centre | PNS | SD 0 | "
        "shape bias | clean | PGD 0.1 |",
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sorted(table.values, key=lambda m: (pop.family_of(m), m)):
        row = table.values[n]
        where = "/".join(
            tag for tag, members in (("76", pop.networks), ("AT", pop.sweep)) if n in members
        )
        lines.append(
            f"| `{n}` | {pop.family_of(n)} | {where} | {_thresholds(row)} | "
            f"{_thresholds(row, 'threshold_norm')} | {_fit_cells(row)} | "
            f"{_num(row['sd0_correct'] / row['sd0_trials'], 3)} | "
            f"{_num(row.get('shape_bias'), 3)} | {_num(row.get('accuracy/baccs'), 3)} | "
            f"{_num(row.get(ROBUSTNESS), 3)} |"
        )
    return "\n".join(lines) + "\n"

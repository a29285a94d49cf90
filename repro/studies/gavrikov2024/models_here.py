"""Report section "Models measured here": 16-class measurements of the placed models.

The measurements of the study's session ``real`` (``nox -s real`` =
``python -m repro measure --session real``) for the models the report places that have them
(``models_here_data.session_models``: a run's models, else the store's), read from the measurement
store given to the report.

Per model: the critical band on the 16-class GraySplit protocol (our synthesis and the authors'
pre-made CBMSplit stimuli: thresholds and fits, both channels, and their paired agreement,
``repro.analysis.noise_agreement``); the spectral ratios with counts. They are NOT on the study's
scale and are not ranked among its 48 (its ``[placement] not_comparable``; the section says why);
shape bias, on the study's scale, is ranked in the report's section "Placement". Whatever the store
lacks is listed as missing, with the command that completes it; no value is ever filled in.
"""

from __future__ import annotations

from typing import Any

from repro.analysis import noise_agreement as na
from repro.analysis.chance import at_chance
from repro.analysis.noise_agreement import AGREEMENT
from repro.base.numbers import fmt_interval, fmt_num
from repro.base.stats import binomial_interval
from repro.scoring.spectral import CUTOFFS

from . import models_here_data as d
from .models_here_data import PREMADE, SPECTRAL, SYNTH, ModelsHere
from .models_here_figures import critical_band_pair

COMMAND = "python -m repro measure --session real"
NOT_RANKED = (
    "Not ranked among the 48, by choice: the study measured its critical band and spectral biases "
    "with 1000-class top-1 decisions on the 50,000 ImageNet validation images (critical band: the "
    "`_norm` criterion), these with 16-class decisions (mean softmax per category, chance 1/16) on "
    "the 1,050 GraySplit images of Subramanian et al. 2023. A 16-class decision is right far more "
    "often than a 1000-class top-1, which moves every threshold and ratio, and no mapping between "
    "the two scales is known; a rank or a strip beside the study's values would compare different "
    "quantities, so none is shown."
)


def _f(v: Any, digits: int = 3) -> str:
    return fmt_num(v, digits, none="undefined")


def _points(iv: tuple[float, float]) -> str:
    """A difference interval (fractions) in percentage points."""
    return fmt_interval((100 * iv[0], 100 * iv[1]), 1)


def _kn(k: int, n: int) -> str:
    return f"{k:,}/{n:,}"


def _status_lines(data: ModelsHere) -> list[str]:
    missing = data.missing()
    n_all = len(data.entries)
    lines = [f"{n_all - len(missing)} of {n_all} (model x measurement) results are in the store."]
    if missing:
        lines += [
            "",
            "**Missing** (nothing is filled in for them; complete with `nox -s real`):",
            "",
        ]
        lines += [
            f"- `{e.model}` x `{e.measurement}`: {e.status.replace('|', '/')}" for e in missing
        ]
    return lines


def _grid_row(model: str, label: str, rec: Any) -> str:
    counts = d.condition_counts(rec)
    k, n = counts["sd=0"]

    v = rec.values

    def vec(suffix: str) -> str:
        got = [v.get(f"threshold{suffix}/f={b}") for b in range(7)]
        return "-" if any(x is None for x in got) else "".join(str(int(x)) for x in got)  # type: ignore[arg-type]

    return (
        f"| `{model}` | {label} | {_kn(k, n)} | {fmt_interval(binomial_interval(k, n))} | "
        f"{vec('')} | {_f(v.get('bw'))} | {_f(v.get('cf'), 2)} | {_f(v.get('pns'))} | "
        f"{vec('_norm')} | {_f(v.get('bw_norm'))} | {_f(v.get('cf_norm'), 2)} | "
        f"{_f(v.get('pns_norm'))} |"
    )


def _agreement_lines(store: Any, data: ModelsHere, model: str) -> tuple[list[str], dict[str, Any]]:
    """The paired comparison of one model (text lines) and the threshold vectors for its figure."""
    syn, pre = data.get(model, SYNTH), data.get(model, PREMADE)
    vectors: dict[str, Any] = {}
    for label, e in (("ours", syn), ("pre-made", pre)):
        if e.ok:
            th = na.thresholds(d.condition_counts(e.record))
            vectors[f"{label}, absolute"], vectors[f"{label}, _norm"] = th["abs"], th["norm"]
    if not (syn.ok and pre.ok):
        need = " and ".join(f"`{e.measurement}`" for e in (syn, pre) if not e.ok)
        return [f"- `{model}`: no paired comparison: {need} missing."], vectors
    result = na.compare(na.pair_decisions(d.items(store, syn), d.items(store, pre)))
    ours_m, theirs_m = result.grids()
    th_o, th_t = na.thresholds(ours_m), na.thresholds(theirs_m)
    diff = result.differing()
    p = result.pooled
    head = (
        f"- `{model}`: {sum(c.n for c in result.cells):,} pairs; **{result.status}** ({result.why}"
        + (
            ""
            if not diff
            else ": "
            + ", ".join(
                f"`{c.condition}` ({c.k_ours} vs {c.k_theirs} of {c.n}, Holm p {c.p_holm:.2g})"
                for c in diff
            )
        )
        + f"). Pooled over the noisy cells: ours right {p.k_ours:,}, theirs {p.k_theirs:,} of "
        f"{p.n:,} (b = {p.b}, c = {p.c}; difference {100 * p.diff:+.1f} points "
        f"{_points(p.diff_interval)}; exact McNemar p = {p.p:.2g}"
        + (
            ": a systematic difference, the model is right more often on "
            f"{'ours' if p.b > p.c else 'theirs'}"
            if p.p < na.ALPHA
            else ": no systematic difference detected"
        )
        + "). "
        + f"Thresholds on the paired images, ours / pre-made: absolute {_vec(th_o['abs'])} / "
        f"{_vec(th_t['abs'])}, _norm {_vec(th_o['norm'])} / {_vec(th_t['norm'])}."
    )
    table = [
        "",
        "  <details><summary>per cell</summary>",
        "",
        "  | cell | our full grid | pairs | ours right | theirs right | b | c | difference "
        "(points) [95%] | p | Holm p |",
        "  |---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    full = d.condition_counts(syn.record)
    for c in result.cells:
        fk, fn = full[c.condition]
        table.append(
            f"  | `{c.condition}` | {100 * fk / fn:.1f}% of {fn:,} | {c.n} | {c.k_ours} | "
            f"{c.k_theirs} | {c.b} | {c.c} | {100 * c.diff:+.1f} {_points(c.diff_interval)} | "
            f"{c.p:.2g} | {c.p_holm:.2g} |"
        )
    table += ["", "  </details>"]
    return [head, *table], vectors


def _vec(v: Any) -> str:
    return "-" if v is None else "".join(str(int(x)) for x in v)


def _critical_band_section(ctx: Any, data: ModelsHere) -> list[str]:
    lines = [
        "### Critical band (16-class GraySplit protocol: NOT on the study's scale)",
        "",
        NOT_RANKED,
        "",
        "Our synthesis: all 29 conditions on each of the 1,050 GraySplit images (splits 0-4; "
        "Philox noise, seed 0). Pre-made: the authors' CBMSplit files, one condition per image "
        "(about 30 per cell, SD 0 pooled over the bands). Thresholds per band 0-6 as digits (noise "
        "levels passed, 0-4), under the protocol's absolute 50% criterion and relative to the "
        "model's own SD-0 accuracy (`_norm`, the study's); bandwidth (octaves), centre frequency "
        "(cycles/image), peak noise sensitivity of the Gaussian fit (undefined: a flat threshold "
        "vector). Clean: 16-class accuracy at SD 0 with its 95% Wilson interval.",
        "",
        "| model | stimuli | clean k/n | 95% | thresholds | bw | cf | pns | thresholds _norm | "
        "bw_norm | cf_norm | pns_norm |",
        "|---|---|---:|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for m in data.models:
        for meas, label in ((SYNTH, "our synthesis"), (PREMADE, "pre-made CBMSplit")):
            e = data.get(m, meas)
            lines.append(
                _grid_row(m, label, e.record)
                if e.ok
                else f"| `{m}` | {label} | missing | | | | | | | | | |"
            )

    lines += [
        "",
        "**Our synthesis against the pre-made stimuli** (same model, same images, same condition; "
        "only the noise draw differs): each CBMSplit file is paired with our stimulus of its "
        "condition on the GraySplit image it was made from. Per cell b counts the pairs only ours "
        "got right, c those only theirs got right; exact McNemar test, Holm over the 29 cells; "
        "differences with Newcombe's paired 95% interval. The label follows one declared "
        "rule: " + AGREEMENT + ". A ~30-pair cell detects only large differences; the pooled test "
        "over the 28 noisy cells is shown for smaller systematic ones. Besides the noise draw the "
        "two differ in one known way: the pre-made files are 8-bit JPEGs (quantization tables of "
        "quality 75) of the 0.2-contrast image, ours reach the model as float32; a systematic "
        "difference may come from that rather than from the noise.",
        "",
    ]
    store = d.store_of(ctx) if ctx.store is not None else None
    for m in data.models:
        if store is None:
            lines.append(f"- `{m}`: no store given to the report.")
            continue
        text, vectors = _agreement_lines(store, data, m)
        lines += text
        syn, pre = data.get(m, SYNTH), data.get(m, PREMADE)
        if syn.ok or pre.ok:
            fig = critical_band_pair(
                m,
                d.condition_counts(syn.record) if syn.ok else None,
                d.condition_counts(pre.record) if pre.ok else None,
                vectors,
            )
            link = ctx.save_figure(fig, f"models_here_critical_band_{m}.png")
            alt = (
                f"{m}: two 5 x 7 heat maps of 16-class accuracy (rows noise SD 0 to 0.16, columns "
                "the 7 bands), left our synthesis on GraySplit "
                f"({'measured' if syn.ok else 'not measured'}), middle the pre-made CBMSplit "
                f"stimuli ({'measured' if pre.ok else 'not measured'}); right the threshold "
                "vectors of both, absolute and _norm, with their fitted Gaussians."
            )
            lines += ["", f"  ![{alt}]({link})", ""]
    return lines


BIAS_CUTOFFS = (0.1, 0.5)  # the cut-offs the study's low- and high-frequency biases average


def _spectral_section(data: ModelsHere) -> list[str]:
    have = [m for m in data.models if data.get(m, SPECTRAL).ok]
    lines = [
        "### Spectral (16-class GraySplit protocol: NOT on the study's scale)",
        "",
        "Low-pass (LFC) and high-pass (HFC) filtered 16-class accuracy divided by clean accuracy "
        "on the 1,050 GraySplit images, per cut-off, with the counts (filtered k / clean k, both "
        "of 1,050); low- and high-frequency bias = the mean ratio at cut-offs 0.1-0.5, as the "
        "study defines them. Not ranked among the 48 (see the critical band above: a 16-class "
        "ratio is not a 1000-class one). *chance*: the filtered accuracy k/n is not above the "
        "16-class chance rate 1/16 (one-sided exact binomial p >= 0.05, `repro.analysis.chance`): "
        "the ratio there (about 1/16 over the clean accuracy) says nothing about the model's use "
        "of that band; a bias whose cut-offs are all at chance is flagged too.",
    ]
    if not have:
        return lines + ["", "No model has a spectral result in the store (see Missing above)."]
    counts = {m: d.condition_counts(data.get(m, SPECTRAL).record) for m in have}
    lines += [
        "",
        "| cut-off | " + " | ".join(f"`{m}` LFC | `{m}` HFC" for m in have) + " |",
        "|---|" + "---:|---:|" * len(have),
    ]

    chance_cells: dict[tuple[str, str], list[bool]] = {}
    for c in CUTOFFS:
        cells = []
        for m in have:
            ck = counts[m]["clean"][0]
            for kind in ("LFC", "HFC"):
                k, n = counts[m][f"{kind}/{c:g}"]
                low = bool(n) and at_chance(k, n)
                if BIAS_CUTOFFS[0] <= c <= BIAS_CUTOFFS[1]:
                    chance_cells.setdefault((m, kind), []).append(low)
                cells.append(
                    (f"{k / ck:.3f} ({k}/{ck})" + (" *chance*" if low else ""))
                    if ck
                    else "undefined"
                )
        lines.append(f"| {c:g} | " + " | ".join(cells) + " |")
    lines.append(
        "| clean (k/n) | " + " | ".join(f"{_kn(*counts[m]['clean'])} | " for m in have) + "|"
    )
    biases = {m: d.values(data.get(m, SPECTRAL).record) for m in have}

    def bias(m: str, kind: str, name: str) -> str:
        flags = chance_cells.get((m, kind), [])
        mark = (
            " *chance*"
            if flags and all(flags)
            else (f" ({sum(flags)} of {len(flags)} at chance)" if any(flags) else "")
        )
        return _f(biases[m].get(name)) + mark

    lines.append(
        "| low- / high-frequency bias | "
        + " | ".join(
            f"{bias(m, 'LFC', 'low_frequency_bias')} | {bias(m, 'HFC', 'high_frequency_bias')}"
            for m in have
        )
        + " |"
    )
    return lines


def render(ctx: Any) -> str:
    data = d.gather(ctx)
    if data is None:
        return ""
    lines = [
        "## Models measured here",
        "",
        "The 16-class measurements of the study's session `real` (`nox -s real` = `"
        + COMMAND
        + "`) for the "
        f"placed models that have them ({', '.join(f'`{m}`' for m in data.models)}), read from the "
        "measurement "
        "store. They are on another scale than the study's, so they are not ranked among its 48 "
        "(shape bias, on "
        'its scale, is in the section "Placement").',
        "",
    ]
    lines += _status_lines(data) + [""]
    lines += _critical_band_section(ctx, data) + [""]
    lines += _spectral_section(data)
    return "\n".join(lines) + "\n"

"""EfficientNet-Lite0: our critical-band synthesis against the authors' pre-made stimuli, image by
image. Same model, same images, same (SD, band) condition; only the noise draw differs (our
Philox fields, seed 0, vs the authors' NumPy draws saved as CBMSplit JPEGs).

Pairs: each of the 1,050 CBMSplit files (splits 0-4) with our stimulus of its condition on the
GraySplit image it was made from (``run_matched``: exactly the stimuli of the full
``critical_band_16`` grid for those pairs, at 1/29 of its cost). The pre-made decisions are the
snapshot's (``expected/real/efficientnet_lite0.json``), which ``test_lite0_matches_its_snapshot``
re-measures and checks decision by decision in the same tier.

What "agreement" means (``repro.analysis.noise_agreement.AGREEMENT``, the one rule the label
follows): ``differs`` when a cell's exact McNemar test of the paired decisions (b = pairs only ours
got right, c = pairs only theirs got right; two-sided binomial of b in b + c at 1/2) rejects at
family-wise level 0.05 (Holm over the 29 cells), or the pooled test over the 28 noisy cells rejects
with the pooled difference outside one image of a 30-image cell (3.3 points); ``agrees`` when no
cell differs and the pooled difference's 90% Newcombe interval lies inside +-3.3 points;
``inconclusive`` otherwise. The test asserts the per-cell part (no cell differs: what a ~30-pair
cell can detect; with b = 0 it needs c >= 11) and the label the rule gives the measured counts. The
threshold vectors are not asserted: they are step functions of ~30-image cell rates, where one image
flip near 50% moves a threshold by one, so there is no test of them at this n; they are reported.

Reported, never hidden: every cell with an uncorrected p < 0.05 and the pooled McNemar test over
all pairs of the 28 noisy cells (which sees a small systematic shift, e.g. noise weakened by
JPEG compression, that no single cell can) are raised as warnings (pytest's warnings summary),
and the whole per-cell table is printed (``-rP`` or ``-s`` shows it).

Measured on the development machine (2 CPU cores, torch 2.14.1, batch 16): no cell differs (the
smallest uncorrected p is 0.0625, in ``f=2/sd=0.04``: 5 vs 0 discordant pairs); but pooled over the
829 pairs of the noisy cells Lite0 is right on 409 of ours and 376 of theirs (b = 64, c = 31, exact
McNemar p = 0.00092, +4.0 points, 95% Newcombe interval [+1.7, +6.3]): our stimuli are
systematically a little easier, outside one image of a cell, so by the rule Lite0 ``differs`` (until
this rule, the label said "agree" beside that p). A candidate cause beyond the noise draw: the
pre-made files are 8-bit JPEGs (quality 75) of the 0.2-contrast image, ours float32. Thresholds
on the paired images, ours / pre-made: absolute 0122442 / 0122443, _norm 0112442 / 0012342.
"""

from __future__ import annotations

import warnings

import pytest

from repro.analysis import noise_agreement as na
from repro.datasets.critical_band_stimuli import category_of, graysplit_name
from repro.measurements.loop import run_matched
from repro.measurements.probe_data import open_data
from repro.measurements.registry import get
from repro.probes.sixteen_class import premade_condition

pytestmark = pytest.mark.real


def table(result: na.Agreement) -> str:
    rows = [
        (
            f"{'cell':14s} {'n':>3s} {'ours':>4s} {'theirs':>6s} {'b':>3s} {'c':>3s} "
            f"{'p':>8s} {'Holm p':>8s}"
        )
    ]
    for c in [*result.cells, result.pooled]:
        rows.append(
            f"{c.condition:14s} {c.n:3d} {c.k_ours:4d} {c.k_theirs:6d} {c.b:3d} {c.c:3d} "
            f"{c.p:8.3g} "
            f"{c.p_holm:8.3g}"
        )
    return "\n".join(rows)


def test_lite0_synthesis_against_the_premade_stimuli(lite0, real_data, snapshot):
    snap = snapshot["sets"]["cbmsplit"]
    assert snap["measurement"] == "critical_band_16_premade" and len(snap["names"]) == 1050
    theirs = [
        {
            "imagename": n,
            "condition": premade_condition(n)[0],
            "category": category_of(n),
            "object_response": dec,
        }
        for n, dec in zip(snap["names"], snap["decisions"], strict=True)
    ]
    conditions = {graysplit_name(r["imagename"]): r["condition"] for r in theirs}
    assert len(conditions) == 1050  # one pre-made file per GraySplit image

    m = get("critical_band_16")
    source = open_data(m, real_data / "critical-band-masking" / "GraySplit")
    ours = run_matched(lite0, source, conditions, device="cpu", batch_size=16, seed=m.seed)
    assert len(ours.records) == 1050 and sum(c.n for c in ours.conditions) == 1050

    result = na.compare(na.pair_decisions(ours.records, theirs))
    assert [c.condition for c in result.cells] == list(na.CONDITIONS)
    assert sum(c.n for c in result.cells) == 1050
    assert result.cells[0].n == snap["counts"]["sd=0"][1]  # the pooled SD-0 cell (221 files)
    ours_grid, theirs_grid = result.grids()
    assert theirs_grid == {
        c: tuple(kn) for c, kn in snap["counts"].items()
    }  # theirs = the snapshot's grid

    th_ours, th_theirs = na.thresholds(ours_grid), na.thresholds(theirs_grid)
    print(table(result))
    print(
        f"thresholds ours / pre-made: abs {th_ours['abs']} / {th_theirs['abs']}, "
        f"_norm {th_ours['norm']} / {th_theirs['norm']}"
    )
    nominal = [c for c in result.cells if c.p < na.ALPHA]
    if nominal:
        warnings.warn(
            "Lite0 synthesis vs pre-made, cells with uncorrected p < 0.05 (Holm p given): "
            + "; ".join(
                f"{c.condition}: {c.k_ours} vs {c.k_theirs} of {c.n} (b={c.b}, c={c.c}, "
                f"p={c.p:.2g}, Holm {c.p_holm:.2g})"
                for c in nominal
            ),
            stacklevel=1,
        )
    pooled = result.pooled
    if pooled.p < na.ALPHA:
        warnings.warn(
            "Lite0 synthesis vs pre-made, pooled over the 28 noisy cells: ours right "
            f"{pooled.k_ours} vs "
            f"theirs {pooled.k_theirs} of {pooled.n} (b={pooled.b}, c={pooled.c}, exact McNemar "
            f"p={pooled.p:.2g}): a systematic difference smaller than a cell can show",
            stacklevel=1,
        )
    assert not result.differing(), (
        f"cells differ at family-wise {na.ALPHA}: "
        f"{[c.condition for c in result.differing()]}:\n" + table(result)
    )
    # the label the declared rule gives Lite0's counts: the pooled shift (+4.0 points, p = 0.00092)
    # is outside one image of a 30-image cell
    assert result.status == na.DIFFERS and "pooled McNemar test rejects" in result.why, result.why

"""EfficientNet-Lite0 measured end to end on real stimuli, by the runner exactly as ``python -m
repro reproduce`` measures it with no dataset configured (``tests.real.shipped``), compared with
its snapshot (``expected/real/efficientnet_lite0.json``, written by ``python -m
tests.real.make_snapshots``):

- shape bias on all 1,280 cue-conflict images (n = 1,200 conflict trials; shape and texture
  counts), through the shape-bias probe;
- the critical-band grid of the pre-made CBMSplit stimuli (splits 0-4, 1,050 images, 29
  cells), through the 16-class pre-made probe.

Tolerance, derived from the counts and from float rounding: a decision is FRAGILE when its
margin (top category score minus the runner-up, mean softmax) is at most the snapshot's
``fragile_bound`` = 10 x the largest category-score difference between float32 and float64
measured on the snapshot machine. Every non-fragile decision must equal the snapshot's,
image by image; each count may move by at most the number of fragile decisions it contains.
Measured on the development machine (2 CPU cores, torch 2.14.1, batch 16): float32 vs
float64 decisions flip on 0 of the 1,280 cue-conflict images and 0 of the 1,050 CBMSplit
images; the largest category-score difference is 1.53e-6 (cue-conflict) and 1.74e-6
(CBMSplit), so the bounds are 1.53e-5 and 1.74e-5, and 7 and 11 decisions are fragile
(smallest margins 7.1e-6 and 6.1e-7). So at most 7 of the shape/texture decisions and at
most 11 decisions spread over the 29 cells may differ on another CPU; all others must not.
A mismatch of the decoded pixels' sha256 is reported first (another JPEG/PNG decoder).
"""

from __future__ import annotations

import pytest

from repro.probes.sixteen_class import premade_condition
from repro.scoring.shape_bias import shape_class, texture_class
from tests.real.measure import (
    category_scores,
    counts_of,
    decisions,
    margins,
    probe_decisions,
)

pytestmark = pytest.mark.real


def _members(stimulus_set: str, names: list[str], conditions: list[str]) -> dict[str, list[int]]:
    """Which images each count is made of (indices into ``names``)."""
    if stimulus_set == "cue_conflict":
        trials = [i for i, n in enumerate(names) if shape_class(n) != texture_class(n)]
        return dict.fromkeys(conditions, trials)
    cells: dict[str, list[int]] = {c: [] for c in conditions}
    for i, n in enumerate(names):
        cells[premade_condition(n)[0]].append(i)
    return cells


MEASUREMENT = {"cue_conflict": "shape_bias", "cbmsplit": "critical_band_16_premade"}


@pytest.mark.parametrize("stimulus_set", ["cue_conflict", "cbmsplit"])
def test_lite0_matches_its_snapshot(stimulus_set, shipped, snapshot):
    """Measured by the runner as ``reproduce`` measures it (the tier's one measurement,
    ``tests.real.shipped``): the stored record and its per-item rows against the snapshot."""
    snap = snapshot["sets"][stimulus_set]
    run = shipped.as_run(MEASUREMENT[stimulus_set])
    lo, hi = run.input_range
    assert 0.0 <= lo and 0.9 < hi <= 1.0, (
        "the probe must hand [0, 1] images to the (normalizing) model"
    )
    assert run.names == snap["names"]
    assert run.pixels_sha256 == snap["pixels_sha256"], (
        "decoded pixels differ from the snapshot's: another image decoder "
        "(Pillow/libjpeg version), "
        "not a model change; re-make the snapshot where the decoder is the reference one"
    )
    scores = category_scores(run.logits)
    mine = decisions(scores)
    assert mine == probe_decisions(run, stimulus_set)  # the probe decided what the logits say
    fragile = margins(scores) <= snap["fragile_bound"]
    firm_changed = [
        n
        for n, a, b, f in zip(run.names, mine, snap["decisions"], fragile, strict=True)
        if a != b and not f
    ]
    assert not firm_changed, (
        f"{len(firm_changed)} non-fragile decisions changed, e.g. {firm_changed[:5]}"
    )
    counts, want = counts_of(run), snap["counts"]
    assert list(counts) == list(want)
    members = _members(stimulus_set, run.names, list(counts))
    for cond, (k, n) in counts.items():
        tol = int(sum(fragile[i] for i in members[cond]))
        wk, wn = want[cond]
        assert abs(k - wk) <= tol, (
            f"{cond}: {k} vs snapshot {wk} (tolerance {tol} fragile decisions)"
        )
        if cond == "shape_bias":  # n = shape + texture decisions moves with them
            assert abs(n - wn) <= tol, f"{cond}: n {n} vs snapshot {wn} (tolerance {tol})"
        else:
            assert n == wn, f"{cond}: n {n} vs snapshot {wn}"
    if stimulus_set == "cue_conflict":
        assert counts["shape"][1] == counts["texture"][1] == 1200
    else:
        assert sum(n for _, n in counts.values()) == 1050 and len(counts) == 29

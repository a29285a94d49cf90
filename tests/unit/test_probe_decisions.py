"""The probes' decision paths against answers computed by hand from the known-answer models of
``tests/known_models.py`` (imperfect, uneven outputs, logits that vary within a category).

Each expected value is derived below in comments from the model's construction. The inputs are
chosen so that the plausible bugs give different numbers; ``*_rules_disagree`` tests prove
that (the wrong rules' answers are computed there too), so a test here passing with a bug
reintroduced would mean the bug changes nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from repro.datasets.categories16 import CategoryMapping, get_mapping
from repro.measurements.loop import run
from repro.scoring import critical_band as cb
from tests import known_models as km

pytestmark = pytest.mark.unit

# --------------------------------------------------------------------------- shape bias
#
# Category score under the study's rule = mean softmax probability over the category's classes
# = (1 / |C|) sum_{i in C} exp(l_i) / Z; Z is common to all categories, so compare
# mean exp(l_i); every class outside the listed categories has logit 0 (mean exp = 1).
#
#  case (x repeats)     study: softmax mean                 raw-logit mean
#  knife-bird  (x1)     knife e^3=20.1 > bird e^2.5=12.2     knife 3 > 2.5
#  dog-oven    (x2)     oven e=2.72 > dog (e^5+108e^-3)/109  oven 1 > dog -2.93
#                       = 1.41 > others 1
#  bear-cat    (x3)     bear (e^4+3e^-6)/4=13.6 > cat e^2    cat 2 > bear -3.5
#  truck-car   (x4)     car e^2=7.39 > truck                 car 2 > truck -1.31
#                       (e^3.5+7e^-2)/8 = 4.26
#  clock-chair (x1)     elephant e^3                         elephant 3
#  airplane-airplane    airplane (dropped: shape == texture)
#
#  case (x repeats)     softmax sum         max
#  knife-bird  (x1)     bird 49e^2.5=597    knife 3
#  dog-oven    (x2)     dog 153.8           dog 5
#  bear-cat    (x3)     dog 109 (others 0)  bear 4
#  truck-car   (x4)     dog 109             truck 3.5
#  clock-chair (x1)     dog 109             elephant 3
#
# study rule: shape decisions S = 1 + 3 = 4, texture T = 2 + 4 = 6, other 1; n = 11 -> 0.4
# raw logits: S = 1, T = 9 -> 0.1;  sum: S = 2, T = 1 -> 2/3;  max: S = 10, T = 0 -> 1.0;
# sum of raw logits: S = 0, T = 10 -> 0.0

STUDY_DECISIONS = [
    "knife",
    "oven",
    "oven",
    "bear",
    "bear",
    "bear",
    "car",
    "car",
    "car",
    "car",
    "elephant",
    "airplane",
]


def test_shape_bias_probe_decides_by_mean_softmax_probability(torch_threads):
    res = run(
        "shape_bias", km.CueConflictLookup(), km.cue_conflict_source(), batch_size=5, subj="lookup"
    )
    assert [r["object_response"] for r in res.records] == STUDY_DECISIONS
    counts = {c.condition: (c.k, c.n) for c in res.conditions}
    assert counts == {"shape_bias": (4, 10), "shape": (4, 11), "texture": (6, 11)}
    assert res.value == pytest.approx(0.4)


def test_shape_bias_rules_disagree_on_these_inputs():
    """The alternatives give 0.1 (raw logits), 2/3 (sum), 1.0 (max), 0.0 (sum of raw logits)."""
    from repro.scoring.shape_bias import decision_rows, shape_bias

    logits = km.cue_conflict_logit_table().numpy()
    probs = torch.softmax(torch.from_numpy(logits), dim=1).numpy()
    names = km.cue_conflict_source().names
    m = get_mapping()

    def score(decisions):
        return shape_bias(decision_rows(decisions, names, subj="x")).shape_bias

    rows = np.repeat(
        np.arange(len(km.CUE_CONFLICT_CASES)), [c.repeats for c in km.CUE_CONFLICT_CASES]
    )
    with_agg = {
        a: CategoryMapping(m.name, m.categories, m.indices, a) for a in ("mean", "sum", "max")
    }
    assert score(with_agg["mean"].decisions(probs[rows])) == pytest.approx(0.4)
    assert score(with_agg["mean"].decisions(logits[rows])) == pytest.approx(0.1)
    assert score(with_agg["sum"].decisions(probs[rows])) == pytest.approx(2 / 3)
    assert score(with_agg["max"].decisions(probs[rows])) == pytest.approx(1.0)
    assert score(with_agg["sum"].decisions(logits[rows])) == pytest.approx(0.0)


def test_stylized_benchmark_uses_the_same_decision(torch_threads):
    """Correct = decision equals the label (the shape): knife, bear x3, airplane -> 5 of 12."""

    res = run("stylized", km.CueConflictLookup(), km.cue_conflict_source(), batch_size=4)
    assert [r["decision"] for r in res.records] == STUDY_DECISIONS
    assert (res.conditions[0].k, res.conditions[0].n) == (5, 12)
    assert res.value == pytest.approx(100 * 5 / 12)


# --------------------------------------------------------------------------- critical band
#
# 40 flat images, labels: 24 x class 0, 14 x class 1, 2 x class 2. The ConditionReader answers
# class 0 on the clean stimulus -> clean accuracy 24/40 = 0.60. Answer A (class 0) = 0.60
# (relative 1.0), B (class 1) = 0.35 (relative 0.583), Z (class 5) = 0.
# Threshold: count SD levels from 0.16 downward until accuracy exceeds 0.5.
#   band  SD .02 .04 .08 .16   absolute (acc > 0.5)    _norm (acc / 0.6 > 0.5)
#   0-2        A   A   B   Z   Z,B fail, A passes: 2   Z fails, B passes: 1
#   3          B   B   Z   Z   all fail: 4             Z,Z fail, B passes: 2
#   4          A   B   B   Z   Z,B,B fail: 3           Z fails: 1
#   5          A   A   A   B   B fails: 1              B passes: 0
#   6          A   A   A   A   0                       0

ABSOLUTE = [2, 2, 2, 4, 3, 1, 0]
NORM = [1, 1, 1, 2, 1, 0, 0]


@pytest.fixture(scope="module")
def cb_result(torch_threads):
    return run("critical_band", km.ConditionReader(), km.cb_flat_source(), batch_size=40, seed=0)


def test_critical_band_counts_per_condition(cb_result):
    counts = {c.condition: (c.k, c.n) for c in cb_result.conditions}
    assert counts["sd=0"] == (24, 40)
    k_of = {km.A: 24, km.B: 14, km.Z: 0}
    for group, answers in km.CB_ANSWERS.items():
        bands = range(3) if group == "0-2" else [int(group)]
        for band in bands:
            for sd, answer in zip((0.02, 0.04, 0.08, 0.16), answers, strict=True):
                assert counts[cb.condition_name(band, sd)] == (k_of[answer], 40), (band, sd)


def test_critical_band_thresholds_absolute_and_relative_to_clean(cb_result):
    v = cb_result.values
    assert [int(v[f"threshold/f={f}"]) for f in range(7)] == ABSOLUTE
    assert [int(v[f"threshold_norm/f={f}"]) for f in range(7)] == NORM
    norm_fit, abs_fit = cb.fit(NORM), cb.fit(ABSOLUTE)
    assert v["cf_norm"] == norm_fit.center_frequency and v["bw_norm"] == norm_fit.bandwidth
    assert v["pns_norm"] == norm_fit.peak_noise_sensitivity
    assert v["cf"] == abs_fit.center_frequency and v["pns"] == abs_fit.peak_noise_sensitivity
    assert cb_result.value == v["cf_norm"]
    # the two variants really differ here (the test can tell them apart)
    assert not math.isclose(v["cf_norm"], v["cf"]) and not math.isclose(v["pns_norm"], v["pns"])


# --------------------------------------------------------------------------- spectral
#
# 64 images of 32 px: 32 flat (label 0), 16 with cosines at column frequencies 1 and 12
# (label 1), 16 with the same cosines but label 2. A detector of frequency k answers 1 when it
# sees k, else 0: clean 32 + 16 = 48 of 64 (0.75). Where the filter removes k it answers 0
# everywhere: 32 of 64 (0.5), ratio 0.5 / 0.75 = 2/3; where k survives 48 of 64, ratio 1.
# Box radii at 32 px (half = 16), r = int(c * 16) low-pass, int((1 - c) * 16) high-pass with
# the study's floats (0.30000000000000004 ...):
#   c        0.01 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 0.99
#   low r      0   1   3   4   6   8   9  11  12  14  15
#   high r    15  14  12  11   9   8   6   4   3   1   0
# column frequency k survives the low-pass iff r >= k, the high-pass iff r <= k.

CUTS = ("0.01", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.99")
LOW_R = (0, 1, 3, 4, 6, 8, 9, 11, 12, 14, 15)
HIGH_R = (15, 14, 12, 11, 9, 8, 6, 4, 3, 1, 0)


@pytest.mark.parametrize(
    "k", [km.LOW_K, km.HIGH_K], ids=["low-frequency-model", "high-frequency-model"]
)
def test_spectral_ratios_are_relative_to_the_clean_count(torch_threads, k):
    res = run("spectral", km.FrequencyDetector(k), km.two_frequency_source(), batch_size=24)
    counts = {c.condition: (c.k, c.n) for c in res.conditions}
    assert counts["clean"] == (48, 64)
    for c, lo, hi in zip(CUTS, LOW_R, HIGH_R, strict=True):
        assert counts[f"LFC/{c}"] == ((48 if lo >= k else 32), 64), c
        assert counts[f"HFC/{c}"] == ((48 if hi <= k else 32), 64), c
        assert res.values[f"LFC/{c}"] == pytest.approx(1.0 if lo >= k else 2 / 3), c
        assert res.values[f"HFC/{c}"] == pytest.approx(1.0 if hi <= k else 2 / 3), c
    # biases: mean over c = 0.1..0.5 (low r 1, 3, 4, 6, 8; high r 14, 12, 11, 9, 8)
    if k == km.LOW_K:
        assert res.values["low_frequency_bias"] == pytest.approx(1.0)
        assert res.values["high_frequency_bias"] == pytest.approx(2 / 3)
    else:  # k = 12: no low-pass radius >= 12 at these cut-offs; high-pass r <= 12 for c = 0.2..0.5
        assert res.values["low_frequency_bias"] == pytest.approx(2 / 3)
        assert res.values["high_frequency_bias"] == pytest.approx((2 / 3 + 4) / 5)

"""The ImageNet-X claim statistics, driven directly: Kendall's W against its definition and the
mean-pairwise-Spearman identity, strength parsing, trend and hardest-factor statistics on
synthetic factor tables (known answers) and on the published tables."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from repro.base.errors import ConfigError, DataError
from repro.scoring.imagenet_x import FACTORS
from repro.studies.imagenetx import statistics as ic
from repro.studies.imagenetx.published import read_tables

pytestmark = pytest.mark.unit


def _write_table(root, model_set, models, acc_rows, average):
    path = (
        root / "imagenetx" / "factor_accuracies" / model_set / "class" / "accuracies_per_factor.csv"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(acc_rows, columns=list(FACTORS))
    frame.insert(0, "model", models)
    frame["average"] = average
    frame.to_csv(path, index=False)
    return SimpleNamespace(
        data_dir=root, cache={}, table=read_tables(root, [(model_set, "class")], check_sha256=False)
    )


def test_kendalls_w_perfect_and_reversed_agreement():
    x = np.arange(16.0)
    assert ic.kendalls_w(np.tile(x, (5, 1)))[0] == pytest.approx(1.0)
    w, p = ic.kendalls_w(np.vstack([x, x[::-1]]))
    assert w == pytest.approx(0.0, abs=1e-12) and p > 0.99


def test_kendalls_w_equals_mean_pairwise_spearman_identity():
    rng = np.random.default_rng(3)
    data = rng.random((12, 16)) + np.arange(16) * 0.05
    m = data.shape[0]
    w, _ = ic.kendalls_w(data)
    pairs = [
        stats.spearmanr(data[i], data[j]).statistic for i, j in itertools.combinations(range(m), 2)
    ]
    assert (m * w - 1) / (m - 1) == pytest.approx(np.mean(pairs), abs=1e-12)


def test_kendalls_w_tie_correction_matches_the_formula():
    data = np.array([[1, 1, 2, 3], [1, 2, 2, 3], [3, 1, 2, 2.0]])
    r = stats.rankdata(data, axis=1)
    m, n = r.shape
    s = ((r.sum(0) - m * (n + 1) / 2) ** 2).sum()
    t = sum(((c**3) - c).sum() for c in (np.unique(row, return_counts=True)[1] for row in r))
    assert ic.kendalls_w(data)[0] == pytest.approx(12 * s / (m**2 * (n**3 - n) - m * t))


def test_strength_parsing():
    names = [
        "eval_resnet50_crop8.0_wd0.0001_id1",
        "eval_resnet50_crop100.0_wd0.0001_id2",
        "eval_resnet50_crop0.2_wd0.0001_id3",
    ]
    assert ic.parse_strengths(names, "crop").tolist() == pytest.approx([92.0, 0.0, 99.8])
    assert ic.parse_strengths(
        ["eval_resnet50_crop100.0_wd1e-05_color37.0_id5"], "colorjitter"
    ).tolist() == [37.0]
    assert ic.parse_strengths(
        ["eval_resnet50_crop100.0_wd1e-05_color0.0_smoothing28.0_id1"], "gaussian_blur"
    ).tolist() == [28.0]
    with pytest.raises(DataError, match="no strength in its name"):
        ic.parse_strengths(["resnet50"], "crop")
    with pytest.raises(ConfigError, match="unknown ImageNet-X sweep"):
        ic.parse_strengths(names, "mixup")


@pytest.mark.parametrize("direction", [1, -1])
def test_augmentation_trend_on_a_synthetic_sweep(tmp_path, direction):
    scales = [8.0, 20.0, 35.0, 50.0, 65.0, 80.0, 100.0]
    models = [
        f"eval_resnet50_crop{s}_wd0.0001_id{i}{j}" for i, s in enumerate(scales) for j in range(3)
    ]
    strength = np.array([100 - s for s in scales for _ in range(3)])
    rng = np.random.default_rng(0)
    acc = np.full((len(models), 16), 0.7) + rng.normal(0, 0.001, (len(models), 16))
    acc[:, FACTORS.index("smaller")] = (
        0.7 - direction * strength / 1000
    )  # error rises (falls) with strength
    ctx = _write_table(tmp_path, "crop", models, acc, 0.75)
    r = ic.augmentation_trend(ctx, sweep="crop", factor="smaller", resamples=500)
    assert r.value == pytest.approx(direction * 1.0)
    assert r.p < 1e-10 and r.n == 21
    assert r.details["levels"] == 7
    lo, hi = r.interval
    assert lo <= r.value <= hi
    assert "500 resamples, seed 0" in r.interval_method
    assert (
        r.details["mean_error_ratio_stronger_half"] > r.details["mean_error_ratio_weaker_half"]
    ) == (direction > 0)
    with pytest.raises(ConfigError, match="unknown ImageNet-X factor 'small'"):
        ic.augmentation_trend(ctx, sweep="crop", factor="small")


def test_single_strength_sweep_has_no_trend(tmp_path):
    models = [f"eval_resnet50_crop8.0_wd1e-05_color100.0_id{i}" for i in range(4)]
    ctx = _write_table(tmp_path, "colorjitter_crop", models, np.full((4, 16), 0.6), 0.7)
    with pytest.raises(DataError, match="all 4 models have the same strength"):
        ic.augmentation_trend(ctx, sweep="colorjitter_crop", factor="smaller")
    rows = ic.spillover_table(ctx, sweeps=("colorjitter_crop",))
    assert len(rows) == 16 and all(r["rho"] is None and r["levels"] == 1 for r in rows)


def test_hardest_factor_share_synthetic(tmp_path):
    rng = np.random.default_rng(1)
    acc = 0.7 + rng.normal(0, 0.01, (10, 16))
    acc[:, FACTORS.index("texture")] = 0.3  # the hardest for all 10
    acc[:7, FACTORS.index("style")] = 0.4  # second for 7
    ctx = _write_table(tmp_path, "imagenet_testbed", [f"m{i}" for i in range(10)], acc, 0.7)
    r = ic.hardest_factor_share(ctx, top=2)
    assert r.details["factor"] == "texture" and r.value == 1.0 and r.details["k"] == 10
    assert r.details["share_in_top"]["style"] == pytest.approx(0.7)
    assert r.p == pytest.approx(0.5**10)
    w = ic.failure_mode_concordance(ctx, resamples=200)
    assert w.details["factors_by_mean_rank"][:2] == ["texture", "style"]
    assert w.interval[0] <= w.value <= w.interval[1]


def test_spillover_uses_the_shared_holm():
    from repro.analysis import multiple

    assert (
        ic.holm is multiple.holm
    )  # tested against hand-computed values in test_robustness_statistics
    assert ic.holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])

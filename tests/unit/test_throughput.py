"""The throughput harness (repro.runner.throughput, ``python -m repro throughput``) and the autotune
cache (repro.runner.autotune): values from correctness matrices computed by hand, the bootstrap
interval, the agreement of two precisions, and a real run on a few real stimuli whose JSON the
cost model reads."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repro.runner import throughput as tp

pytestmark = pytest.mark.unit


def test_critical_band_values_of_the_human_threshold_vector():
    """Thresholds [0,0,0,0,2,2,0] (absolute criterion) give bandwidth 1.00, centre 39.6 and peak
    noise sensitivity 1.00 (METHODS.md section 3)."""
    from repro.probes import critical_band as cbp

    n = 10
    correct = np.ones((n, 29), dtype=bool)
    for j, (_, band, sd) in enumerate(cbp.conditions()):
        if band in (4, 5) and sd >= 0.08:
            correct[: n // 2 + 1, j] = False  # 4/10 correct: not above 50%
    v = tp.critical_band_values(correct)
    assert v["bw"] == pytest.approx(1.0, abs=5e-3) and v["cf"] == pytest.approx(39.6, abs=0.05)
    assert v["pns"] == pytest.approx(1.0, abs=1e-6)


def test_spectral_values_by_hand():
    from repro.scoring import spectral as sc

    names = [c for c, _, _ in sc.conditions()]
    correct = np.zeros((10, 23), dtype=bool)
    correct[:, 0] = True  # clean 10/10
    for j, name in enumerate(names, start=1):
        k = {"LFC/0.1": 2, "LFC/0.2": 4, "LFC/0.3": 6, "LFC/0.4": 8, "LFC/0.5": 10, "HFC/0.1": 5}.get(name, 0)
        correct[:k, j] = True
    v = tp.spectral_values(correct)
    assert v["low_frequency_bias"] == pytest.approx((0.2 + 0.4 + 0.6 + 0.8 + 1.0) / 5)
    assert v["high_frequency_bias"] == pytest.approx(0.5 / 5)
    correct[:, 0] = False
    assert tp.spectral_values(correct) == {"low_frequency_bias": None, "high_frequency_bias": None}


def test_cli_lists_the_harness_stages():
    from repro.cli import throughput as cli

    assert cli.STAGES == tp.STAGES


def test_bootstrap_interval():
    assert tp.bootstrap_interval(lambda idx: 0.25, 40) == (0.25, 0.25)
    hits = np.r_[np.ones(30), np.zeros(70)]
    lo, hi = tp.bootstrap_interval(lambda idx: float(hits[idx].mean()), 100)
    assert lo < 0.3 < hi and 0.05 < hi - lo < 0.3  # about +-1.96 * sqrt(.21 / 100) = +-0.09
    assert tp.bootstrap_interval(lambda idx: None, 10) is None


def test_agreement_counts_and_verdicts():
    a = tp.StageRun("classify", "float32", 4, argmax=[np.array([1, 2, 3, 4])], decisions16=[np.array([0, 0, 1, 1])],
                    values={"accuracy16": 0.5, "other": 0.5}, intervals={"accuracy16": (0.2, 0.8), "other": (0.45, 0.55)})
    b = tp.StageRun("classify", "bfloat16", 4, argmax=[np.array([1, 2, 9, 4])], decisions16=[np.array([0, 0, 1, 1])],
                    values={"accuracy16": 0.75, "other": 0.6})
    rep = tp.Report("m", "cpu", 4, False, {("classify", "float32"): a, ("classify", "bfloat16"): b})
    ag = rep.agreement("classify")
    assert ag["changed_argmax"] == [1, 4] and ag["changed_decision16"] == [0, 4]
    assert ag["values"]["accuracy16"]["bfloat16_inside"] is True
    assert ag["values"]["other"]["bfloat16_inside"] is False and ag["bfloat16_acceptable"] is False
    assert ag["values"]["other"]["delta"] == pytest.approx(0.1)


def test_harness_on_real_stimuli_and_the_plan_reads_it(run_cli, data_dir, tmp_path):
    out = tmp_path / "tp.json"
    res = run_cli("throughput", "--model", "tiny_random_a", "--device", "cpu", "--limit", "6", "--batch-size", "4",
                  "--stages", "shape_bias,critical_band,classify,pgd", "--data-dir", data_dir, "--out", out,
                  env={"REPRO_CACHE_DIR": str(tmp_path / "cache")})
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text())
    runs = {(r["stage"], r["precision"]): r for r in doc["runs"]}
    assert runs[("critical_band", "float32")]["forward"] == 6 * 29 and runs[("classify", "bfloat16")]["forward"] == 6
    assert runs[("shape_bias", "float32")]["forward"] == 6
    assert runs[("pgd", "float32")]["forward"] == 6 * (tp.PGD_STEPS + 1) and runs[("pgd", "float32")]["backward"] == 6 * tp.PGD_STEPS
    assert all(r["images_per_s"] > 0 for r in doc["runs"])
    ag = doc["agreement"]["critical_band"]
    assert ag["changed_argmax"][1] == 6 * 29 and 0 <= ag["changed_argmax"][0] <= 6 * 29
    assert "images/s" in res.stdout and "agreement of bfloat16" in res.stdout
    plan = run_cli("plan", "--throughput", out, "--measurements", "imagenet,critical_band,pgd_low,shape_bias")
    assert plan.returncode == 0, plan.stderr
    assert "measured: tiny_random_a on cpu" in plan.stdout
    bad = run_cli("throughput", "--model", "tiny_random_a", "--stages", "shape,spectral")
    assert bad.returncode == 2 and "--stages" in bad.stderr


def test_autotune_measures_once_and_caches(tmp_path, monkeypatch, torch_threads):
    import torch

    from repro.runner import autotune

    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=4), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()).eval()
    first = autotune.tune(model, "conv", "cpu", candidates=(2, 4), repeats=1)
    assert not first.cached and len(first.table) == 4 and {r[0] for r in first.table} == {2, 4}
    assert (first.batch_size, first.channels_last, first.images_per_s) in {(b, cl, v) for b, cl, v in first.table}
    assert first.images_per_s == max(v for _, _, v in first.table)
    again = autotune.tune(model, "conv", "cpu", candidates=(2, 4), repeats=1)
    assert again.cached and again.batch_size == first.batch_size
    assert autotune.keep_freed_memory() in (True, False)


def test_layout_for_a_given_or_an_autotuned_batch_size(tmp_path, monkeypatch, torch_threads):
    """What the probe command runs with: a given batch size as is (contiguous, nothing measured),
    else the cached autotune choice, the model put in its memory format; a model file is cached
    under its file name without suffix."""
    import torch

    from repro.runner import autotune

    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, stride=4), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()).eval()
    assert autotune.layout_for(model, "conv", "cpu", 5) == autotune.Layout(5, "contiguous")
    assert not autotune.cache_file().exists()
    monkeypatch.setattr(autotune, "CANDIDATES", {"cpu": (2, 4), "cuda": (2, 4)})
    layout = autotune.layout_for(model, "conv", "cpu")
    (choice,) = json.loads(autotune.cache_file().read_text()).values()
    assert layout.batch_size == choice["batch_size"] in (2, 4)
    assert layout.memory_format == ("channels_last" if choice["channels_last"] else "contiguous")
    assert model[0].weight.is_contiguous(memory_format=torch.channels_last) == choice["channels_last"]
    weights = tmp_path / "my_model.pt"
    weights.write_bytes(b"")
    assert autotune.model_key(str(weights)) == "my_model" and autotune.model_key("resnet50") == "resnet50"

"""The throughput harness (repro.planner.throughput, ``python -m repro throughput``) and the
autotune cache (repro.planner.autotune): values from correctness matrices computed by hand, the
bootstrap interval, the agreement of two precisions, and a real run on a few real stimuli whose
JSON the cost model reads."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repro.planner import throughput as tp

pytestmark = pytest.mark.unit


def test_critical_band_values_of_the_human_threshold_vector():
    """Thresholds [0,0,0,0,2,2,0] (absolute criterion) give bandwidth 1.00, centre 39.6 and peak
    noise sensitivity 1.00 (METHODS.md section 3), through critical_band_16's own scorer."""
    from repro.measurements.registry import get
    from repro.scoring import critical_band as cb

    n = 10
    correct = np.ones((n, 29), dtype=bool)
    for j, (_, band, sd) in enumerate(cb.conditions()):
        if band in (4, 5) and sd >= 0.08:
            correct[: n // 2 + 1, j] = False  # 4/10 correct: not above 50%
    v = tp.scored_values(get("critical_band_16"), correct, ("cf", "bw", "pns"))
    assert v["bw"] == pytest.approx(1.0, abs=5e-3) and v["cf"] == pytest.approx(39.6, abs=0.05)
    assert v["pns"] == pytest.approx(1.0, abs=1e-6)


def test_spectral_values_by_hand():
    """Columns in the measurement's condition order (clean, then LFC and HFC by cut-off), whatever
    order the filters are made in (grouped by radius)."""
    from repro.measurements.registry import get
    from repro.scoring import spectral as sc

    names = [c for c, _, _ in sc.conditions()]
    correct = np.zeros((10, 23), dtype=bool)
    correct[:, 0] = True  # clean 10/10
    for j, name in enumerate(names, start=1):
        k = {
            "LFC/0.1": 2,
            "LFC/0.2": 4,
            "LFC/0.3": 6,
            "LFC/0.4": 8,
            "LFC/0.5": 10,
            "HFC/0.1": 5,
        }.get(name, 0)
        correct[:k, j] = True
    keys = ("low_frequency_bias", "high_frequency_bias")
    v = tp.scored_values(get("spectral_16"), correct, keys)
    assert v["low_frequency_bias"] == pytest.approx((0.2 + 0.4 + 0.6 + 0.8 + 1.0) / 5)
    assert v["high_frequency_bias"] == pytest.approx(0.5 / 5)
    correct[:, 0] = False
    assert tp.scored_values(get("spectral_16"), correct, keys) == {
        "low_frequency_bias": None,
        "high_frequency_bias": None,
    }


def test_cli_lists_the_harness_stages():
    """Each stage runs a registered measurement of that stage, and every stage a measurement of the
    registry runs at (the cost model's rates) is one of the harness's."""
    from repro.cli import throughput as cli
    from repro.measurements import registry as ms

    assert cli.STAGES == tp.STAGES
    assert all(ms.get(name).stage == stage for stage, name in tp.STAGE_MEASUREMENTS.items())
    assert {ms.get(name).stage for name in ms.names()} == set(tp.STAGES)


def test_bootstrap_interval():
    assert tp.bootstrap_interval(lambda idx: 0.25, 40) == (0.25, 0.25)
    hits = np.r_[np.ones(30), np.zeros(70)]
    lo, hi = tp.bootstrap_interval(lambda idx: float(hits[idx].mean()), 100)
    assert lo < 0.3 < hi and 0.05 < hi - lo < 0.3  # about +-1.96 * sqrt(.21 / 100) = +-0.09
    assert tp.bootstrap_interval(lambda idx: None, 10) is None
    both = tp.bootstrap_values(
        lambda idx: {"a": float(hits[idx].mean()), "b": None}, 100, ("a", "b")
    )
    assert both == {"a": (lo, hi), "b": None}  # one set of resamples, each value's own interval


def test_agreement_counts_and_verdicts():
    a = tp.StageRun(
        "classify",
        "float32",
        4,
        argmax=[np.array([1, 2, 3, 4])],
        decisions16=[np.array([0, 0, 1, 1])],
        values={"accuracy16": 0.5, "other": 0.5},
        intervals={"accuracy16": (0.2, 0.8), "other": (0.45, 0.55)},
    )
    b = tp.StageRun(
        "classify",
        "bfloat16",
        4,
        argmax=[np.array([1, 2, 9, 4])],
        decisions16=[np.array([0, 0, 1, 1])],
        values={"accuracy16": 0.75, "other": 0.6},
    )
    rep = tp.Report("m", "cpu", 4, False, {("classify", "float32"): a, ("classify", "bfloat16"): b})
    ag = rep.agreement("classify")
    assert ag["changed_argmax"] == [1, 4] and ag["changed_decision16"] == [0, 4]
    assert ag["values"]["accuracy16"]["bfloat16_inside"] is True
    assert ag["values"]["other"]["bfloat16_inside"] is False and ag["bfloat16_acceptable"] is False
    assert ag["values"]["other"]["delta"] == pytest.approx(0.1)


def test_autotune_measures_once_and_caches(tmp_path, monkeypatch, torch_threads):
    import torch

    from repro.planner import autotune

    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, stride=4), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()
    ).eval()
    first = autotune.tune(model, "conv", "cpu", candidates=(2, 4), repeats=1)
    assert not first.cached and len(first.table) == 4 and {r[0] for r in first.table} == {2, 4}
    assert (first.batch_size, first.channels_last, first.images_per_s) in {
        (b, cl, v) for b, cl, v in first.table
    }
    assert first.images_per_s == max(v for _, _, v in first.table)
    again = autotune.tune(model, "conv", "cpu", candidates=(2, 4), repeats=1)
    assert again.cached and again.batch_size == first.batch_size


def test_layout_for_a_given_or_an_autotuned_batch_size(tmp_path, monkeypatch, torch_threads):
    """What the probe command runs with: a given batch size as is (contiguous, nothing measured),
    else the cached autotune choice, the model put in its memory format; a model file is cached
    under its file name without suffix."""
    import torch

    from repro.planner import autotune

    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, stride=4), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()
    ).eval()
    assert autotune.layout_for(model, "conv", "cpu", 5) == autotune.Layout(5, "contiguous")
    assert not autotune.cache_file().exists()
    monkeypatch.setattr(autotune, "CANDIDATES", {"cpu": (2, 4), "cuda": (2, 4)})
    layout = autotune.layout_for(model, "conv", "cpu")
    (choice,) = json.loads(autotune.cache_file().read_text()).values()
    assert layout.batch_size == choice["batch_size"] in (2, 4)
    assert layout.memory_format == ("channels_last" if choice["channels_last"] else "contiguous")
    assert (
        model[0].weight.is_contiguous(memory_format=torch.channels_last) == choice["channels_last"]
    )
    weights = tmp_path / "my_model.pt"
    weights.write_bytes(b"")
    assert (
        autotune.model_key(str(weights)) == "my_model"
        and autotune.model_key("resnet50") == "resnet50"
    )


def test_choose_weighs_the_synthesis_against_the_passes():
    """A fake cost model (seconds per batch): the forward pass alone is fastest per image at 64,
    but the synthesis gets slower per image with the batch (cache misses), so for 29 passes the
    whole step is fastest at 16; a heavier model makes the forward pass dominate again."""
    from repro.planner import autotune

    fwd = {
        (8, False): 8 * 0.050,
        (16, False): 16 * 0.046,
        (32, False): 32 * 0.045,
        (64, False): 64 * 0.044,
        (8, True): 8 * 0.060,
        (16, True): 16 * 0.055,
        (32, True): 32 * 0.050,
        (64, True): 64 * 0.049,
    }
    syn = {8: 8 * 0.40, 16: 16 * 0.40, 32: 32 * 0.60, 64: 64 * 0.90}
    alone = autotune.choose(fwd)
    assert alone[0][:2] == (64, False) and alone[0][2] == round(1 / 0.044, 2)
    step = autotune.choose(fwd, syn, passes=29)
    assert step[0][:2] == (16, False)
    assert step[0][2] == round(16 / (16 * 0.40 + 29 * 16 * 0.046), 2)  # source images per second
    assert [r[2] for r in step] == sorted((r[2] for r in step), reverse=True) and len(step) == 8
    heavy = {k: v * 20 for k, v in fwd.items()}
    assert autotune.choose(heavy, syn, passes=29)[0][:2] == (64, False)
    with pytest.raises(ValueError, match="no synthesis time for batch size 64"):
        autotune.choose(fwd, {8: 1.0, 16: 1.0, 32: 1.0})


def test_tune_times_the_synthesis_of_a_synthesising_step(tmp_path, monkeypatch):
    """``tune(step=...)``: the synthesis of each candidate batch is timed once per size (the
    memory format does not change it) and weighed by ``choose``; the step's choice is cached apart
    from the forward-only one; a measurement without synthesis is tuned on the forward pass."""
    import torch

    from repro.planner import autotune

    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    timed: list[tuple[str, int]] = []

    def fake_forward(model, batch, channels_last, device, repeats):
        return batch * (0.044 if batch == 64 else 0.046) * (1.1 if channels_last else 1.0)

    def fake_synthesis(step, batch, device, repeats):
        timed.append((step, batch))
        return batch * (0.40 if batch <= 16 else 0.90)

    monkeypatch.setattr(autotune, "_time_forward", fake_forward)
    monkeypatch.setattr(autotune, "_time_synthesis", fake_synthesis)
    model = torch.nn.Identity()  # never run: the fake cost model answers
    forward = autotune.tune(model, "m", "cpu", candidates=(16, 64))
    assert (forward.batch_size, forward.step, timed) == (64, "forward", [])
    cb = autotune.tune(model, "m", "cpu", candidates=(16, 64), step="critical_band_16")
    assert (cb.batch_size, cb.channels_last, cb.step) == (16, False, "critical_band_16")
    assert sorted(timed) == [("critical_band_16", 16), ("critical_band_16", 64)]
    assert cb.images_per_s == round(16 / (16 * 0.40 + 29 * 16 * 0.046), 2)
    again = autotune.tune(model, "m", "cpu", candidates=(16, 64), step="critical_band_16")
    assert (
        again.cached
        and again.batch_size == 16
        and again.step == "critical_band_16"
        and len(timed) == 2
    )
    assert (
        autotune.tune(model, "m", "cpu", candidates=(16, 64)).batch_size == 64
    )  # the forward-only entry
    assert (
        autotune.tune(model, "m", "cpu", step="shape_bias").step == "forward"
    )  # nothing synthesised


def test_time_synthesis_times_the_probes_stimulus_code_and_keeps_the_fastest_run(
    monkeypatch, torch_threads
):
    """``_time_synthesis`` consumes the probe's own stimulus code (critical band: ``stimuli``;
    spectral: ``filtered``) once untimed, then ``repeats`` timed runs, and returns the fastest. A
    clock that each run advances by a set amount makes the answer exact, whatever the load."""
    from types import SimpleNamespace

    from repro.planner import autotune
    from repro.probes import critical_band as cbp
    from repro.probes import spectral as spp

    clock = {"now": 0.0}
    monkeypatch.setattr(autotune, "time", SimpleNamespace(perf_counter=lambda: clock["now"]))
    for step, module, name in (("critical_band", cbp, "stimuli"), ("spectral_16", spp, "filtered")):
        durations = iter([5.0, 3.0, 1.5])  # the untimed warm-up, then two timed runs
        real, consumed = getattr(module, name), []

        def spy(*args, real=real, durations=durations, consumed=consumed, **kwargs):
            clock["now"] += next(durations)
            n = 0
            for item in real(*args, **kwargs):
                n += 1
                yield item
            consumed.append(n)

        monkeypatch.setattr(module, name, spy)
        assert autotune._time_synthesis(step, 2, "cpu", repeats=2) == 1.5
        assert len(consumed) == 3 and consumed[0] > 0 and len(set(consumed)) == 1, (
            consumed
        )  # every stimulus, each run


def test_each_stage_warms_up_untimed_on_its_first_batch(monkeypatch, torch_threads):
    """One untimed batch of every stage and precision before its timed run (``score=False``: no
    values); the timed run counts only its own passes and decides only its own images."""
    import torch

    calls = []
    real = tp.run_stage

    def spy(stage, model, data, device, batch_size, seed, *, score=True):
        calls.append((stage, model.precision, len(data["graysplit"]), score))
        return real(stage, model, data, device, batch_size, seed, score=score)

    monkeypatch.setattr(tp, "run_stage", spy)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (6, 3, 224, 224), dtype=np.uint8)
    labels = rng.integers(0, 16, 6)
    names = [f"0/{i}_color_gray_g_knife.JPEG" for i in range(6)]
    monkeypatch.setattr(tp, "read_graysplit", lambda data_dir, limit: (images, labels, names))
    model = torch.nn.Sequential(
        torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(), torch.nn.Linear(48, 1000)
    )
    report = tp.measure(
        model,
        "pool-linear",
        "cpu",
        data_dir=None,
        stages=["classify", "critical_band"],
        batch_size=4,
    )
    assert calls == [
        ("classify", "float32", 4, False),
        ("classify", "float32", 6, True),
        ("classify", "bfloat16", 4, False),
        ("classify", "bfloat16", 6, True),
        ("critical_band", "float32", 4, False),
        ("critical_band", "float32", 6, True),
        ("critical_band", "bfloat16", 4, False),
        ("critical_band", "bfloat16", 6, True),
    ]
    cb = report.runs[("critical_band", "float32")]
    assert (
        cb.forward == 6 * 29 and sum(len(d) for d in cb.decisions16) == 6 * 29
    )  # the warm-up's 4 x 29 not in it
    assert (
        set(cb.values) == {"cf", "bw", "pns"} and report.runs[("classify", "bfloat16")].forward == 6
    )


def test_a_stage_reports_what_its_measurement_gives(torch_threads):
    """A stage runs its measurement through the probe loop: the spectral stage's values are
    spectral_16's on the same images and model (the harness once ran its own copy of the loop and
    scored the filtered conditions in the order they are made, grouped by radius, as if they came
    in cut-off order: other values)."""
    import torch

    from repro.datasets.base import ArraySource
    from repro.datasets.categories16 import get_mapping
    from repro.measurements.loop import run

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = torch.nn.Sequential(
            torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(), torch.nn.Linear(48, 1000)
        )
        torch.nn.init.normal_(model[2].weight, 0, 4.0)
    rng = np.random.default_rng(0)
    coarse = torch.from_numpy(rng.uniform(0, 255, (8, 3, 4, 4)))
    images = (
        torch.nn.functional.interpolate(coarse, size=(224, 224), mode="bilinear")
        .numpy()
        .astype(np.uint8)
    )
    with torch.no_grad():
        probs = torch.softmax(model(torch.from_numpy(images).float() / 255), dim=1).numpy()
    labels = np.argmax(get_mapping().category_scores(probs), axis=1)  # right on every clean image
    src = ArraySource("graysplit", images, labels, [f"{i}.JPEG" for i in range(8)])
    stage = tp.run_stage(
        "spectral", tp.Precise(model, "float32", "cpu", False), {"graysplit": src}, "cpu", 4, 0
    )
    probe = run("spectral_16", model, src, batch_size=4)
    assert stage.values == {
        k: probe.values[k] for k in ("low_frequency_bias", "high_frequency_bias")
    }
    assert (
        None not in stage.values.values()
        and stage.forward == 8 * 23
        and len(stage.decisions16) == 2 * 23
    )
    assert stage.values["low_frequency_bias"] != stage.values["high_frequency_bias"]


def test_first_batch_cuts_every_data_set():
    from repro.datasets.base import ArraySource

    imgs = np.zeros((5, 3, 8, 8), dtype=np.uint8)
    data = {
        "cue_conflict": ArraySource("cue_conflict", imgs, [1, 2, 3, 4, 5], list("abcde")),
        "graysplit": ArraySource("graysplit", imgs, np.arange(5), list("vwxyz")),
        "pgd": ArraySource("graysplit", imgs, np.arange(5) * 10, list("vwxyz")),
    }
    warm = tp.first_batch(data, 2)
    assert warm["cue_conflict"].names == ["a", "b"] and warm["cue_conflict"].labels.tolist() == [
        1,
        2,
    ]
    assert warm["graysplit"].names == ["v", "w"] and warm["graysplit"].images.shape[0] == 2
    assert warm["pgd"].labels.tolist() == [0, 10]
    assert tp.first_batch({"graysplit": data["graysplit"]}, 9)["graysplit"].labels.tolist() == [
        0,
        1,
        2,
        3,
        4,
    ]

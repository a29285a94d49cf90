"""The cost model (repro.planner.cost, ``python -m repro plan``): pass counts derived from the
measurement registry and dataset sizes, and the hours of a small case computed by hand."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from repro.base.errors import ConfigError
from repro.planner import cost

pytestmark = pytest.mark.unit


STUDY = [
    "imagenet",
    "imagenet_v2",
    "imagenet_real",
    "imagenet_a",
    "imagenet_r",
    "imagenet_sketch",
    "imagenet_c",
    "imagenet_cbar",
    "stylized",
    "pgd_low",
    "shape_bias",
    "spectral",
    "critical_band",
]  # METHODS.md section 7


def test_workload_counts_from_the_registry_and_dataset_sizes():
    w = {x.measurement: x for x in cost.workload(STUDY)}
    assert w["imagenet"].forward == 50_000 and w["imagenet"].backward == 0
    assert w["imagenet_c"].forward == 19 * 5 * 50_000  # 4.75M (METHODS.md section 7)
    assert w["imagenet_cbar"].forward == 10 * 5 * 50_000
    assert (
        w["pgd_low"].forward == 42 * 50_000 and w["pgd_low"].backward == 40 * 50_000
    )  # 2.1M + 2.0M
    assert w["spectral"].forward == 23 * 50_000
    assert (
        w["critical_band"].forward == 29 * 50_000 and w["critical_band"].synthesized == 28 * 50_000
    )
    assert w["shape_bias"].forward == 1_280 and w["stylized"].forward == 800
    assert w["imagenet_sketch"].forward == 50_889
    total = sum(x.forward for x in w.values())
    # 50,000 + 10,000 + 50,000 + 7,500 + 30,000 + 50,889 + 4,750,000 + 2,500,000 + 800 + 2,100,000 +
    # 1,280 + 1,150,000 + 1,450,000: "about 12M passes per model" (METHODS.md section 7)
    assert total == 12_150_469


def test_workload_of_the_16_class_variants():
    w = {
        x.measurement: x
        for x in cost.workload(["critical_band_16", "critical_band_16_premade", "spectral_16"])
    }
    # GraySplit / CBMSplit splits 0-4: 1,050 images; 29 conditions synthesised, 23
    # spectral, premade classified once
    assert (
        w["critical_band_16"].forward == 29 * 1_050
        and w["critical_band_16"].synthesized == 28 * 1_050
    )
    assert (
        w["critical_band_16_premade"].forward == 1_050
        and w["critical_band_16_premade"].synthesized == 0
    )
    assert w["spectral_16"].forward == 23 * 1_050


def _work():
    return cost.workload(["imagenet", "pgd_low", "critical_band"])


def test_hours_by_hand():
    rates = cost.Rates(
        {"classify": 1000.0, "pgd": 500.0, "critical_band": 250.0},
        {"classify": 2.0, "pgd": 2.0, "critical_band": 2.0},
        "test",
    )
    ours = cost.plan(_work(), rates, models=2, pipeline="ours", decode_per_s=100.0, cpu_workers=5)
    # imagenet: 50,000 / 1000 = 50 s per model; decoded once: 50,000 / 100 / 5 = 100
    # s -> 2 * 50 + 100 = 200 s
    assert ours[0].hours_all == pytest.approx(200 / 3600)
    # pgd: (2.1M + 2 * 2.0M) / 500 = 12,200 s per model; the same images, already decoded
    assert ours[1].device_s == pytest.approx(12_200) and ours[1].hours_all == pytest.approx(
        24_400 / 3600
    )
    # critical band: 1.45M / 250 = 5,800 s per model, synthesis included in the measured rate
    assert ours[2].hours_all == pytest.approx(11_600 / 3600)
    pub = cost.plan(
        _work(),
        rates,
        models=2,
        pipeline="published",
        decode_per_s=100.0,
        cpu_workers=5,
        cpu_stimulus_s=0.01,
    )
    assert pub[0].hours_all == pytest.approx(
        2 * max(50, 100) / 3600
    )  # decoding each time bounds it
    assert pub[1].hours_all == pytest.approx(2 * max(12_200, 100) / 3600)
    # critical band as published: forward only on the device (1.45M / 1000 = 1,450 s), CPU: 1.4M
    # stimuli * 10 ms / 5 workers = 2,800 s plus 1.45M decodes / 100 / 5 =
    # 2,900 s -> 5,700 s per model
    assert pub[2].device_s == pytest.approx(1_450) and pub[2].cpu_s == pytest.approx(5_700)
    assert pub[2].hours_all == pytest.approx(2 * 5_700 / 3600)


def test_stated_and_measured_rates(tmp_path):
    r = cost.stated_rates("h200", "bfloat16")
    assert r.rate("critical_band") == 20_000 and "ASSUMED" in r.source
    with pytest.raises(ConfigError, match="unknown device"):
        cost.stated_rates("tpu9", "float32")
    f = tmp_path / "tp.json"
    f.write_text(
        json.dumps(
            {
                "model": "m",
                "device": "cpu",
                "batch_size": 16,
                "runs": [
                    {"stage": "classify", "precision": "float32", "passes_per_s": 20.0},
                    {"stage": "pgd", "precision": "float32", "passes_per_s": 8.0},
                ],
            }
        )
    )
    m = cost.measured_rates(f, "float32")
    assert (
        m.rate("classify") == 20
        and m.backward_cost["pgd"] == 1.0
        and m.backward_cost["classify"] == 2.0
    )
    rows = cost.plan(cost.workload(["pgd_low"]), m, models=1)
    assert rows[0].device_s == pytest.approx(
        (2.1e6 + 2.0e6) / 8.0
    )  # the pgd rate already mixes both passes
    with pytest.raises(ConfigError, match="no throughput for stage"):
        cost.plan(cost.workload(["spectral"]), m)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ConfigError, match="not a throughput file"):
        cost.measured_rates(bad, "float32")


def test_pgd_passes_under_the_early_stop_rule_by_hand():
    """A family half robust (all 42 + 40 passes) whose flipped images take 4 + 2: 23 + 21 per
    image; a family without a measurement: the full passes whatever its robust share; the
    study's mix weighted by models."""
    half = cost.PgdFamily("a", 2, 0.5, (4.0, 2.0), "test")
    unmeasured = cost.PgdFamily("b", 1, 0.25, None, "test")
    assert cost.early_stop_per_image(half) == (23.0, 21.0)
    assert cost.early_stop_per_image(unmeasured) == (42.0, 40.0)
    assert cost.early_stop_passes([half, unmeasured]) == pytest.approx(
        ((2 * 23 + 42) / 3, (2 * 21 + 40) / 3)
    )
    work = cost.workload(["imagenet", "pgd_low"])
    early = {w.measurement: w for w in cost.early_stop_work(work, [half, unmeasured])}
    assert early["imagenet"] == work[0]  # no attack: unchanged
    assert early["pgd_low"].forward == round((2 * 23 + 42) / 3 * 50_000)
    assert early["pgd_low"].backward == round((2 * 21 + 40) / 3 * 50_000)
    assert early["pgd_low"].images == 50_000


def test_the_study_families_are_sourced_and_sum_to_the_48():
    fams = cost.PGD_FAMILIES
    assert sum(f.models for f in fams) == 48
    at = next(f for f in fams if f.name == "adversarially trained")
    assert at.models == 15 and at.flipped_passes is None  # not measured: the full 81 + 1
    other = next(f for f in fams if f.name != "adversarially trained")
    assert other.flipped_passes == cost.LITE_FLIPPED_PASSES and "measured" in other.source
    fwd, bwd = cost.early_stop_passes()
    assert 4 < fwd < 42 and 2 < bwd < 40


def test_the_measured_lite_passes_follow_the_attacks_own_count():
    """The plan's passes of a flipped image (EfficientNet-Lite, docs/performance.md) are
    repro.benchmarks.pgd.early_stop_passes over the measured first-success distributions of
    repro/planner/data/pgd_first_success.toml, pooled over its runs."""
    pgd = pytest.importorskip("repro.benchmarks.pgd")
    pooled: Counter[int] = Counter()
    for run in cost.LITE_RUNS:
        pooled.update({k: c for k, c in run.first_success.items() if k >= 0})
    assert cost.LITE_FIRST_SUCCESS == dict(pooled)
    n = sum(pooled.values())
    assert n == sum(r.flipped for r in cost.LITE_RUNS)
    by_attack = [pgd.early_stop_passes(k, 40) for k, c in pooled.items() for _ in range(c)]
    assert cost.LITE_FLIPPED_PASSES == pytest.approx(
        (sum(f for f, _ in by_attack) / n, sum(b for _, b in by_attack) / n)
    )
    assert cost.flipped_passes({40: 3, 0: 1}) == ((3 * 42 + 3) / 4, (3 * 40 + 1) / 4)


@pytest.mark.parametrize(
    "model, flipped, never, modelled",
    [
        ("efficientnet_lite0", 1059, 41, (6239, 4039)),
        ("efficientnet_lite1", 1046, 54, (6900, 4700)),
    ],
)
def test_a_1100_image_run_gives_the_passes_docs_performance_md_prints(
    model, flipped, never, modelled
):
    """All 1,100 GraySplit images: docs/performance.md prints the early-stop rule's modelled
    passes of each run (the pgd_deviation script's output), of which the never-flipped images take
    the full 42F + 40B each; the flipped ones give the rest."""
    run = next(r for r in cost.LITE_RUNS if r.model == model)
    assert (run.images, run.flipped, run.first_success[-1]) == (1100, flipped, never)
    fwd, bwd = cost.flipped_passes({k: c for k, c in run.first_success.items() if k >= 0})
    assert (round(fwd * flipped), round(bwd * flipped)) == (
        modelled[0] - never * 42,
        modelled[1] - never * 40,
    )


def test_a_wrong_first_success_file_names_the_run_and_what_was_expected(tmp_path):
    path = tmp_path / "runs.toml"
    path.write_text('[[run]]\nmodel = "m"\nimages = 10\nfirst_success = { "1" = 9 }\n')
    with pytest.raises(
        ConfigError, match=r"\[\[run\]\] 1 \(m\): first_success sums to 9, expected"
    ):
        cost.read_first_success(path)
    path.write_text('[[run]]\nmodel = "m"\nimages = 1\nfirst_success = { "one" = 1 }\n')
    with pytest.raises(ConfigError, match="cannot read the PGD first-success runs"):
        cost.read_first_success(path)

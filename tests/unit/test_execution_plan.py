"""The execution-order table of the cost model (repro.planner.execution_plan): crop bytes and the
cache decision per dataset against the disk, decode hours from the per-core rate and the box's
cores, model-major against data-major wall hours, and the goal line, each against a hand count."""

from __future__ import annotations

import json

import pytest

from repro.planner import cost
from repro.planner import execution_plan as ep

pytestmark = pytest.mark.unit

AS_IS = "pil-rgb/as-is-224/v1"
RESIZE = "pil-rgb/resize256-bilinear/centercrop224/v1"


def _work(measurement, dataset, images, forward=None, backward=0, stage="classify"):
    return cost.Work(measurement, dataset, stage, images, forward or images, backward, 0, images)


def test_crop_bytes_and_the_cache_against_a_64_gb_disk():
    decode = ep.Decode({RESIZE: 100.0, AS_IS: 1000.0}, "test")
    work = cost.workload(["imagenet", "imagenet_c", "imagenet_cbar", "spectral"])
    io = ep.dataset_io(work, decode, ep.Box(cores=16, disk_bytes=64e9))
    # ImageNet-C: 95 conditions x 50,000 images x 224 x 224 x 3 bytes
    assert io["imagenet_c"].images == 4_750_000
    assert io["imagenet_c"].crop_bytes == 4_750_000 * 150_528
    assert io["imagenet_c"].crop_bytes + io["imagenet_cbar"].crop_bytes == pytest.approx(
        1.0914e12, rel=1e-3
    )
    assert not io["imagenet_c"].cached and not io["imagenet_cbar"].cached
    assert io["imagenet_val"].cached and io["imagenet_val"].readers == 2  # imagenet and spectral
    # one pass: images / (rate per core x cores)
    assert io["imagenet_c"].decode_s == pytest.approx(4_750_000 / (1000 * 16))
    assert io["imagenet_val"].decode_s == pytest.approx(50_000 / (100 * 16))
    big = ep.dataset_io(work, decode, ep.Box(cores=16, disk_bytes=4e12))
    assert all(d.cached for d in big.values())


def test_the_cache_takes_the_most_read_datasets_first_within_its_share_of_the_disk():
    decode = ep.Decode({RESIZE: 100.0, AS_IS: 100.0}, "test")
    work = [
        _work("a", "imagenet_val", 1000),
        _work("b", "imagenet_val", 1000),
        _work("c", "imagenet_v2", 1000),
    ]
    one = 1000 * 150_528
    io = ep.dataset_io(
        work, decode, ep.Box(disk_bytes=one / ep.CACHE_FRACTION * 1.5)
    )  # room for one
    assert io["imagenet_val"].cached and not io["imagenet_v2"].cached


def test_model_major_against_data_major_by_hand():
    io = {
        "d": ep.DatasetIO("d", 100, 0.0, False, 20.0, 1),
        "k": ep.DatasetIO("k", 100, 0.0, True, 30.0, 2),
    }
    work = [
        _work("x", "d", 100),
        _work("pgd", "d", 100, forward=300, backward=200, stage="pgd"),
        _work("y", "k", 100),
        _work("z", "k", 100),
    ]
    rows = {
        r.measurement: r
        for r in ep.orders(work, {"x": 10.0, "pgd": 50.0, "y": 1.0, "z": 1.0}, io, models=4)
    }
    # decoded on every pass: model-major 4 x max(10, 20); data-major max(4 x 10, 20)
    assert rows["x"].wall_h["model-major"] * 3600 == pytest.approx(80.0)
    assert rows["x"].wall_h["data-major"] * 3600 == pytest.approx(40.0)
    assert rows["x"].bound == {"model-major": "decode", "data-major": "device"}
    assert rows["x"].decode_h["model-major"] * 3600 == pytest.approx(80.0)
    assert rows["x"].decode_h["data-major"] * 3600 == pytest.approx(20.0)
    # PGD stays model by model in both
    assert (
        rows["pgd"].wall_h["data-major"]
        == rows["pgd"].wall_h["model-major"]
        == pytest.approx(4 * 50 / 3600)
    )
    # cached: built once (30 s) at its first measurement, then only the device
    assert rows["y"].wall_h["model-major"] * 3600 == pytest.approx(4 * 1 + 30)
    assert rows["z"].wall_h["model-major"] * 3600 == pytest.approx(4 * 1)
    assert rows["z"].wall_h["data-major"] * 3600 == pytest.approx(4 * 1)
    # a measured data-major rate (decode included) replaces the classify stage's max(device, decode)
    fast = {
        r.measurement: r
        for r in ep.orders(
            work, {"x": 10.0, "pgd": 50.0, "y": 1.0, "z": 1.0}, io, models=4, data_major_rate=8.0
        )
    }
    assert fast["x"].wall_h["data-major"] * 3600 == pytest.approx(4 * 100 / 8.0)
    # ... but not for a cached dataset: the measured rate includes a decode it does not pay
    assert fast["z"].wall_h["data-major"] == rows["z"].wall_h["data-major"]
    assert fast["z"].wall_h["data-major"] * 3600 == pytest.approx(4 * 1)
    assert fast["pgd"].wall_h["data-major"] == rows["pgd"].wall_h["data-major"]


def test_the_goal_names_the_measurements_over_it_largest_first():
    rows = [
        ep.OrderRow(m, "d", 0.0, {}, {"data-major": h}, {"data-major": b})
        for m, h, b in (("a", 1.0, "device"), ("b", 3.5, "decode"), ("c", 2.0, "device"))
    ]
    assert ep.over_goal(rows, "data-major", gpus=1) == [
        ("b", 3.5, "decode")
    ]  # 6.5 - 3.5 = 3.0 <= 4
    assert ep.over_goal(rows, "data-major", gpus=2) == []  # 3.25 h on two devices
    text = ep.format_orders(
        {
            "bf16": [
                ep.OrderRow(
                    r.measurement,
                    "d",
                    0.0,
                    {},
                    {**r.wall_h, "model-major": r.wall_h["data-major"]},
                    {**r.bound, "model-major": r.bound["data-major"]},
                )
                for r in rows
            ]
        },
        models=48,
        gpus=1,
        device="test",
    )
    assert "data-major bf16: 6.50 h: exceeds it by 2.50 h; over it: b 3.50 h (decode)" in text
    assert "goal: the 48-model study in at most 4 wall hours on one H200" in text


def test_decode_rates_from_a_throughput_file_else_the_cache_else_stated(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    assert ep.decode_rates(None).source.startswith("ASSUMED")
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps(
            {
                "runs": [],
                "decode": {
                    "per_core_per_s": {RESIZE: 250.0, AS_IS: 900.0},
                    "cores": 16,
                    "host": "box",
                },
                "data_major": [{"precision": "bfloat16", "models": 8, "passes_per_s": 12000.0}],
            }
        )
    )
    d = ep.decode_rates(path)
    assert d.rate(RESIZE) == 250.0 and d.rate(AS_IS) == 900.0 and d.cores == 16
    assert (
        ep.data_major_rates(path, "bfloat16") == (12000.0, 8)
        and ep.data_major_rates(path, "float32") is None
    )
    path.write_text(json.dumps({"decode": {"per_core_per_s": {RESIZE: -1}}}))
    with pytest.raises(Exception, match="field decode"):
        ep.decode_rates(path)

"""Unit tests of the measurement store: atomic per-job records, per-item records with sha256,
flock claims that die with their holder, the tidy and wide exports, and the comparison with
published values (inside/outside the binomial interval, re-measure on a version change)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from repro.base.errors import DataError
from repro.base.stats import binomial_interval
from repro.store.compare import compare, format_rows
from repro.store.export import tidy_rows, wide_table
from repro.store.files import Store
from repro.store.record import STATUS_FAILED, STATUS_OK, ColumnValue, JobRecord
from tests.waiting import HANG_GUARD_S, wait_exit

pytestmark = pytest.mark.unit


def _rec(model="m1", measurement="imagenet", version="1+1", k=380, n=500, **kw) -> JobRecord:
    cols = [ColumnValue.from_count("top1_acc/imagenet", k, n)]
    return JobRecord(
        model,
        measurement,
        version,
        STATUS_OK,
        conditions=[{"condition": "all", "k": k, "n": n}],
        value=cols[0].value,
        interval=cols[0].interval,
        columns=cols,
        provenance={"seed": 0, "device": "cpu", "dataset": "imagenet_val"},
        **kw,
    )


def test_column_value_from_count_is_percent_with_wilson_interval():
    c = ColumnValue.from_count("top1_acc/imagenet", 38065, 50000)
    lo, hi = binomial_interval(38065, 50000)
    assert c.value == pytest.approx(76.13)
    assert c.interval == pytest.approx((100 * lo, 100 * hi))
    sb = ColumnValue.from_count("shape-bias", 169, 789, scale=1.0)
    assert sb.value == pytest.approx(0.2142, abs=1e-4)


def test_record_roundtrip_with_items_and_sha256(tmp_path):
    store = Store(tmp_path)
    items = [{"name": f"img{i}.png", "label": i % 3, "prediction": i % 2} for i in range(10)]
    path = store.write(_rec(), items)
    assert path == tmp_path / "m1" / "imagenet.json"
    back = store.read("m1", "imagenet")
    assert back is not None and back.ok and back.n_records == 10
    assert back.columns[0].k == 380 and back.columns[0].interval == pytest.approx(
        _rec().columns[0].interval
    )
    rows = store.read_items(back)
    assert [r["name"] for r in rows] == [f"img{i}.png" for i in range(10)] and rows[3][
        "prediction"
    ] == "1"
    # a changed records file is detected, not silently used
    rpath = tmp_path / "m1" / back.records_file
    import gzip

    rpath.write_bytes(gzip.compress(b"name,label,prediction\nimg0.png,0,1\n"))
    with pytest.raises(DataError, match="sha256 differs"):
        store.read_items(back)


def test_model_names_with_slashes_stay_inside_the_store(tmp_path):
    store = Store(tmp_path)
    store.write(_rec(model="local/../evil"))
    assert store.read("local/../evil", "imagenet") is not None
    assert [p.parent for p in tmp_path.rglob("*.json")] == [tmp_path / "local%2F..%2Fevil"]


def test_a_failed_replace_leaves_the_old_record_and_no_temp_file(tmp_path, monkeypatch):
    store = Store(tmp_path)
    store.write(_rec(k=100))

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        store.write(_rec(k=200))
    monkeypatch.undo()
    assert store.read("m1", "imagenet").columns[0].k == 100
    assert sorted(p.name for p in (tmp_path / "m1").iterdir()) == ["imagenet.json"]


def test_corrupt_record_is_a_data_error_naming_the_file(tmp_path):
    (tmp_path / "m1").mkdir()
    (tmp_path / "m1" / "imagenet.json").write_text('{"model": "m1"}')
    with pytest.raises(DataError, match=r"imagenet\.json: job record lacks field 'measurement'"):
        Store(tmp_path).read("m1", "imagenet")


def test_lock_is_exclusive_and_released(tmp_path):
    store = Store(tmp_path)
    a, b = store.lock("m1", "imagenet"), store.lock("m1", "imagenet")
    assert a.acquire()
    assert not b.acquire()
    a.release()
    assert b.acquire()
    b.release()


def test_lock_of_a_killed_holder_is_free_again(tmp_path):
    store = Store(tmp_path)
    code = textwrap.dedent(f"""
        import sys
        from repro.store.files import Store
        assert Store({str(tmp_path)!r}).lock("m1", "imagenet").acquire()
        print("held", flush=True)
        # holds the lock until killed (or its stdin closes), however long the test takes
        sys.stdin.read()
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        assert not store.lock("m1", "imagenet").acquire()
        proc.send_signal(signal.SIGKILL)
        assert wait_exit(proc) == -signal.SIGKILL
        lock = store.lock("m1", "imagenet")
        assert lock.acquire()
        lock.release()
    finally:
        proc.kill()
        proc.wait()


def _store_with_quirks(tmp_path) -> Store:
    store = Store(tmp_path)
    store.write(_rec("m1", "imagenet", k=380, n=500))
    pgd = [
        ColumnValue.from_count("top1_acc/PGD-40/low", 10, 500),
        ColumnValue.from_count("top1_acc/PGD-40/low", 22, 512, variant="published"),
    ]
    store.write(JobRecord("m1", "pgd_low", "1+1", STATUS_OK, columns=pgd))
    store.write(
        JobRecord(
            "m2", "imagenet", "1+1", STATUS_FAILED, error={"type": "RuntimeError", "message": "oom"}
        )
    )
    store.write(_rec("m3", "imagenet", version="0+1", k=1, n=2))
    return store


def test_wide_table_uses_published_variants_and_skips_failed_and_stale(tmp_path):
    _store_with_quirks(tmp_path)
    wide = wide_table(tmp_path, versions={"imagenet": "1+1", "pgd_low": "1+1"})
    assert wide == {
        "m1": {
            "top1_acc/imagenet": pytest.approx(76.0),
            "top1_acc/PGD-40/low": pytest.approx(100 * 22 / 512),
        }
    }
    std = wide_table(tmp_path, variant="standard", versions={"imagenet": "1+1", "pgd_low": "1+1"})
    assert std["m1"]["top1_acc/PGD-40/low"] == pytest.approx(2.0)
    assert wide_table(tmp_path, versions=None)["m3"] == {
        "top1_acc/imagenet": 50.0
    }  # every ok record
    # this checkout's versions: m3's record (version 0+1) is stale and left out
    from repro.measurements.registry import current_versions

    assert current_versions(["imagenet"]) == {"imagenet": "1+1"}
    assert set(wide_table(tmp_path, versions=current_versions())) == {"m1"}


def test_tidy_rows_keep_counts_versions_and_provenance(tmp_path):
    _store_with_quirks(tmp_path)
    rows = tidy_rows(tmp_path, versions={"imagenet": "1+1", "pgd_low": "1+1"})
    cond = [r for r in rows if r["model"] == "m1" and r["kind"] == "condition"]
    assert cond == [pytest.approx({**cond[0], "k": 380, "n": 500, "value": 0.76})]
    assert cond[0]["version"] == "1+1" and cond[0]["device"] == "cpu" and cond[0]["seed"] == 0
    assert {(r["model"], r["kind"]) for r in rows if r["kind"] == "job"} == {
        ("m2", "job"),
        ("m3", "job"),
    }


def test_compare_statuses(tmp_path):
    _store_with_quirks(tmp_path)
    published = {
        "m1": {"top1_acc/imagenet": 77.5, "top1_acc/PGD-40/low": 30.0},
        "m3": {"top1_acc/imagenet": 50.0},
    }
    rows = compare(tmp_path, published, versions={"imagenet": "1+1", "pgd_low": "1+1"})
    status = {(r.model, r.measurement): r for r in rows}
    # 380/500: Wilson 95% [72.1, 79.5] % holds 77.5
    assert status["m1", "imagenet"].status == "inside" and status[
        "m1", "imagenet"
    ].diff == pytest.approx(-1.5)
    # PGD compares the published (padded) variant: 22/512 = 4.3 %, far from 30
    assert (
        status["m1", "pgd_low"].status == "OUTSIDE"
        and status["m1", "pgd_low"].variant == "published"
    )
    assert status["m2", "imagenet"].status == "failed" and "oom" in status["m2", "imagenet"].note
    assert status["m3", "imagenet"].status == "re-measure" and status["m3", "imagenet"].ours is None
    text = format_rows(rows)
    assert "re-measure: stored with version 0+1, current 1+1" in text and "OUTSIDE" in text


def test_compare_reads_a_study_table_and_treats_empty_cells_as_not_published(tmp_path):
    """The published numbers come from the study's table reader (the one benchmark.csv reader):
    an empty cell (NaN) is "not published", never a difference."""
    from repro.published.table import read_table_csv

    _store_with_quirks(tmp_path / "store")
    csv = tmp_path / "table.csv"
    csv.write_text("model,top1_acc/imagenet,top1_acc/PGD-40/low\nm1,,30.0\n")
    rows = compare(
        tmp_path / "store",
        read_table_csv(csv).values,
        versions={"imagenet": "1+1", "pgd_low": "1+1"},
    )
    status = {(r.model, r.measurement): r for r in rows}
    assert (
        status["m1", "imagenet"].status == "not published"
        and status["m1", "imagenet"].published is None
    )
    assert status["m1", "imagenet"].diff is None
    assert status["m1", "pgd_low"].published == 30.0 and status["m1", "pgd_low"].status == "OUTSIDE"


def test_record_json_is_plain_and_readable(tmp_path):
    path = Store(tmp_path).write(_rec())
    data = json.loads(path.read_text())
    assert (
        data["schema"] == 1
        and data["status"] == "ok"
        and data["columns"][0]["variant"] == "standard"
    )


def test_compare_cli_against_benchmark_csv(tmp_path, run_cli, data_dir):
    """torchvision's ResNet-50 V1 gets 38,065/50,000 (76.130%, the ImageNet-X predictions);
    benchmark.csv has 76.146 for tv_resnet50: inside our Wilson interval. PGD stored with the
    published (padded) variant is compared as published; an old version says re-measure."""
    store = Store(tmp_path / "store")
    store.write(_rec("tv_resnet50", "imagenet", version="1+1", k=38065, n=50000))
    store.write(_rec("tv2_resnet50", "imagenet", version="0+1", k=40000, n=50000))
    res = run_cli(
        "compare",
        "--store",
        tmp_path / "store",
        "--data-dir",
        data_dir,
        "--tidy",
        tmp_path / "t.csv",
    )
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("tv_resnet50"))
    lo, hi = binomial_interval(38065, 50000)
    assert line.split()[:7] == [
        "tv_resnet50",
        "top1_acc/imagenet",
        "76.13",
        "38065/50000",
        f"[{100 * lo:.4f},",
        f"{100 * hi:.4f}]",
        "76.146",
    ]
    # -0.016 points: inside the study's 0.1-point implementation margin
    # (agrees), and inside our interval
    assert line.split()[7:10] == ["-0.016", "agrees", "inside"]
    assert "re-measure: stored with version 0+1, current 1+1" in res.stdout
    assert (
        "1 inside, 1 re-measure" in res.stdout
        and "agreement with the published values: 1 agrees" in res.stdout
    )
    # header; condition, column and headline rows; the stale job
    assert (tmp_path / "t.csv").read_text().count("\n") == 1 + 3 + 1


@pytest.mark.parametrize(
    "k,mini,expect",
    [(38065, False, "1 passed"), (40000, False, "1 failed"), (40000, True, "1 skipped")],
)
def test_per_model_gate_gates_on_our_stored_values(tmp_path, data_dir, k, mini, expect):
    """tests/integration/test_pipeline_per_model.py with --source store: 76.13% (0.016 points from
    tv_resnet50's published 76.146: agrees) passes, 80% (differs) fails, 80% on
    mini data is not gated."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    rec = _rec("tv_resnet50", "imagenet", version="1+1", k=k, n=50000)
    rec.provenance["dataset_mini"] = mini
    Store(tmp_path / "store").write(rec)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/integration/test_pipeline_per_model.py",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--source",
            "store",
            "--store",
            str(tmp_path / "store"),
            "--data-dir",
            str(data_dir),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert expect in res.stdout, res.stdout[-2000:]
    if k == 40000 and not mini:
        assert (
            "1 of 1 values differ from their published value" in res.stdout
            and "tv_resnet50" in res.stdout
        )

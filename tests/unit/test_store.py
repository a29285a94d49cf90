"""Unit tests of the measurement store: atomic per-job records, per-item records with sha256,
flock claims that die with their holder, the tidy and wide exports, and the comparison with
published values (inside/outside the binomial interval, re-measure on a version change)."""

from __future__ import annotations

import json
import os

import pytest

from repro.base.errors import DataError
from repro.base.stats import binomial_interval
from repro.store.compare import compare, format_rows
from repro.store.export import tidy_rows, wide_table
from repro.store.files import Store
from repro.store.record import STATUS_FAILED, STATUS_OK, ColumnValue, JobRecord

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


def test_every_reader_of_the_store_takes_the_record_state_decision(tmp_path):
    """repro.store.export.record_state is the one decision (failed, stale, ok) the job states,
    the tidy rows, the wide table and compare all read."""
    from repro.store.export import JOB_FAILED, JOB_OK, JOB_STALE, job_states, record_state

    _store_with_quirks(tmp_path)
    versions = {"imagenet": "1+1", "pgd_low": "1+1"}
    states = {(r.model, r.measurement): record_state(r, versions) for r in Store(tmp_path)}
    assert states["m1", "imagenet"].status == JOB_OK and states["m1", "imagenet"].evidence is None
    assert states["m2", "imagenet"].status == JOB_FAILED
    assert "oom" in str(states["m2", "imagenet"].error)
    assert states["m3", "imagenet"].status == JOB_STALE
    assert states["m3", "imagenet"].wanted == "1+1"
    assert {k: v.status for k, v in job_states(tmp_path, versions=versions).items()} == {
        k: v.status for k, v in states.items()
    }
    ok = {m for (m, _), v in states.items() if v.status == JOB_OK}
    assert set(wide_table(tmp_path, versions=versions)) == ok
    jobs = {r["model"] for r in tidy_rows(tmp_path, versions=versions) if r["kind"] == "job"}
    assert jobs == {m for (m, _), v in states.items() if v.status != JOB_OK}
    rows = {(r.model, r.measurement): r.status for r in compare(tmp_path, {}, versions=versions)}
    assert rows["m2", "imagenet"] == "failed" and rows["m3", "imagenet"] == "re-measure"
    # every version taken: nothing is stale
    assert record_state(next(r for r in Store(tmp_path) if r.model == "m3"), None).status == JOB_OK


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

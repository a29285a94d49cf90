"""``python -m repro store import``: what ``compare --tidy`` writes comes back as the same job
records (only marked imported, with the file's sha256); every bad row is refused with one line
naming the row, exit status 2, and nothing written."""

from __future__ import annotations

import csv
import hashlib
import math

import pytest

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.store.compare import compare, format_rows
from repro.store.export import TIDY_FIELDS, job_states, tidy_rows, wide_table, write_tidy_csv
from repro.store.files import Store
from repro.store.importer import import_tidy
from repro.store.record import IMPORTED_KEY, STATUS_FAILED, STATUS_OK, ColumnValue, JobRecord

pytestmark = pytest.mark.unit

PROV = {
    "seed": 0,
    "device": "cpu",
    "dataset": "imagenet_val",
    "dataset_fingerprint": "abc123",
    "repro_version": "0.1",
    "git_commit": "deadbeef",
    "torch": "2.3.0",
    "finished_utc": "2031-01-01T00:00:00Z",
    "dataset_items": 50000,
    "dataset_mini": False,
    "dataset_partial": False,
    "batch_size": 128,
    "host": "node7",
    "duration_s": 12.5,
    "model_weights_sha256": "f" * 64,
}


def _versions() -> dict[str, str]:
    from repro.measurements.registry import current_versions

    return current_versions(
        ["imagenet", "imagenet_real", "pgd_low", "shape_bias", "imagenet_sketch"]
    )


def _known():
    from repro.cli.store_import import _known_model, _measurements

    return {"measurements": _measurements(), "known_model": _known_model}


def measured_store(root) -> Store:
    """Records written the way the runner writes them: conditions with their counts, a quirk
    column's published variant with its note, named values, the headline; a failed job and a
    record of another version next to them."""
    v = _versions()
    store = Store(root)
    for model, k in (("tv_resnet50", 38073), ("ssl_resnet50", 39310)):
        cols = [ColumnValue.from_count("top1_acc/imagenet", k, 50000)]
        store.write(
            JobRecord(
                model,
                "imagenet",
                v["imagenet"],
                STATUS_OK,
                conditions=[{"condition": "all", **Count(k, 50000).as_json()}],
                value=cols[0].value,
                interval=cols[0].interval,
                columns=cols,
                provenance=dict(PROV),
            )
        )
    pgd = [
        ColumnValue.from_count("top1_acc/PGD-40/low", 9200, 50000),
        ColumnValue.from_count(
            "top1_acc/PGD-40/low",
            9248,
            50048,
            variant="published",
            note="Q2: denominator padded to 50048 (391 batches of 128)",
        ),
    ]
    store.write(
        JobRecord(
            "tv_resnet50",
            "pgd_low",
            v["pgd_low"],
            STATUS_OK,
            conditions=[{"condition": "robust", **Count(9200, 50000).as_json()}],
            value=pgd[0].value,
            interval=pgd[0].interval,
            columns=pgd,
            provenance=dict(PROV),
        )
    )
    sb = [ColumnValue.from_count("shape-bias", 170, 792, scale=1.0)]
    store.write(
        JobRecord(
            "tv_resnet50",
            "shape_bias",
            v["shape_bias"],
            STATUS_OK,
            value=sb[0].value,
            interval=sb[0].interval,
            values={"shape": 170.0, "texture": 622.0, "other": 408.0},
            columns=sb,
            provenance={**PROV, "dataset": "cue_conflict", "dataset_items": 1280},
        )
    )
    store.write(
        JobRecord(
            "ssl_resnet50",
            "shape_bias",
            v["shape_bias"],
            STATUS_FAILED,
            provenance=dict(PROV),
            error={"type": "RuntimeError", "message": "out of memory"},
        )
    )
    store.write(
        JobRecord(
            "ssl_resnet50",
            "imagenet_sketch",
            "0+old",
            STATUS_OK,
            columns=[ColumnValue.from_count("top1_acc/imagenet-sketch", 1, 2)],
            provenance=dict(PROV),
        )
    )
    return store


def _records(root) -> dict:
    return {(r.model, r.measurement): r for r in Store(root)}


def _without_import(record: JobRecord) -> dict:
    d = record.as_json()
    d["provenance"] = {k: v for k, v in d["provenance"].items() if k != IMPORTED_KEY}
    return d


def test_export_import_round_trip_keeps_every_value_and_marks_the_records_imported(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    measured_store(a)
    versions = _versions()
    write_tidy_csv(a, tmp_path / "a.csv", versions=versions)
    done = import_tidy(tmp_path / "a.csv", b, **_known())
    assert done.sha256 == hashlib.sha256((tmp_path / "a.csv").read_bytes()).hexdigest()
    # the failed job and the record of another version carry nothing to import: skipped, and said so
    assert sorted(s.split(":")[0] for s in done.skipped) == [
        "ssl_resnet50 x imagenet_sketch",
        "ssl_resnet50 x shape_bias",
    ]
    orig, back = _records(a), _records(b)
    assert set(back) == {
        k for k, r in orig.items() if r.ok and r.version == versions[r.measurement]
    }
    for key, rec in back.items():
        assert rec.provenance[IMPORTED_KEY]["sha256"] == done.sha256
        assert rec.provenance[IMPORTED_KEY]["file"] == "a.csv"
        assert (
            _without_import(rec) == orig[key].as_json()
        )  # counts, variants, notes, values, headline, provenance
    # what the readers see is the same, but for the label: imported, counted as measured evidence
    assert wide_table(b, versions=versions) == wide_table(a, versions=versions)
    states_a, states_b = job_states(a, versions=versions), job_states(b, versions=versions)
    assert all(states_b[k].imported and not states_a[k].imported for k in states_b)
    published = {
        "tv_resnet50": {
            "top1_acc/imagenet": 76.146,
            "top1_acc/PGD-40/low": 18.39,
            "shape-bias": 0.2146,
        },
        "ssl_resnet50": {"top1_acc/imagenet": 78.6},
    }
    ok = [
        r
        for r in compare(a, published, versions=versions)
        if r.status not in ("failed", "re-measure")
    ]
    assert format_rows(compare(b, published, versions=versions)) == format_rows(ok)
    # exported again and imported into another empty store: the same records, only
    # the file's sha256 differs
    write_tidy_csv(b, tmp_path / "b.csv", versions=versions)
    assert [r for r in tidy_rows(b, versions=versions)] == [
        r for r in tidy_rows(a, versions=versions) if r["kind"] != "job"
    ]
    import_tidy(tmp_path / "b.csv", c, **_known())
    assert {k: _without_import(r) for k, r in _records(c).items()} == {
        k: _without_import(r) for k, r in back.items()
    }


def _tidy(tmp_path, rows: list[dict]) -> object:
    path = tmp_path / "in.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=TIDY_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def _good(tmp_path) -> list[dict]:
    measured_store(tmp_path / "src")
    return [r for r in tidy_rows(tmp_path / "src", versions=_versions()) if r["kind"] != "job"]


def _edit(rows: list[dict], i: int, **changes) -> tuple[list[dict], int]:
    """``rows`` with row ``i`` changed, and the CSV line of that row (the header is line 1)."""
    rows = [dict(r) for r in rows]
    rows[i].update(changes)
    return rows, i + 2


def test_a_job_already_in_the_store_is_refused_and_nothing_is_written(tmp_path):
    rows = _good(tmp_path)
    path = _tidy(tmp_path, rows)
    target = tmp_path / "target"
    store = Store(target)
    first = next(r for r in rows if r["kind"] == "column")
    store.write(
        JobRecord(
            first["model"], first["measurement"], first["version"], STATUS_OK, provenance=dict(PROV)
        )
    )
    before = sorted(p.name for p in target.rglob("*.json"))
    with pytest.raises(DataError, match="already in the store"):
        import_tidy(path, target, **_known())
    assert sorted(p.name for p in target.rglob("*.json")) == before


def test_a_file_without_the_tidy_header_is_refused(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("model,value\ntv_resnet50,0.2\n")
    with pytest.raises(DataError, match="header lacks field.*kind"):
        import_tidy(path, tmp_path / "t", **_known())


def test_undefined_values_keep_their_counts(tmp_path):
    """n = 0 (no shape or texture decision): the value is undefined (empty), the count 0/0 kept."""
    rows = _good(tmp_path)
    i = next(
        i for i, r in enumerate(rows) if r["measurement"] == "shape_bias" and r["kind"] == "column"
    )
    rows, _ = _edit(rows, i, value=None, k=0, n=0, interval_low=None, interval_high=None)
    import_tidy(_tidy(tmp_path, rows), tmp_path / "t", **_known())
    col = Store(tmp_path / "t").read("tv_resnet50", "shape_bias").columns[0]
    assert (col.value, col.k, col.n) == (None, 0, 0) and not math.isnan(float(col.k))

"""A stored record counts only for its own job (issue 11, item 2) and a bad one never stops the
work (item 5): resume re-measures a record made on other data, mini data or other weights;
a record copied into another model's folder, with k > n, or with a missing key is reported
(path and how to remove it) while the sweep, ``compare`` and the export go on; values measured
on mini or partial data are never overlaid on the published table; a read-only store is one line."""

from __future__ import annotations

import errno
import json

import numpy as np
import pytest

from repro.base.errors import DataError
from repro.datasets.base import ArraySource
from repro.runner.jobs import Environment, jobs_for, run_sweep
from repro.store.export import wide_table
from repro.store.files import Store
from tests import fakes
from tests.unit import malformed

pytestmark = pytest.mark.unit


def _sweep(store, env, models=("tiny_a",), measurements=("fake_a",), log=None):
    return run_sweep(
        jobs_for(list(models), list(measurements)), store, env=env, progress=False, log=log
    )


def _env(source=fakes.make_source, model=fakes.make_model):
    return Environment(
        load_model=model, open_source=source, measurement=fakes.MEASUREMENTS.__getitem__
    )


def test_resume_remeasures_a_record_made_on_other_data(tmp_path, torch_threads):
    store = Store(tmp_path)
    _sweep(store, _env())
    first = store.read("tiny_a", "fake_a")
    assert (
        first.provenance["model_weights_sha256"]
        and first.provenance["dataset_items"] == fakes.N_ITEMS
    )

    def other_images(dataset):
        src = fakes.make_source(dataset)
        return ArraySource(dataset, 255 - src.images, src.labels, src.names)

    logged: list[str] = []
    again = _sweep(store, _env(source=other_images), log=logged.append)
    assert [str(j) for j in again.remeasured] == ["tiny_a x fake_a"] and not again.skipped
    assert any(
        "re-measuring tiny_a x fake_a: measured on other data (fingerprint" in m for m in logged
    ), logged
    second = store.read("tiny_a", "fake_a")
    assert second.provenance["dataset_fingerprint"] != first.provenance["dataset_fingerprint"]
    assert not _sweep(store, _env(source=other_images)).ran  # now it matches: skipped


def test_resume_remeasures_a_record_made_on_mini_data(tmp_path, torch_threads):
    store = Store(tmp_path)

    def mini(dataset):
        src = fakes.make_source(dataset)
        src.mini = True
        return src

    _sweep(store, _env(source=mini))
    assert store.read("tiny_a", "fake_a").provenance["dataset_mini"] is True
    logged: list[str] = []
    again = _sweep(store, _env(), log=logged.append)
    assert len(again.remeasured) == 1 and any(
        "measured on generated mini data" in m for m in logged
    ), logged
    assert store.read("tiny_a", "fake_a").provenance["dataset_mini"] is False


def test_resume_remeasures_a_record_made_with_other_weights(tmp_path, torch_threads):
    store = Store(tmp_path)
    _sweep(store, _env())

    def retrained(name, device="cpu"):
        model = fakes.make_model(name, device)
        model.w.data.mul_(2.0)
        return model

    logged: list[str] = []
    again = _sweep(store, _env(model=retrained), log=logged.append)
    assert len(again.remeasured) == 1 and any("measured with other weights" in m for m in logged), (
        logged
    )


def test_an_old_record_without_identity_is_remeasured(tmp_path, torch_threads):
    store = Store(tmp_path)
    _sweep(store, _env())
    path = store.record_path("tiny_a", "fake_a")
    data = json.loads(path.read_text())
    for key in ("dataset_fingerprint", "model_weights_sha256"):
        data["provenance"].pop(key)
    path.write_text(json.dumps(data))
    again = _sweep(store, _env())
    assert (
        len(again.remeasured) == 1
        and store.read("tiny_a", "fake_a").provenance["dataset_fingerprint"]
    )


def test_zoo_model_weights_hash_is_checked_without_loading(tmp_path, torch_threads):
    """The default environment knows a zoo model's weights hash before loading (random test
    model: its state dict); a record claiming other weights is re-measured."""
    from repro.zoo import load_model
    from repro.zoo.specs import get_spec
    from repro.zoo.weights_identity import expected_identity, state_dict_sha256

    model = load_model("tiny_random_a")
    assert (
        model.weights_sha256
        == state_dict_sha256(model.model)
        == expected_identity(get_spec("tiny_random_a"), tmp_path)
    )
    assert model.weights_sha256 != load_model("tiny_random_b").weights_sha256
    env = Environment(open_source=fakes.make_source, measurement=fakes.MEASUREMENTS.__getitem__)
    store = Store(tmp_path)
    _sweep(store, env, models=("tiny_random_a",))
    rec = store.read("tiny_random_a", "fake_a")
    assert rec.provenance["model_weights_sha256"] == model.weights_sha256
    path = store.record_path("tiny_random_a", "fake_a")
    data = json.loads(path.read_text())
    data["provenance"]["model_weights_sha256"] = "0" * 64
    path.write_text(json.dumps(data))
    assert len(_sweep(store, env, models=("tiny_random_a",)).remeasured) == 1


# --------------------------------------------------------------------------- corrupt records
@pytest.mark.parametrize(
    "writer,expect",
    [
        (malformed.record_missing_key, "lacks field 'status'"),
        (malformed.record_k_above_n, "k=60 of n=50 (expected 0 <= k <= n)"),
        (malformed.record_truncated, "is not valid JSON"),
    ],
)
def test_a_corrupt_record_names_its_path_and_how_to_remove_it(tmp_path, writer, expect):
    path = writer(tmp_path)
    with pytest.raises(DataError) as err:
        Store(tmp_path).read("m1", "imagenet")
    msg = str(err.value)
    assert (
        msg.startswith(f"{path}: job record ")
        and expect in msg
        and f"rm '{path}'" in msg
        and "\n" not in msg
    )


def test_a_rate_from_zero_items_is_corrupt(tmp_path):
    data = malformed.store_record(k=0, n=0)
    data["conditions"][0]["rate"] = 0.5
    malformed.write_record(tmp_path, "m1", "imagenet", data)
    with pytest.raises(DataError, match="rate .* formed from n = 0 items"):
        Store(tmp_path).read("m1", "imagenet")


def test_a_record_copied_into_another_models_folder_does_not_count_there(tmp_path):
    path = malformed.record_in_another_models_folder(tmp_path)
    with pytest.raises(DataError, match="is of m1 x imagenet, whose place is .*m1/imagenet.json"):
        Store(tmp_path).read("m2", "imagenet")
    store = Store(tmp_path)
    assert list(store) == [] and store.problems[0][0] == path
    assert wide_table(tmp_path, versions=None, report=None) == {}


def test_sweep_reports_a_corrupt_record_and_goes_on(tmp_path, torch_threads):
    store = Store(tmp_path)
    path = malformed.write_record(tmp_path, "tiny_a", "fake_a", "{not json")
    logged: list[str] = []
    summary = _sweep(
        store,
        _env(),
        models=("tiny_a", "tiny_b"),
        measurements=("fake_a", "fake_b"),
        log=logged.append,
    )
    assert [str(j) for j, _ in summary.corrupt] == ["tiny_a x fake_a"]
    assert len(summary.ran) == 3 and "1 corrupt record(s) skipped" in summary.line()
    assert path.read_text() == "{not json"  # left for the user to look at, not overwritten
    assert any(m.startswith("CORRUPT tiny_a x fake_a: ") and f"rm '{path}'" in m for m in logged)


def test_mini_and_partial_values_are_not_overlaid_on_the_published_table(tmp_path):
    for model, prov in (
        ("full", {"dataset_mini": False, "dataset_partial": False}),
        ("mini", {"dataset_mini": True, "dataset_partial": True}),
        ("part", {"dataset_mini": False, "dataset_partial": True, "dataset_items": 1000}),
    ):
        malformed.write_record(tmp_path, model, "imagenet", malformed.store_record(model, **prov))
    said: list[str] = []
    wide = wide_table(tmp_path, versions=None, report=said.append)
    assert set(wide) == {"full"}
    assert any("mini/imagenet.json: left out: measured on generated mini data" in m for m in said)
    assert any(
        "part/imagenet.json: left out: measured on part of the dataset (1000 items)" in m
        for m in said
    )
    assert set(wide_table(tmp_path, versions=None, allow_mini=True, report=None)) == {
        "full",
        "mini",
        "part",
    }


def test_a_read_only_store_is_a_data_error(tmp_path, monkeypatch):
    """EROFS (a read-only file system) on the record and on the lock: one-line DataErrors."""

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr("repro.store.files.temp_file", refuse)
    with pytest.raises(
        DataError,
        match=r"cannot write .*imagenet\.json: Read-only file system \(the measurement store",
    ):
        Store(tmp_path).write(
            __import__("repro.store.record", fromlist=["JobRecord"]).JobRecord(
                "m1", "imagenet", "1+1", "ok"
            )
        )
    monkeypatch.setattr("repro.store.files.os.open", refuse)
    with pytest.raises(DataError, match="cannot write .*imagenet.lock"):
        Store(tmp_path).lock("m1", "imagenet").acquire()


def test_identity_reasons_in_words():
    from repro.runner.identity import JobIdentity, mismatches

    now = JobIdentity("imagenet_val", "a" * 32, 50000, False, False, "w" * 64)
    same = now.provenance()
    assert mismatches(same, now) == []
    assert mismatches({**same, "dataset_items": 49000}, now) == [
        "measured on 49000 items, the dataset now has 50000"
    ]
    assert mismatches({**same, "model_weights_sha256": None}, now) == [
        "recorded without the weights hash"
    ]
    assert mismatches({"seed": 0}, now) == ["recorded without a dataset fingerprint"]
    assert np.all(
        [
            isinstance(m, str)
            for m in mismatches({**same, "dataset_mini": True, "dataset_fingerprint": "b"}, now)
        ]
    )

"""A failed job is kept while nothing it depends on has changed, and run again once something has
(its checkpoint, the code, the model's entry, the dataset: ``repro.runner.inputs``); ``measure``
exits 1 whenever a requested measurement is neither stored nor measured, so that a CI retry after
a failure cannot pass without the measurement."""

from __future__ import annotations

import pytest

from repro.runner import jobs as runner_jobs
from repro.runner.dispatch import MeasureRequest, measure
from repro.runner.inputs import changed
from repro.runner.jobs import Environment, Job, _Loaded, jobs_for, run_sweep
from repro.store.files import Store
from tests import fakes

pytestmark = pytest.mark.unit

MODELS = ["tiny_a", "tiny_b"]


def _sha(name: str) -> str:
    """The weights identity a fake model loads with (the hash of its state dict)."""
    from repro.zoo.weights_identity import state_dict_sha256

    return state_dict_sha256(fakes.make_model(name))


def _env(weights: dict[str, str | None]) -> Environment:
    """The fakes' environment, whose models' weights identity is ``weights`` (None: the
    checkpoint is missing), read without loading the model."""
    env = fakes.environment()
    env.weights_identity = weights.get
    return env


def _sweep(store, env, **kw):
    return run_sweep(jobs_for(MODELS, ["fake_a"]), store, env=env, progress=False, **kw)


def test_a_failed_job_is_kept_until_its_checkpoint_appears(tmp_path, monkeypatch, torch_threads):
    store = Store(tmp_path)
    weights: dict[str, str | None] = {"tiny_a": None, "tiny_b": _sha("tiny_b")}
    monkeypatch.setenv("FAKE_FAIL_MODELS", "tiny_a")  # its checkpoint is missing: loading fails
    first = _sweep(store, _env(weights))
    assert first.failed == [Job("tiny_a", "fake_a")]
    inputs = store.read("tiny_a", "fake_a").provenance["inputs"]
    assert inputs["weights"] is None and inputs["model"] is None  # a custom environment's model
    assert len(inputs["code"]) == 64 and len(inputs["data"]) == 64

    # the failure is fixed but nothing the job depends on says so: kept, and said to be kept
    monkeypatch.delenv("FAKE_FAIL_MODELS")
    kept = _sweep(store, _env(weights))
    assert not kept.ran and kept.kept_failed == [Job("tiny_a", "fake_a")]
    assert "2 already in the store (1 of them failed before and kept" in kept.line()

    # the checkpoint is there now: run again, measured, counted as retried
    weights["tiny_a"] = _sha("tiny_a")
    lines: list[str] = []
    again = _sweep(store, _env(weights), log=lines.append)
    assert again.ran == again.retried == [Job("tiny_a", "fake_a")] and not again.failed
    assert not again.kept_failed and store.read("tiny_a", "fake_a").ok
    assert lines == [
        "running tiny_a x fake_a again (it failed before; since then its checkpoint is available "
        "now (it was not))"
    ]
    assert "1 failed before and run again (what they depend on changed)" in again.line()
    assert store.read("tiny_a", "fake_a").provenance["inputs"]["weights"] == _sha("tiny_a")


def test_a_failed_job_runs_again_after_a_code_change(tmp_path, monkeypatch, torch_threads):
    store = Store(tmp_path)
    monkeypatch.setenv("FAKE_FAIL_MODELS", "tiny_a")
    _sweep(store, fakes.environment())
    assert _sweep(store, fakes.environment()).kept_failed == [Job("tiny_a", "fake_a")]
    monkeypatch.setattr(runner_jobs, "code_identity", lambda: "0" * 64)
    lines: list[str] = []
    s = _sweep(store, fakes.environment(), log=lines.append)
    # it ran (and failed again: the fake still fails), and now records the new code
    assert s.retried == s.failed == [Job("tiny_a", "fake_a")] and not s.kept_failed
    assert "since then the code (the repro package, models.toml included) changed" in lines[0]
    assert store.read("tiny_a", "fake_a").provenance["inputs"]["code"] == "0" * 64
    assert _sweep(store, fakes.environment()).kept_failed == [Job("tiny_a", "fake_a")]


def test_a_failed_record_without_its_inputs_runs_again_once(tmp_path, monkeypatch, torch_threads):
    store = Store(tmp_path)
    monkeypatch.setenv("FAKE_FAIL_MODELS", "tiny_a")
    _sweep(store, fakes.environment())
    rec = store.read("tiny_a", "fake_a")
    del rec.provenance["inputs"]  # as an older version wrote it
    store.write(rec)
    s = _sweep(store, fakes.environment())
    assert s.retried == [Job("tiny_a", "fake_a")]
    assert _sweep(store, fakes.environment()).kept_failed == [Job("tiny_a", "fake_a")]


def test_the_inputs_of_a_zoo_model_follow_its_checkpoint_and_entry(tmp_path):
    """A ``file://`` checkpoint (the zoo's own local-file spec) missing, then written, then
    another file: the weights digest is None, then the file's, then another; the entry's digest
    follows the path it names."""
    import torch

    from repro.measurements.registry import get as measurement

    spec = measurement("shape_bias")
    path = tmp_path / "mine.pth"
    job = Job(f"file://{path}", "shape_bias")

    def inputs():
        return _Loaded(Environment(data_dir=tmp_path), "cpu").inputs(job, spec)

    missing = inputs()
    assert missing["weights"] is None and missing["model"] is not None
    torch.save({"w": torch.zeros(2)}, path)
    there = inputs()
    assert there["weights"] is not None
    assert changed(missing, there) == ["its checkpoint is available now (it was not)"]
    torch.save({"w": torch.ones(2)}, path)
    other = inputs()
    assert changed(there, other) == ["its checkpoint changed"]
    moved = _Loaded(Environment(data_dir=tmp_path), "cpu").inputs(
        Job(f"file://{tmp_path / 'other.pth'}", "shape_bias"), spec
    )
    assert "the model's entry (arch, remap, source) changed" in changed(there, moved)


def test_changed_names_every_input_that_differs():
    then = {"code": "c", "model": "m", "weights": "w", "data": None}
    assert changed(then, dict(then)) == []
    assert changed(then, {**then, "model": "m2", "data": "d"}) == [
        "the model's entry (arch, remap, source) changed",
        "the dataset is available now (it was not)",
    ]
    assert changed(None, then) == [
        "its record does not say what it ran with (written by an older version)"
    ]


def _request(store, **kw) -> MeasureRequest:
    return MeasureRequest(
        models=["m1", "m2"],
        measurements=["fake_a"],
        store=store,
        device="cpu",
        progress=False,
        env="tests.fakes:environment",
        **kw,
    )


def test_measure_exits_1_while_a_requested_measurement_is_not_stored(
    tmp_path, monkeypatch, torch_threads
):
    """The CI retry: the first run fails a job (exit 1); a re-run that changes nothing the job
    depends on measures nothing and still exits 1, naming the job, its error and what to do; with
    ``--retry-failed`` it is measured and the command exits 0."""
    store = tmp_path / "store"
    monkeypatch.setenv("FAKE_FAIL_MODELS", "m1")
    out: list[str] = []
    assert measure(_request(store), log=out.append, warn=out.append) == 1
    monkeypatch.delenv("FAKE_FAIL_MODELS")
    out.clear()
    assert measure(_request(store), log=out.append, warn=out.append) == 1
    assert out[0].startswith("0 measured (0 failed") and "2 already in the store (1 of" in out[0]
    assert out[1] == (
        "  not measured: m1 x fake_a (it failed before (RuntimeError: cannot load m1 (fake "
        "failure)) and nothing it depends on has changed since (code, model entry, checkpoint, "
        "dataset); fix the cause, or run again with --retry-failed; see "
        f"{Store(store).record_path('m1', 'fake_a')})"
    )
    out.clear()
    assert measure(_request(store, retry_failed=True), log=out.append, warn=out.append) == 0
    assert Store(store).read("m1", "fake_a").ok
    assert measure(_request(store), log=out.append, warn=out.append) == 0  # all stored: 0


def test_measure_exits_1_for_a_job_another_command_holds_and_has_not_stored(
    tmp_path, torch_threads
):
    store = tmp_path / "store"
    lock = Store(store).lock("m2", "fake_a")
    assert lock.acquire()
    out: list[str] = []
    try:
        status = measure(_request(store), log=out.append, warn=out.append)
    finally:
        lock.release()
    assert status == 1
    assert "  not measured: m2 x fake_a (no record stored; another measure command held it)" in out

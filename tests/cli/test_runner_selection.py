"""The tests of tests/unit/test_runner_selection.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import pytest

from repro.base.errors import DataError
from repro.base.study import get_study

pytestmark = pytest.mark.cli


def test_a_measurement_of_an_alias_lands_on_the_study_models_row(tmp_path, run_cli):
    """The bug: ``measure --models resnet50.tv_in1k`` stored the result under the alias, so the
    claims (which look up ``tv_resnet50``) never saw it."""
    from repro.store.export import wide_table
    from repro.store.files import Store

    out = run_cli(
        "measure",
        "--models",
        "resnet50.tv_in1k",
        "--measurements",
        "fake_a",
        "--env",
        "tests.fakes:environment",
        "--store",
        tmp_path,
        "--device",
        "cpu",
        "--no-progress",
        env={"OMP_NUM_THREADS": "1"},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert [(r.model, r.measurement) for r in Store(tmp_path)] == [("tv_resnet50", "fake_a")]
    assert list(wide_table(tmp_path, versions={"fake_a": "1+1"})) == ["tv_resnet50"]


def test_the_study_models_come_from_the_data_directory_passed_down(tmp_path, data_dir, monkeypatch):
    """The bug: ``reproduce --data-dir X`` took its model list from the default data directory.
    Pointing the plan at an empty directory must fail naming THAT directory, and pointing it at
    the real one gives the study's 48 models."""
    from repro.runner import pipeline

    (tmp_path / "none.toml").write_text(
        ""
    )  # an empty config (a missing REPRO_CONFIG file is an error)
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv(
        "REPRO_IMAGENET_VAL_ROOT", str(tmp_path / "val")
    )  # one dataset configured: not mini
    monkeypatch.setenv("REPRO_DATA_DIR", str(data_dir))  # the default would find the files
    study = get_study("gavrikov2024")
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    with pytest.raises(DataError, match=str(empty)):
        pipeline.plan(study, device="cpu", store=tmp_path / "store", data_dir=empty)
    plan = pipeline.plan(study, device="cpu", store=tmp_path / "store", data_dir=data_dir)
    assert len(plan.models) == 48 and plan.models[0] in plan.models and "tv_resnet50" in plan.models

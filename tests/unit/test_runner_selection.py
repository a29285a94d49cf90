"""Canonical model names at the door and the data directory passed down: a model named by a
zoo alias is stored and looked up under its canonical name (it lands on the study model's row),
and the study's model list comes from the data directory the caller names, never from the
defaults."""

from __future__ import annotations

import pytest

from repro.runner.jobs import Job, jobs_for
from repro.runner.selection import canonical_name, configured_models

pytestmark = pytest.mark.unit


def test_an_alias_resolves_to_the_canonical_name():
    assert canonical_name("resnet50.tv_in1k") == "tv_resnet50"
    assert canonical_name("tv_resnet50") == "tv_resnet50"
    assert canonical_name("my_own_model") == "my_own_model"  # not a zoo name: unchanged


def test_jobs_of_an_alias_and_its_target_are_one_job():
    assert jobs_for(["resnet50.tv_in1k", "tv_resnet50"], ["shape_bias"]) == [
        Job("tv_resnet50", "shape_bias")
    ]


def test_configured_models_are_canonical(monkeypatch, tmp_path):
    (tmp_path / "none.toml").write_text(
        ""
    )  # an empty config (a missing REPRO_CONFIG file is an error)
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "none.toml"))
    assert configured_models(["resnet50.tv_in1k", "ssl_resnet50"]) == [
        "tv_resnet50",
        "ssl_resnet50",
    ]

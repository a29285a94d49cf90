"""The study's protocols file (``repro.published.independent.study_protocols``): a model's own
protocol replaces its column's only for that model and those columns, and must name a study
model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from repro.base.errors import ConfigError
from repro.published.independent import study_protocols

pytestmark = pytest.mark.unit

PROTOCOLS = """rule = "r"
[[column]]
columns = ["top1_acc/imagenet*"]
interpolation = "bilinear"
crop_pct = "0.875"
[[model]]
model = "m1"
columns = ["top1_acc/imagenet"]
interpolation = "bicubic"
evidence = "e"
"""


def _study(tmp_path, text):
    (tmp_path / "p.toml").write_text(text)
    return SimpleNamespace(folder=tmp_path, independent=SimpleNamespace(protocols="p.toml"))


def test_a_models_own_protocol_applies_to_that_model_and_those_columns_only(tmp_path):
    p = study_protocols(_study(tmp_path, PROTOCOLS), ["m1", "m2"])
    own = p.of_model("top1_acc/imagenet", "m1")
    assert own is not None and own.stated() == {"interpolation": "bicubic"}
    assert p.of_model("top1_acc/imagenet-v2", "m1") is None  # another column
    assert p.of_model("top1_acc/imagenet", "m2") is None  # another model
    assert p.of("top1_acc/imagenet").stated()["interpolation"] == "bilinear"


def test_a_models_own_protocol_must_name_a_study_model(tmp_path):
    with pytest.raises(ConfigError) as err:
        study_protocols(_study(tmp_path, PROTOCOLS.replace('"m1"', '"m3"')), ["m1", "m2"])
    msg = str(err.value)
    assert msg.startswith(str((tmp_path / "p.toml").resolve())) and "[[model]] #1" in msg
    assert "'m3' is not a study model" in msg


def test_a_models_own_protocol_needs_its_evidence(tmp_path):
    with pytest.raises(ConfigError) as err:
        study_protocols(_study(tmp_path, PROTOCOLS.replace('evidence = "e"\n', "")), ["m1"])
    assert "[[model]] #1" in str(err.value) and "evidence" in str(err.value)

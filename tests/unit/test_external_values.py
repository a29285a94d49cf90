"""Externally known values (``repro.zoo.external``): ``[models.NAME.external]`` tables and the
``[paths] external`` CSV of repro.toml, read with their protocol and source; every malformed
entry one ConfigError naming the file, the key or row, and what was expected; every command
checks them first (``python -m repro models`` then fails with exit 2)."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.zoo.external import EXTERNAL, external_values

pytestmark = pytest.mark.unit
LITE0 = "efficientnet_lite0"
GOOD = f"""
[models.{LITE0}.external]
"top1_acc/imagenet" = {{ value = 75.1, protocol = "224 px, crop 0.875, bicubic", \
source = "https://example.org/lite" }}
"""


def _config(tmp_path, monkeypatch, text: str, csv: str | None = None):
    cfg = tmp_path / "cfg" / "repro.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(text)
    if csv is not None:
        (cfg.parent / "known.csv").write_text(csv)
    monkeypatch.setenv("REPRO_CONFIG", str(cfg))
    return cfg


def test_tables_and_csv_give_values_with_protocol_and_source(tmp_path, monkeypatch):
    cfg = _config(
        tmp_path,
        monkeypatch,
        GOOD + '\n[paths]\nexternal = "known.csv"\n',
        "model,column,value,protocol,source\n"
        'efficientnet_lite1,top1_acc/imagenet,76.7,"240 px, crop 0.882",paper table 2\n'
        "tv_resnet50,shape-bias,0.21,cue-conflict (model-vs-human),Geirhos 2019\n",
    )
    got = external_values()
    assert sorted(got) == [LITE0, "efficientnet_lite1", "tv_resnet50"]
    v = got[LITE0]["top1_acc/imagenet"]
    assert (v.value, v.protocol, v.source) == (
        75.1,
        "224 px, crop 0.875, bicubic",
        "https://example.org/lite",
    )
    assert v.label() == f"{EXTERNAL} (224 px, crop 0.875, bicubic)" and str(cfg) in v.origin
    w = got["efficientnet_lite1"]["top1_acc/imagenet"]
    assert (w.value, w.protocol) == (76.7, "240 px, crop 0.882") and w.origin.endswith(
        "known.csv:2"
    )
    assert got["tv_resnet50"]["shape-bias"].value == 0.21


def test_no_config_no_values(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("REPRO_CONFIG", raising=False)
    (tmp_path / ".git").mkdir()  # the walk up stops at the repository root
    assert external_values() == {}


@pytest.mark.parametrize(
    "text, csv, message",
    [
        (
            f'[models.{LITE0}.external]\n"c" = {{ value = 1.0, source = "s" }}\n',
            None,
            "field 'protocol' must be",
        ),
        (
            f'[models.{LITE0}.external]\n"c" = {{ value = 1.0, protocol = "p" }}\n',
            None,
            "field 'source' must be",
        ),
        (
            f'[models.{LITE0}.external]\n"c" = {{ value = nan, protocol = "p", source = "s" }}\n',
            None,
            "finite number",
        ),
        (
            f'[models.{LITE0}.external]\n"c" = {{ value = "high", protocol = "p", source '
            f'= "s" }}\n',
            None,
            "field 'value' must be a number",
        ),
        (
            f'[models.{LITE0}.external]\n"c" = {{ value = 1, protocol = "p", source = '
            f'"s", n = 3 }}\n',
            None,
            "unknown field(s) n",
        ),
        (f'[models.{LITE0}.external]\n"c" = 75.1\n', None, "expected a table { value = ..."),
        (
            '[models.efficientnet_lite9.external]\n"c" = { value = 1, protocol = "p", '
            'source = "s" }\n',
            None,
            "[models.efficientnet_lite9.external]: no built-in model of that name; did you mean",
        ),
        (
            '[paths]\nexternal = "known.csv"\n',
            "model,column,value\nx,y,1\n",
            "header must be model,column,value",
        ),
        (
            '[paths]\nexternal = "known.csv"\n',
            "model,column,value,protocol,source\nresnet5,c,1,p,s\n",
            "known.csv:2: unknown model 'resnet5'",
        ),
        (
            '[paths]\nexternal = "known.csv"\n',
            "model,column,value,protocol,source\ntv_resnet50,c,1,p\n",
            "known.csv:2: expected 5 fields",
        ),
        ('[paths]\nexternal = "missing.csv"\n', None, "missing.csv"),
        (
            GOOD + '\n[paths]\nexternal = "known.csv"\n',
            f"model,column,value,protocol,source\n{LITE0},top1_acc/imagenet,75,p,s\n",
            "is given twice",
        ),
    ],
)
def test_malformed_entries_are_one_config_error(tmp_path, monkeypatch, text, csv, message):
    _config(tmp_path, monkeypatch, text, csv)
    with pytest.raises(ConfigError) as err:
        external_values()
    assert message in str(err.value) and "\n" not in str(err.value)

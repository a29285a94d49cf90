"""``python -m repro models``: lists the zoo with cache status, and never imports torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]


def test_models_json_lists_all_with_cache_status(run_cli, tmp_path):
    wdir = tmp_path / "weights"
    (wdir / "resnet50_dino").mkdir(parents=True)
    (wdir / "resnet50_dino" / "dino_resnet50_pretrain.pth").write_bytes(b"x")  # head still missing
    (wdir / "resnet50.a1_in1k").mkdir()
    (wdir / "resnet50.a1_in1k" / "model.safetensors").write_bytes(b"x")
    (tmp_path / "none.toml").write_text(
        ""
    )  # an empty config (a missing REPRO_CONFIG file is an error)
    res = run_cli(
        "models",
        "--json",
        env={"REPRO_WEIGHTS_DIR": str(wdir), "REPRO_CONFIG": str(tmp_path / "none.toml")},
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    rows = {r["name"]: r for r in out["models"]}
    assert out["weights_dir"] == str(wdir)
    assert len(rows) == 56 and sum(r["study"] for r in rows.values()) == 48
    assert (
        rows["efficientnet_lite0"]["source"] == "package"
        and rows["efficientnet_lite0"]["normalization"] == "inception"
    )
    assert rows["resnet50.a1_in1k"]["cached"] == "yes"
    assert rows["resnet50_dino"]["cached"] == "no"
    assert rows["tiny_random_a"]["cached"] == "-"
    assert rows["resnet50_simclrv2"] | {"cached": None} == {
        "name": "resnet50_simclrv2",
        "category": "contrastive",
        "source": "gdrive",
        "reference": "1fDaMhujPnxo4SYOe4asPqCKQ3XB_sZvj",
        "study": True,
        "cached": None,
        "normalization": "raw",
        "aliases": [],
        # its names in the study's independent sources (issue 35): the testbed's 100%-fine-tuned
        # port is it, the linear-probe port is other weights under a similar name
        "other_sources": [
            {
                "source": "testbed",
                "name": "resnet50_simclrv2_finetuned_100pct_tf_port",
                "identity": "probable",
            },
            {
                "source": "testbed",
                "name": "resnet50_simclrv2_linear_probe_tf_port",
                "identity": "not_same",
            },
            # the first under ImageNet-X's factor tables (its imagenet_testbed set; the collision
            # is declared once, by the testbed)
            {
                "source": "imagenetx",
                "name": "imagenet_testbed/resnet50_simclrv2_finetuned_100pct_tf_port",
                "identity": "probable",
            },
        ],
    }


def test_models_table_and_local_override(run_cli, tmp_path):
    local = tmp_path / "mine.pth"
    local.write_bytes(b"x")
    cfg = tmp_path / "repro.toml"
    cfg.write_text(
        f'[models]\nresnet50_prime = "{local}"\nresnet50_swav = "{tmp_path / "absent.pth"}"\n'
    )
    res = run_cli(
        "models",
        "--study",
        env={"REPRO_WEIGHTS_DIR": str(tmp_path / "w"), "REPRO_CONFIG": str(cfg)},
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split() == [
        *("name", "category", "source", "cached"),
        *("in", "other", "sources", "(identity)"),
    ]
    table = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert len(table) == 48
    assert table["resnet50_prime"][1:4] == ["augmentation", "url", "local"]
    assert table["resnet50_swav"][3] == "local-missing"
    assert table["tv_resnet50"][1:5] == ["baseline", "timm", "no", "testbed:resnet50"]
    assert lines[-1].startswith("48 models (48 of the study); weights present for 1;")


def test_models_command_does_not_import_torch(tmp_path):
    code = (
        "import sys, io, contextlib\nfrom repro.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['models', '--json']) == 0\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', "
        "'torchvision', 'timm', 'numpy'))\n"
        "assert not bad, bad\n"
    )
    (tmp_path / "none.toml").write_text(
        ""
    )  # an empty config (a missing REPRO_CONFIG file is an error)
    env = dict(os.environ, PYTHONPATH=str(ROOT), REPRO_CONFIG=str(tmp_path / "none.toml"))
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr


def test_models_bad_config_is_one_line_error(run_cli, tmp_path):
    cfg = tmp_path / "repro.toml"
    cfg.write_text('[models.mine]\nsource = "ftp"\nreference = "x"\n')
    res = run_cli("models", env={"REPRO_CONFIG": str(cfg)})
    assert res.returncode == 2
    assert (
        res.stderr.startswith("error: ")
        and str(cfg) in res.stderr
        and len(res.stderr.splitlines()) == 1
    )

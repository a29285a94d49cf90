"""The tests of tests/unit/test_zoo_package.py that start a process (`python -m repro` or another),
in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.cli


def test_cli_names_the_extra_when_the_package_is_missing(run_cli, tmp_path, data_dir):
    cfg = tmp_path / "repro.toml"
    cfg.write_text(
        '[models.my_lite]\nsource = "package"\nreference = "repro-no-such-distribution"\n'
        'file = "pkg/models/w.pth"\nsha256 = "'
        + "0"
        * 64
        + '"\narch = "timm:tf_efficientnet_lite0"\n'
        'normalization = "inception"\nremap = "positional"\nextra = "real"\n'
    )
    res = run_cli(
        "probe",
        "shape-bias",
        "--model",
        "my_lite",
        "--data",
        data_dir / "texture-vs-shape" / "cue-conflict",
        "--device",
        "cpu",
        env={"REPRO_CONFIG": str(cfg)},
    )
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and 'pip install -e ".[real]"' in lines[0] and "my_lite" in lines[0], (
        res.stderr
    )

"""The tests of tests/unit/test_datasets.py that start a process (`python -m repro` or another), in
the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.unit import test_datasets as unit_module
from tests.unit.test_datasets import _copy

mini = unit_module.mini  # the fixture of tests/unit/test_datasets.py

pytestmark = pytest.mark.cli


def test_make_mini_cli(run_cli, tmp_path):
    out = tmp_path / "m"
    res = run_cli(
        "data", "make-mini", str(out), "--per-class", "1", "--datasets", "imagenet_a", "stylized"
    )
    assert res.returncode == 0, res.stderr
    assert re.search(r"^imagenet_a\s+20\s+20 classes x 1\s", res.stdout, re.M)
    assert re.search(r"^stylized\s+16\s+16 classes x 1\s", res.stdout, re.M)
    assert "not evidence" in res.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "imagenet_a",
        "mini-manifest.json",
        "repro.toml",
        "stylized",
    ]
    (tmp_path / "real" / "imagenet_a").mkdir(parents=True)
    res = run_cli("data", "make-mini", str(tmp_path / "real"), "--datasets", "imagenet_a")
    assert res.returncode == 2
    assert re.fullmatch(
        r"error: .*real/imagenet_a: exists and is not a generated mini copy .*refusing "
        r"to overwrite it\n",
        res.stderr,
    )


def test_data_check_cli_reports_mini_ok_and_broken_roots(run_cli, mini, tmp_path):
    res = run_cli("data", "check", "imagenet_v2", "stylized", "--root", str(mini))
    assert res.returncode == 0, res.stderr
    assert re.search(r"^imagenet_v2\s+mini\s+100 images\s", res.stdout, re.M)
    assert re.search(r"^stylized\s+mini\s+16 images\s", res.stdout, re.M)
    root = _copy(mini, "imagenet_v2", tmp_path)
    shutil.rmtree(root / "10")
    (tmp_path / "none.toml").write_text(
        ""
    )  # an empty config (a missing REPRO_CONFIG file is an error)
    res = run_cli(
        "data",
        "check",
        "imagenet_v2",
        "imagenet_a",
        env={
            "REPRO_IMAGENET_V2_ROOT": str(root),
            "REPRO_CONFIG": str(tmp_path / "none.toml"),
            "REPRO_IMAGENET_A_ROOT": "",
        },
    )
    assert res.returncode == 1
    assert re.search(
        r"^imagenet_v2\s+ERROR\s+imagenet_v2 at .*: expected 100 class folders with 1 images each, "
        r"found 99 folders; missing 10$",
        res.stdout,
        re.M,
    )
    assert re.search(
        r"^imagenet_a\s+missing\s+not configured", res.stdout, re.M
    )  # named, not found: fails the check

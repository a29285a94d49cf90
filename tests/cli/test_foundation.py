"""The tests of tests/unit/test_foundation.py that start a process (`python -m repro` or another),
in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.cli


def test_data_verify_cli_on_shared_data(data_dir, run_cli):
    out = run_cli("data", "verify", "--data-dir", data_dir)
    assert out.returncode == 0, out.stdout + out.stderr
    # 2 Gavrikov tables, 49 ImageNet-X, 19 model-vs-human, 102 critical-band-masking (86 networks),
    # and the files of Gavrikov's independent sources (issue 35): the testbed's table, 6 of timm's
    # results tables and author_reported.csv (ImageNet-X's ResNet50.csv is pinned already)
    assert "180 of 180 pinned files verified" in out.stdout


def test_cli_reports_repro_errors_in_one_line(tmp_path, run_cli):
    out = run_cli("data", "fetch", "nonexistent.csv", "--data-dir", tmp_path)
    assert out.returncode == 2
    assert (
        out.stderr.startswith("error: nonexistent.csv: not a pinned file")
        and "Traceback" not in out.stderr
    )

"""The tests of tests/unit/test_published_readers.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.cli


def test_published_files_load_and_agree(data_dir):
    from repro.base.study import get_study
    from repro.published.study_data import study_categories, study_table

    study = get_study("gavrikov2024")
    t = study_table(study, data_dir)
    cats = study_categories(study, data_dir, known_models=t.models)
    assert len(t.models) == 70 and sum(map(len, cats.values())) == 48
    assert t.value("tv_resnet50", "top1_acc/imagenet") == pytest.approx(76.146)


def test_cli_reports_corrupt_data_in_one_line(tmp_path, run_cli, data_dir):
    src = (data_dir / "gavrikov2024" / "benchmark.csv").read_text()
    (tmp_path / "gavrikov2024").mkdir()
    body, last = src.rstrip("\n")[:-1], src.rstrip("\n")[-1]
    (tmp_path / "gavrikov2024" / "benchmark.csv").write_text(
        body + ("1" if last != "1" else "2") + "\n"
    )
    out = run_cli("claims", "--data-dir", tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert (
        out.stderr.startswith("error: ")
        and "sha256" in out.stderr
        and "Traceback" not in out.stderr
    )
    assert out.stderr.count("\n") == 1

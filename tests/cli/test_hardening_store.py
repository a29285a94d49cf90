"""The tests of tests/unit/test_hardening_store.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from tests.unit import malformed

pytestmark = pytest.mark.cli


def test_compare_and_measure_cli_go_on_past_a_corrupt_record(tmp_path, run_cli, data_dir):
    store = tmp_path / "store"
    rec = malformed.store_record("tv_resnet50", k=38065, n=50000)
    malformed.write_record(store, "tv_resnet50", "imagenet", rec)
    bad = malformed.record_missing_key(store)
    res = run_cli("compare", "--store", store, "--data-dir", data_dir)
    assert res.returncode == 1 and "Traceback" not in res.stderr, (
        res.stderr
    )  # the rows shown, the command fails
    assert "tv_resnet50  top1_acc/imagenet" in res.stdout and "inside" in res.stdout
    assert (
        f"corrupt: {bad}: job record lacks field 'status'" in res.stdout
        and f"rm '{bad}'" in res.stdout
    )
    data = malformed.store_record(measurement="fake_a")
    del data["status"]
    bad = malformed.write_record(store, "m1", "fake_a", data)
    res = run_cli(
        "measure",
        "--models",
        "m1,tiny_b",
        "--measurements",
        "fake_a",
        "--store",
        store,
        "--env",
        "tests.fakes:environment",
        "--no-progress",
        "--device",
        "cpu",
    )
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert (
        "1 measured" in res.stdout
        and f"corrupt: m1 x fake_a: {bad}: job record lacks field" in res.stdout
    )


def test_claims_on_the_store_leave_out_mini_values(tmp_path, data_dir):
    """``--source store``: a mini record of a study model does not replace its published value."""
    from repro.base.study import get_study
    from repro.claims.context import measured_context

    rec = malformed.store_record("tv_resnet50", k=10, n=50, dataset_mini=True)
    rec["version"] = "1+1"
    malformed.write_record(tmp_path, "tv_resnet50", "imagenet", rec)
    ctx = measured_context(get_study("gavrikov2024"), tmp_path, data_dir)
    assert ctx.table.source_of("top1_acc/imagenet") == "published"
    assert ctx.table.values["tv_resnet50"]["top1_acc/imagenet"] == pytest.approx(76.146)


def _unwritable_store(tmp_path):
    """A store folder this process cannot write: read-only permissions, or (as root, who writes
    anywhere) a path under /sys, which refuses new folders."""
    if os.geteuid() != 0:
        store = tmp_path / "store"
        store.mkdir()
        store.chmod(stat.S_IRUSR | stat.S_IXUSR)
        return store
    store = Path("/sys/repro-store-test")
    try:
        store.mkdir()
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return store
    pytest.skip("no unwritable folder available as root")


def test_a_read_only_store_is_one_line(tmp_path, run_cli):
    store = _unwritable_store(tmp_path)
    try:
        res = run_cli(
            "measure",
            "--models",
            "m1",
            "--measurements",
            "fake_a",
            "--store",
            store,
            "--env",
            "tests.fakes:environment",
            "--no-progress",
            "--device",
            "cpu",
        )
    finally:
        if store.is_relative_to(tmp_path):
            store.chmod(stat.S_IRWXU)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert (
        res.stderr.startswith(f"error: cannot write {store}/m1")
        and "must be writable" in res.stderr
    )
    assert res.stderr.count("\n") == 1


def test_reproduce_reads_past_a_corrupt_record(tmp_path, data_dir, capsys):
    """``reproduce``'s store readers (the measured table for the claims, the report's comparison)
    leave a corrupt record out, say so, and go on with the others."""
    from repro.base.study import get_study
    from repro.report.sections.measurements import measurement_table
    from repro.runner.pipeline import MeasurePlan, measured_table

    store = tmp_path / "store"
    good = malformed.store_record(
        "tv_resnet50", k=38065, n=50000, dataset_mini=False, dataset_partial=False
    )
    malformed.write_record(store, "tv_resnet50", "imagenet", good)
    bad = malformed.write_record(
        store, "tv2_resnet50", "imagenet", malformed.store_record("tv2_resnet50", k=9, n=5)
    )
    plan = MeasurePlan(
        get_study("gavrikov2024"),
        False,
        ["tv_resnet50", "tv2_resnet50"],
        ["imagenet"],
        store,
        "cpu",
        {},
    )
    table = measured_table(plan)
    assert table == {"tv_resnet50": {"top1_acc/imagenet": pytest.approx(76.13)}}
    said = capsys.readouterr().err
    assert said.startswith(f"warning: {bad}: job record has condition 'top1' with k=9 of n=5"), said
    text = measurement_table(plan, data_dir)
    assert "| tv_resnet50 | `top1_acc/imagenet` | 76.130 |" in text
    assert (
        f"| tv2_resnet50 | `(imagenet)` | - | - | - | - | - | corrupt: {bad}: job record "
        "has condition"
    ) in text

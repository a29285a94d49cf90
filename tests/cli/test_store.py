"""The tests of tests/unit/test_store.py that start a process (`python -m repro` or another), in
the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from repro.base.stats import binomial_interval
from repro.store.files import Store
from tests.unit.test_store import _rec
from tests.waiting import HANG_GUARD_S, wait_exit

pytestmark = pytest.mark.cli


def test_lock_of_a_killed_holder_is_free_again(tmp_path):
    store = Store(tmp_path)
    code = textwrap.dedent(f"""
        import sys
        from repro.store.files import Store
        assert Store({str(tmp_path)!r}).lock("m1", "imagenet").acquire()
        print("held", flush=True)
        # holds the lock until killed (or its stdin closes), however long the test takes
        sys.stdin.read()
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        assert not store.lock("m1", "imagenet").acquire()
        proc.send_signal(signal.SIGKILL)
        assert wait_exit(proc) == -signal.SIGKILL
        lock = store.lock("m1", "imagenet")
        assert lock.acquire()
        lock.release()
    finally:
        proc.kill()
        proc.wait()


def test_compare_cli_against_benchmark_csv(tmp_path, run_cli, data_dir):
    """torchvision's ResNet-50 V1 gets 38,065/50,000 (76.130%, the ImageNet-X predictions);
    benchmark.csv has 76.146 for tv_resnet50: inside our Wilson interval. PGD stored with the
    published (padded) variant is compared as published; an old version says re-measure."""
    store = Store(tmp_path / "store")
    store.write(_rec("tv_resnet50", "imagenet", version="1+1", k=38065, n=50000))
    store.write(_rec("tv2_resnet50", "imagenet", version="0+1", k=40000, n=50000))
    res = run_cli(
        "compare",
        "--store",
        tmp_path / "store",
        "--data-dir",
        data_dir,
        "--tidy",
        tmp_path / "t.csv",
    )
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("tv_resnet50"))
    lo, hi = binomial_interval(38065, 50000)
    assert line.split()[:7] == [
        "tv_resnet50",
        "top1_acc/imagenet",
        "76.13",
        "38065/50000",
        f"[{100 * lo:.4f},",
        f"{100 * hi:.4f}]",
        "76.146",
    ]
    # -0.016 points: inside the study's 0.1-point implementation margin
    # (agrees), and inside our interval
    assert line.split()[7:10] == ["-0.016", "agrees", "inside"]
    assert "re-measure: stored with version 0+1, current 1+1" in res.stdout
    assert (
        "1 inside, 1 re-measure" in res.stdout
        and "agreement with the published values: 1 agrees" in res.stdout
    )
    # header; condition, column and headline rows; the stale job
    assert (tmp_path / "t.csv").read_text().count("\n") == 1 + 3 + 1


@pytest.mark.parametrize(
    "k,mini,expect",
    [(38065, False, "1 passed"), (40000, False, "1 failed"), (40000, True, "1 skipped")],
)
def test_per_model_gate_gates_on_our_stored_values(tmp_path, data_dir, k, mini, expect):
    """tests/integration/test_pipeline_per_model.py with --source store: 76.13% (0.016 points from
    tv_resnet50's published 76.146: agrees) passes, 80% (differs) fails, 80% on
    mini data is not gated."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    rec = _rec("tv_resnet50", "imagenet", version="1+1", k=k, n=50000)
    rec.provenance["dataset_mini"] = mini
    Store(tmp_path / "store").write(rec)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/integration/test_pipeline_per_model.py",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--source",
            "store",
            "--store",
            str(tmp_path / "store"),
            "--data-dir",
            str(data_dir),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert expect in res.stdout, res.stdout[-2000:]
    if k == 40000 and not mini:
        assert (
            "1 of 1 values differ from their published value" in res.stdout
            and "tv_resnet50" in res.stdout
        )

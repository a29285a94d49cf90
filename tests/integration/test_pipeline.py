"""Integration: the whole pipeline on generated mini data with the zoo's tiny random models.

``python -m repro measure`` runs in a subprocess and is killed (SIGKILL) at a known job (the test
holds a lock that job needs and waits for the command's progress lines of the jobs before it);
exactly the finished jobs are stored, complete. A rerun must keep every finished job untouched (same
inode, mtime and provenance time: not lost, not repeated), finish the rest, and leave a store equal
(values, counts, per-item records) to an uninterrupted run. Then ``python -m repro reproduce``
computes the claims from that store and writes a report that says the numbers are not evidence; a
mini run with a failing job exits 1 naming it (a failed mini job is a broken pipeline).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from repro.report import full_text
from tests.waiting import LineReader, wait_exit

pytestmark = pytest.mark.integration

MODELS = ["tiny_random_a", "tiny_random_b"]
# imagenet_c last: the test stops the sweep at tiny_random_a x imagenet_c (job 3)
MEASUREMENTS = ["imagenet", "shape_bias", "imagenet_c"]
DATASETS = ["imagenet_val", "cue_conflict", "imagenet_c"]
N_JOBS = len(MODELS) * len(MEASUREMENTS)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """Mini data (per_class 1, the three datasets used) where ``reproduce --work-dir`` finds it."""
    from repro.datasets import make_mini

    work = tmp_path_factory.mktemp("pipeline")
    roots = make_mini(work / "data", per_class=1, datasets=DATASETS)
    env = {f"REPRO_{name.upper()}_ROOT": str(path) for name, path in roots.items()}
    env.update(
        {
            "REPRO_CACHE_DIR": str(work / "cache"),
            "OMP_NUM_THREADS": "1",
            "MPLBACKEND": "Agg",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
    )
    return work, env


def _measure_args(store: Path, progress: bool = False) -> list[str]:
    # model by model: the kill below is placed by the job order (jobs 1 and 2 are tiny_random_a's);
    # a data-major sweep (the default) groups by measurement, and its resume is
    # tested in test_data_major.py
    return [
        "measure",
        "--models",
        *MODELS,
        "--measurements",
        *MEASUREMENTS,
        "--device",
        "cpu",
        "--batch-size",
        "32",
        "--store",
        str(store),
        "--order",
        "model-major",
        *([] if progress else ["--no-progress"]),
    ]


def _finished(store: Path) -> dict[str, tuple[int, int, str]]:
    """Finished jobs: record path -> (inode, mtime_ns, provenance finished_utc)."""
    out = {}
    for path in store.glob("*/*.json"):
        st = path.stat()
        out[str(path.relative_to(store))] = (
            st.st_ino,
            st.st_mtime_ns,
            json.loads(path.read_text())["provenance"]["finished_utc"],
        )
    return out


def _content(store: Path) -> dict[str, tuple]:
    from repro.store.files import Store

    return {
        (r.model, r.measurement): (
            r.status,
            r.version,
            r.conditions,
            r.value,
            r.values,
            r.columns,
            r.n_records,
            r.records_sha256,
        )
        for r in Store(store)
    }


def _first_part_cache_lock(env: dict[str, str], dataset: str) -> Path:
    """The lock file that the crop cache takes while it builds the first condition of ``dataset``
    (``repro.datasets.cache``: ``<cache>/crops/.<key>.lock``)."""
    from repro.datasets.cache import cache_key
    from repro.datasets.open import open_files

    first = next(iter(open_files(dataset, env[f"REPRO_{dataset.upper()}_ROOT"]).parts.values()))
    return Path(env["REPRO_CACHE_DIR"]) / "crops" / f".{cache_key(first)}.lock"


@pytest.fixture
def killed(mini, tmp_path):
    """A ``measure`` sweep SIGKILLed at a known job: the test holds the lock of the crop cache that
    job 3 (tiny_random_a x imagenet_c) must build first, so that job cannot finish, and kills the
    command once its own progress lines (its standard error is a pipe) say that jobs 1 and 2 are
    stored. No clock is involved: wherever job 3 is when the kill lands, it has not finished.
    Returns (env, store, finished records, what the command printed)."""
    work, env = mini
    env = {
        **env,
        "REPRO_CACHE_DIR": str(tmp_path / "cache"),
    }  # no crop cache built yet: job 3 builds its own
    store = tmp_path / "store"
    lock_path = _first_part_cache_lock(env, "imagenet_c")
    lock_path.parent.mkdir(parents=True)
    with open(lock_path, "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.Popen(
            [sys.executable, "-m", "repro", *_measure_args(store, progress=True)],
            cwd=work,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            err = LineReader(proc.stderr, proc)
            err.wait_for(
                rf"^job [12]/{N_JOBS}: tiny_random_a x (imagenet|shape_bias): measured", count=2
            )
            proc.send_signal(signal.SIGKILL)
            assert wait_exit(proc, err) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return env, store, _finished(store), err.rest()


def test_a_sweep_killed_at_a_known_job_keeps_exactly_the_jobs_it_finished(killed):
    _, store, before, printed = killed
    assert sorted(before) == ["tiny_random_a/imagenet.json", "tiny_random_a/shape_bias.json"], (
        printed
    )
    for rel in before:  # every visible record is complete and parses (atomic writes)
        assert json.loads((store / rel).read_text())["status"] == "ok"
    assert not [
        p for p in store.rglob("*") if p.is_file() and p.suffix not in (".json", ".gz", ".lock")
    ]
    assert f"job 3/{N_JOBS}" not in printed, printed


def test_killed_sweep_resumes_without_losing_or_repeating_jobs(
    mini, killed, run_cli, data_dir, tmp_path
):
    work, _ = mini
    env, store, before, _ = killed
    assert len(before) == 2

    # 2. the rerun finishes the rest and touches none of the finished jobs
    res = run_cli(*_measure_args(store), cwd=str(work), env=env)
    assert res.returncode == 0, res.stderr
    assert f"{N_JOBS - len(before)} measured (0 failed" in res.stdout
    assert f"{len(before)} already in the store" in res.stdout
    after = _finished(store)
    assert len(after) == N_JOBS
    assert {rel: after[rel] for rel in before} == before

    # 3. the same store as an uninterrupted run
    ref = tmp_path / "ref"
    res = run_cli(*_measure_args(ref), cwd=str(work), env=env)
    assert res.returncode == 0, res.stderr
    resumed, uninterrupted = _content(store), _content(ref)
    assert resumed == uninterrupted and len(resumed) == N_JOBS
    rec = resumed["tiny_random_a", "imagenet_c"]
    assert (
        len(rec[2]) == 95 and sum(c["n"] for c in rec[2]) == 95 * 2
    )  # 19 corruptions x 5 severities x 2 images

    # 4. claims from the store, and the report
    res = run_cli(
        "reproduce",
        "--mini",
        "--work-dir",
        str(work),
        "--store",
        str(store),
        "--models",
        *MODELS,
        "--measurements",
        *MEASUREMENTS,
        "--out",
        str(work / "REPORT.md"),
        "--no-progress",
        "--wide",  # every column of the claims table: the inputs' provenance (mini N) too
        "--data-dir",
        str(data_dir),
        cwd=str(work),
        env=env,
    )
    assert res.returncode == 0, res.stderr
    assert (
        "0 measured (0 failed, 0 re-measured after a version, data or weights change), "
        f"{N_JOBS} already in the store"
    ) in res.stdout
    report = full_text(work / "REPORT.md")
    assert "MINI RUN: these numbers are NOT evidence" in report
    ours = _content(store)["tiny_random_a", "shape_bias"][5][0]
    assert f"| tiny_random_a | `shape-bias` | {ours.value:.3f} | {ours.k}/{ours.n} |" in report
    # tiny_random_a stands in for tv_resnet50; the side model ssl_resnet50 keeps its published value
    assert (
        "| `shape_bias_yfcc_ssl_equals_baseline` | mini 1, published 1 | `shape-bias` "
        "(mini 1, published 1) |"
    ) in report
    # no claim with a mini input is reproduced or not_reproduced: its verdict is mini, in the
    # printed claims table and in the report, whatever its numbers (issue 20)
    lines = res.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["claim", "published"])
    rows = lines[start + 2 : lines.index("", start)]
    with_mini = [r for r in rows if re.search(r"\bmini \d+", r)]
    assert len(with_mini) >= 2 and all(
        " MINI " in r and "reproduced" not in r for r in with_mini
    ), rows
    report_rows = [
        line
        for line in report.splitlines()
        if line.startswith("| `") and re.search(r"\bmini \d+", line)
    ]
    assert (
        all("reproduced" not in r for r in report_rows)
        and sum("| **MINI** | - | mini |" in r for r in report_rows) >= 2
    )  # P(verdict): no replication of a mini run

    # 5. a mini run with a failing job (a model file that is not there): exit 1, the job named
    missing = work / "no-such-model.pth"
    res = run_cli(
        "reproduce",
        "--mini",
        "--work-dir",
        str(work),
        "--store",
        str(store),
        "--models",
        MODELS[0],
        f"file://{missing}",
        "--measurements",
        "shape_bias",
        "--out",
        str(work / "REPORT2.md"),
        "--no-progress",
        "--data-dir",
        str(data_dir),
        cwd=str(work),
        env=env,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAILED: 1 job(s) of this run left no current record" in res.stderr
    assert f"  file://{missing} x shape_bias: failed: " in res.stderr
    assert "MINI RUN" in full_text(work / "REPORT2.md")  # reported all the same

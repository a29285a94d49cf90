"""The cluster tier: ``python -m repro measure --executor slurm`` end to end on a real one-node
SLURM (the ``slurm`` fixture, tests/cluster/conftest.py), on generated mini data with the zoo's
tiny random models.

- every job's record is written, from a SLURM job (its provenance names the job), and the
  resources default to what the partition offers (sinfo: the node's CPUs and memory);
- a re-run submits nothing and skips them;
- a job cancelled with ``scancel`` (while it pends behind a job that holds the node) is reported
  as cancelled, leaves no record, and the next run submits and measures exactly that one;
- a request no node can hold (``--slurm-cpus-per-task 64``, ``--slurm-mem-gb`` above the node)
  fails at once with one line naming the resource and the node's size, submitting nothing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.waiting import HANG_GUARD_S, LineReader, wait_exit

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
MODELS = ["tiny_random_a", "tiny_random_b"]
MEASUREMENTS = ["imagenet", "shape_bias"]
DATASETS = ["imagenet_val", "cue_conflict"]
SUBMITTED = re.compile(r"^submitted (\d+) SLURM job\(s\) \((.*)\): ([\d, ]+); logs in ")


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """Mini data for the two measurements; the environment of every ``measure`` call (sbatch
    exports it to the jobs, so they find the data and this checkout)."""
    from repro.datasets import make_mini

    work = tmp_path_factory.mktemp("cluster")
    roots = make_mini(work / "data", per_class=1, datasets=DATASETS)
    env = dict(os.environ)
    env.update({f"REPRO_{name.upper()}_ROOT": str(path) for name, path in roots.items()})
    env.update(
        {
            "REPRO_CACHE_DIR": str(work / "cache"),
            "OMP_NUM_THREADS": "1",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
    )
    return work, env


def _argv(store: Path, models=MODELS, measurements=MEASUREMENTS, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "repro",
        "measure",
        "--models",
        *models,
        "--measurements",
        *measurements,
        "--device",
        "cpu",
        "--executor",
        "slurm",
        "--batch-size",
        "32",
        "--store",
        str(store),
        "--no-progress",
        *extra,
    ]


def _measure(env, store: Path, *extra: str, models=MODELS, measurements=MEASUREMENTS):
    return subprocess.run(
        _argv(store, models, measurements, *extra),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=HANG_GUARD_S,
        check=False,
    )


def _records(store: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for path in store.glob("*/*.json"):
        rec = json.loads(path.read_text())
        out[(rec["model"], rec["measurement"])] = rec
    return out


def _ids(stdout: str) -> list[str]:
    lines = [m for m in (SUBMITTED.match(line) for line in stdout.splitlines()) if m]
    assert len(lines) == 1, stdout
    return [i.strip() for i in lines[0].group(3).split(",")]


def _squeue(*ids: str) -> dict[str, str]:
    proc = subprocess.run(
        ["squeue", "--noheader", "--states=all", "--format=%i|%T", "--jobs", ",".join(ids)],
        capture_output=True,
        text=True,
        check=False,
    )
    return dict(line.strip().split("|") for line in proc.stdout.splitlines() if "|" in line)


def _wait_running(job_id: str) -> None:
    """Poll ``squeue`` until the job runs (an event; the hang guard bounds it)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while (state := _squeue(job_id).get(job_id)) != "RUNNING":
        assert state in ("PENDING", "CONFIGURING", None) and time.monotonic() < deadline, (
            f"SLURM job {job_id}: {state or 'not listed'}, not running"
        )
        time.sleep(0.2)


@pytest.fixture(scope="module")
def first_run(slurm, mini):
    work, env = mini
    store = work / "store"
    proc = _measure(env, store)
    return store, proc


def test_measure_on_slurm_writes_every_record_with_the_partitions_resources(slurm, first_run):
    store, proc = first_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = _ids(proc.stdout)
    assert len(ids) == len(MODELS) * len(MEASUREMENTS)
    # nothing asked for: a node's CPUs (at most 8) and their memory, no
    # GPU, on the default partition
    cpus = min(8, slurm.cpus)
    mem_gb = slurm.mem_mb * cpus // slurm.cpus / 1024
    assert f"(partition {slurm.partition}: {cpus} CPUs, {mem_gb:.1f} GB, 0 GPUs, " in proc.stdout, (
        proc.stdout
    )
    assert f"{len(ids)} cluster job(s) finished: {len(ids)} measured, 0 failed" in proc.stdout
    records = _records(store)
    assert sorted(records) == sorted((m, x) for m in MODELS for x in MEASUREMENTS)
    assert {r["status"] for r in records.values()} == {"ok"}
    # each ran as a SLURM job of this run (submitit's result file per job
    # id), each in its own process
    assert all((store / ".submitit" / f"{i}_0_result.pkl").exists() for i in ids)
    assert len({r["provenance"]["pid"] for r in records.values()}) == len(ids)
    assert "sacct" not in proc.stderr, proc.stderr  # accounting is off: no warning per poll


def test_a_rerun_submits_nothing_and_skips_the_records(slurm, mini, first_run):
    store, _ = first_run
    _, env = mini
    before = {p: p.stat().st_mtime_ns for p in store.glob("*/*.json")}
    proc = _measure(env, store)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not any(SUBMITTED.match(line) for line in proc.stdout.splitlines()), proc.stdout
    assert (
        "0 cluster job(s) finished: 0 measured, 0 failed, 0 held by other workers; "
        f"{len(before)} already in "
        "the store (not submitted)" in proc.stdout
    ), proc.stdout
    assert {p: p.stat().st_mtime_ns for p in store.glob("*/*.json")} == before


def test_a_cancelled_job_is_measured_by_the_next_run(slurm, mini):
    """The node is held by a job of the test's own, so both jobs of the run pend (reason
    Resources); the test cancels the second, then frees the node."""
    work, env = mini
    store = work / "store-cancel"
    blocker = (
        subprocess.run(
            [
                "sbatch",
                "--parsable",
                "--job-name=repro-test-blocker",
                f"--cpus-per-task={slurm.cpus}",
                "--mem=1M",
                f"--output={work}/blocker.out",
                "--wrap",
                "sleep 600",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .split(";")[0]
    )
    try:
        _wait_running(
            blocker
        )  # it holds the node before the run submits (then both of the run's jobs pend)
        proc = subprocess.Popen(
            _argv(store, ["tiny_random_a"]),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=ROOT,
        )
        out = LineReader(proc.stdout, proc)
        first, second = _ids(out.wait_for(SUBMITTED.pattern)[0])
        assert _squeue(first, second) == {
            first: "PENDING",
            second: "PENDING",
        }  # the blocker holds the node
        subprocess.run(["scancel", second], check=True)
    finally:
        subprocess.run(["scancel", blocker], check=True)
    assert wait_exit(proc, out) == 1, out.text()
    text = out.rest()
    assert "2 cluster job(s) finished: 1 measured, 1 failed" in text, text
    assert (
        f"  cancelled: tiny_random_a x shape_bias (SLURM job {second}; not recorded, the "
        "next run measures it)"
    ) in text, text
    assert sorted(_records(store)) == [("tiny_random_a", "imagenet")]

    again = _measure(env, store, models=["tiny_random_a"])
    assert again.returncode == 0, again.stdout + again.stderr
    assert len(_ids(again.stdout)) == 1
    assert (
        "1 cluster job(s) finished: 1 measured, 0 failed, 0 held by other workers; 1 "
        "already in the store"
    ) in again.stdout, again.stdout
    assert sorted(_records(store)) == [
        ("tiny_random_a", "imagenet"),
        ("tiny_random_a", "shape_bias"),
    ]


@pytest.mark.parametrize(
    "flag, value, resource",
    [
        ("--slurm-cpus-per-task", "64", "64 CPUs"),
        ("--slurm-mem-gb", "100000", "100000.0 GB"),
    ],
)
def test_a_request_no_node_holds_fails_at_once_naming_the_resource(
    slurm, mini, flag, value, resource
):
    work, env = mini
    store = work / f"store-{flag.strip('-')}"
    proc = _measure(env, store, flag, value, models=["tiny_random_a"], measurements=["imagenet"])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    size = (
        f"{slurm.cpus} (sinfo)"
        if "cpus" in flag
        else f"{slurm.mem_mb / 1024:.1f} GB ({slurm.mem_mb} MB, sinfo)"
    )
    assert lines[0] == (
        f"error: cannot be scheduled on partition {slurm.partition!r}: {flag} {value} asks for "
        f"{resource} per job, but its largest node has {size}; ask for at most "
        f"{size.split(' (')[0] if 'GB' in size else str(slurm.cpus) + ' CPUs'} (or another "
        "partition)"
    ), lines[0]
    assert proc.stdout == "" and not (store / ".submitit").exists()  # nothing went to SLURM

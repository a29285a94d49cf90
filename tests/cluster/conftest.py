"""The cluster tier: a real one-node SLURM (tests/cluster/slurm-up.sh).

The session fixture ``slurm`` uses the SLURM that answers (``sinfo``, the node idle), else starts
one with slurm-up.sh (as root: apt-get installs ``slurm-wlm munge`` when absent) and stops what it
started with slurm-down.sh at the end. Where SLURM can be neither found nor started, every test of
the tier fails with the one line saying why, unless the run opts out explicitly with
``REPRO_CLUSTER=skip`` (then the tests skip, saying so); CI (.ci/run) never opts out. The tier
is deselected from a run that does not select it (``-m cluster`` or a path under tests/cluster:
root conftest.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
OPT_OUT = "REPRO_CLUSTER"


@dataclass(frozen=True)
class Cluster:
    partition: str
    node: str
    cpus: int
    mem_mb: int


def _node() -> Cluster | None:
    """The idle (or busy) node of the default partition, when SLURM answers."""
    if shutil.which("sinfo") is None:
        return None
    proc = subprocess.run(
        ["sinfo", "--noheader", "--Node", "--format=%P|%N|%c|%m|%T"],
        capture_output=True,
        text=True,
        check=False,
    )
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        part, node, cpus, mem, state = line.strip().split("|")
        if part.endswith("*") and state.rstrip("*") in ("idle", "mixed", "allocated", "completing"):
            return Cluster(part.rstrip("*"), node, int(cpus), int(mem))
    return None


@pytest.fixture(scope="session")
def slurm():
    if os.environ.get(OPT_OUT) == "skip":
        pytest.skip(
            f"the cluster tier opted out ({OPT_OUT}=skip): nothing on a real SLURM was tested"
        )
    found = _node()
    started = False
    if found is None:
        proc = subprocess.run(
            ["bash", str(HERE / "slurm-up.sh")], capture_output=True, text=True, check=False
        )
        found = _node() if proc.returncode == 0 else None
        if found is None:  # stop what it started before it gave up
            subprocess.run(["bash", str(HERE / "slurm-down.sh")], capture_output=True, check=False)
            why = (
                proc.stderr.strip().splitlines()
                or proc.stdout.strip().splitlines()
                or ["no output"]
            )[-1]
            pytest.fail(
                f"the cluster tier needs a SLURM and none could be started: {why} (opt "
                "out explicitly "
                f"with {OPT_OUT}=skip; CI never does)",
                pytrace=False,
            )
        started = True
    yield found
    if started:
        subprocess.run(["bash", str(HERE / "slurm-down.sh")], check=False)

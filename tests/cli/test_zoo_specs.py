"""The tests of tests/unit/test_zoo_specs.py that start a process (`python -m repro` or another),
in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import json

import pytest

from repro.zoo import study_specs

pytestmark = pytest.mark.cli


def test_study_models_equal_published_categories(data_dir):
    published = json.loads((data_dir / "gavrikov2024" / "r50_categories.json").read_text())
    want = {name: cat for cat, names in published.items() for name in names}
    got = {s.name: s.category for s in study_specs()}
    assert len(got) == 48
    assert got == want


def test_listing_specs_does_not_import_torch():
    import subprocess
    import sys

    code = (
        "import sys; from repro.zoo import specs, get_spec; specs(); get_spec('resnet50_dino'); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)

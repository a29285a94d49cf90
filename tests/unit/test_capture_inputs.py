"""What an expensive docs capture records as its inputs (``docs/capture_inputs.py``): a path that
cannot be resolved is left out, never a crash of the capture after its run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.by_path import load_module

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _inputs():
    return load_module("capture_inputs", ROOT / "docs" / "capture_inputs.py")


def test_a_path_in_a_symlink_loop_is_no_input(tmp_path):
    """The manual nox-tests capture reads a symlink loop a test makes on purpose."""
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    keys = _inputs().keys_of([loop / "x.JPEG", ROOT / "repro" / "__init__.py"], ROOT, tmp_path)
    assert "repro/__init__.py" in keys and not any("loop" in k for k in keys)

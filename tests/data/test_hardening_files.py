"""The tests of tests/unit/test_hardening_files.py that read the published data directory, in the
data tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit import test_hardening_files as unit_module
from tests.unit.test_hardening_files import _mode

group_umask = unit_module.group_umask  # the fixture of tests/unit/test_hardening_files.py

pytestmark = pytest.mark.data


def test_published_files_follow_the_umask(tmp_path, group_umask, monkeypatch):
    from repro.base.settings import data_dir
    from repro.published import fetch as f

    rel = "gavrikov2024/r50_categories.json"
    pinned = dataclasses.replace(
        f.manifest()[rel], url=(data_dir() / rel).as_uri()
    )  # a file:// mirror
    monkeypatch.setattr(f, "manifest", lambda: {rel: pinned})
    out = f.fetch([rel], data_dir=tmp_path)
    assert out == [tmp_path / rel] and _mode(out[0]) == group_umask

"""The report's provenance: every study's pinned published files counted against their pinned
sha256, per source (a file missing or altered is named as such, never counted as a match)."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import pytest

from repro.report.sections.provenance import pinned_rows

pytestmark = pytest.mark.unit


def _pin(path: str, content: bytes, repository: str = "lab/repo") -> SimpleNamespace:
    return SimpleNamespace(
        path=path,
        sha256=hashlib.sha256(content).hexdigest(),
        repository=repository,
        commit="0123456789abcdef0123456789abcdef01234567",
    )


def test_pinned_files_are_counted_per_study_and_source(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s/a.csv").write_bytes(b"a")
    (tmp_path / "s/b.csv").write_bytes(b"b, altered")  # pinned as b"b"
    (tmp_path / "s/c.csv").write_bytes(b"c")
    pins = [
        _pin("s/a.csv", b"a"),
        _pin("s/b.csv", b"b"),
        _pin("s/gone.csv", b"g"),
        _pin("s/c.csv", b"c", repository="other/repo"),
    ]
    study = SimpleNamespace(name="s", published=pins)
    ctx = SimpleNamespace(studies=[(SimpleNamespace(study=study, data_dir=tmp_path), [])])
    rows = pinned_rows(ctx)
    assert rows[2:] == [
        "| `s` | 1 of 3 match their pinned sha256; 1 missing; 1 DO NOT MATCH | lab/repo@0123456 |",
        "| `s` | 1 of 1 match their pinned sha256 | other/repo@0123456 |",
    ]

"""The ImageNet-X report section: renders the error-ratio table from the prediction files and
the spill-over table, and writes the figure with the same bytes every time."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.unit


def _render(tmp_path, data_dir, name):
    from repro.report import ReportContext
    from repro.report.sections import imagenetx

    ctx = ReportContext(tmp_path / name / "REPORT.md", SimpleNamespace(data_dir=data_dir, cache={}), [])
    return imagenetx.render(ctx), ctx.written


def test_section_is_listed():
    from repro.report.sections import SECTIONS

    assert "repro.report.sections.imagenetx" in SECTIONS


def test_section_renders_counts_trends_and_a_deterministic_figure(tmp_path, data_dir):
    text, written = _render(tmp_path, data_dir, "a")
    text2, written2 = _render(tmp_path, data_dir, "b")
    assert text == text2
    assert [p.name for p in written] == ["imagenetx_error_ratios.png"]
    png = written[0].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == written2[0].read_bytes()
    assert b"Software" not in png
    assert "](report_assets/imagenetx_error_ratios.png)" in text
    # ResNet-50 texture: 111/282, ratio (1 - 111/282) / (1 - 34430/46110) = 2.394
    assert "| texture | 111/282 | 2.394 |" in text
    assert "| overall | 34430/46110 | 1 |" in text
    smaller = next(line for line in text.splitlines() if line.startswith("| smaller | +"))
    assert smaller.startswith("| smaller | +0.959 | <1e-300 |")
    assert "`colorjitter_crop` (12 models, one strength)" in text

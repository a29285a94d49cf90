"""The ImageNet-X report section: renders the error-ratio table from the prediction files and
the spill-over table, and writes the figure with the same bytes every time."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.data


def _render(tmp_path, data_dir, name):
    from repro.base.study import get_study
    from repro.claims.context import published_context
    from repro.report import ReportContext
    from repro.studies.imagenetx import report

    claims = published_context(get_study("imagenetx"), data_dir)
    ctx = ReportContext(tmp_path / name / "REPORT.md", [(claims, [])], claims=claims)
    return report.render(ctx), ctx.written


def test_section_is_listed_in_the_study():
    from repro.base.study import get_study

    assert "repro.studies.imagenetx.report:render" in get_study("imagenetx").sections


def test_section_renders_counts_trends_and_a_deterministic_figure(tmp_path, data_dir):
    text, written = _render(tmp_path, data_dir, "a")
    text2, written2 = _render(tmp_path, data_dir, "b")
    assert text == text2
    assert [p.name for p in written] == [
        "imagenetx_error_ratios.png",
        "imagenetx_error_ratio_vs_strength.png",
        "imagenetx_error_ratio_vs_strength.csv",
    ]
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

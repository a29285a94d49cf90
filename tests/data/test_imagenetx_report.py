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


def test_a_count_resting_on_ties_is_reported_as_its_range(data_dir):
    """Issue 34, item 3: texture is among the 3 highest error ratios of 312 of the 335 testbed
    models in the stable order of tied values, of 309 to 312 as ties are broken against it or
    for it (recounted here from the per-model top factors' ties)."""
    import numpy as np

    from repro.base.study import get_study
    from repro.claims.check import evaluate
    from repro.claims.context import published_context
    from repro.claims.loader import load_claims
    from repro.studies.imagenetx.report import tie_lines
    from repro.studies.imagenetx.statistics import tie_range

    claim = load_claims().get("imagenetx_texture_hardest_for_most_models")
    o = evaluate(claim, published_context(get_study("imagenetx"), data_dir))
    assert o.result.details["k"] == 312 and o.result.details["k_range"] == [309, 312]
    values = np.array([[3.0, 2.0, 2.0, 1.0], [2.0, 2.0, 2.0, 2.0], [1.0, 3.0, 4.0, 5.0]])
    # factor 1 in the top 2: in rows 0 and 1 only if its ties fall its way (row 0: 3.0 above it
    # and its tie 2.0 beside it; row 1: four equal values); never in row 2 (4.0 and 5.0 above)
    assert tie_range(values, 1, 2) == (0, 2)
    # factor 0 first: certainly in row 0, by a tie-break in row 1, not in row 2
    assert tie_range(values, 0, 1) == (1, 2)
    (line,) = [x for x in tie_lines([o]) if x]
    assert "309 to 312 of 335" in line and "one-sided binomial p" in line


def test_the_concordance_is_shown_over_the_models_above_half_accuracy(data_dir):
    """Issue 34, item 3: beside W over the 335 testbed models, W over those with accuracy >= 50%
    (their number recounted from the per-model accuracies; Kendall's W itself is checked in
    tests/unit/test_imagenetx_claims.py)."""
    from repro.base.study import get_study
    from repro.claims.check import evaluate
    from repro.claims.context import published_context
    from repro.claims.loader import load_claims
    from repro.studies.imagenetx.report import subset_lines

    claim = load_claims().get("imagenetx_failure_modes_concordant")
    o = evaluate(claim, published_context(get_study("imagenetx"), data_dir))
    sub = o.result.details["w_min_accuracy"]
    good = [m for m, v in o.result.per_model.items() if v["average"] >= 0.5]
    assert sub["n"] == len(good) == 214 and sub["value"] > o.result.value
    (line,) = [x for x in subset_lines([o]) if x]
    assert f"{sub['value']:.3f} over the 214 with overall accuracy >= 50%" in line

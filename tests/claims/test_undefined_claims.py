"""An undefined correlation is never "reproduced" and never drawn as a non-significant 0.

The published table with one column made constant within a group (the 15 AT models all at the
same critical-band centre frequency, as a degenerate measurement would give): the AT cells of
that bias are undefined (NaN rho and p). Before, ``null_all`` skipped the NaN p-values and the
centre-frequency null claim passed; the heat map drew the cells as 0.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from repro.base.table import ModelTable
from repro.claims.check import evaluate
from repro.claims.loader import load_claims
from repro.claims.verdict import UNDEFINED

pytestmark = pytest.mark.claims

CF = "metric/criticalband/cf_norm"


@pytest.fixture(scope="module")
def constant_at(published_claim_context):
    """The published context with cf_norm of every AT model set to one value."""
    ctx = published_claim_context
    at = ctx.analysis.groups["at"]
    values = {m: dict(row) for m, row in ctx.table.values.items()}
    for m in at:
        values[m][CF] = 14.0
    table = ModelTable(
        values, origin="benchmark.csv (AT cf_norm constant)", sources=dict(ctx.table.sources)
    )
    out = replace(ctx, table=table, cache={})
    out.__dict__.pop("analysis", None)
    return out


def test_the_null_claim_over_an_undefined_cell_is_undefined(constant_at, published_claim_context):
    claim = load_claims().get("critical_band_center_frequency_null")
    assert evaluate(
        claim, published_claim_context
    ).reproduced  # the published data: all 12 cells p >= 0.05
    out = evaluate(claim, constant_at)
    assert out.verdict == UNDEFINED and not out.as_expected
    for cat in ("id", "robustness", "concepts", "adversarial"):
        assert math.isnan(out.result.details[f"{cat}/at"]["p"])
        assert f"{cat}/at p" in out.check.why
    assert "total" not in out.check.why and "other" not in out.check.why


def test_leave_one_out_of_an_undefined_claim_is_judged_by_the_same_function(constant_at):
    from repro.diagnostics.robustness import robustness

    claim = load_claims().get("critical_band_center_frequency_null")
    out = evaluate(claim, constant_at)
    rob = robustness(out, constant_at)
    assert rob.verdict == UNDEFINED
    # without any one model the AT column stays constant: still undefined, so nothing flips
    assert {v.verdict for v in rob.models} == {UNDEFINED} and rob.flips == []


def test_the_heat_maps_mark_undefined_cells_apart_from_zero(constant_at):
    from matplotlib.patches import Rectangle

    from repro.studies.gavrikov2024 import bias_category as bc

    study = constant_at.analysis
    biases, cats = list(study.spec.biases), list(study.spec.categories)
    row = biases.index("critical_band_center_frequency")
    for fig in (bc._figure(study), bc.corrected_figure(study)):
        at_axes = [ax for ax in fig.axes if ax.get_title().startswith("AT")]
        assert at_axes
        for ax in at_axes:
            hatched = [
                p
                for p in ax.patches
                if isinstance(p, Rectangle) and p.get_hatch() == bc.UNDEFINED_HATCH
            ]
            assert sorted((round(p.get_y() + 0.5), round(p.get_x() + 0.5)) for p in hatched) == [
                (row, j) for j in range(len(cats))
            ]
            texts = {
                (round(t.get_position()[1]), round(t.get_position()[0])): t.get_text()
                for t in ax.texts
            }
            assert all(texts[(row, j)] == "undef." for j in range(len(cats)))
            assert all(
                texts[(i, j)] != "undef."
                for i in range(len(biases))
                if i != row
                for j in range(len(cats))
            )
        labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
        assert any(lab.startswith("undef.: undefined correlation") for lab in labels)
        assert any(lab.startswith("0: ") for lab in labels)
    # the published data: no hatched cell anywhere
    grid = np.array([[study.masked(study.cell(b, c, "total")) for c in cats] for b in biases])
    assert np.isfinite(grid).all()


def test_the_report_table_says_undefined(constant_at, tmp_path):
    from repro.report import ReportContext
    from repro.studies.gavrikov2024 import bias_category as bc

    ctx = ReportContext(tmp_path / "REPORT.md", [(constant_at, [])], claims=constant_at)
    text = bc.render(ctx)
    at = text[text.index("### AT") : text.index("### Other")]
    cf_row = next(
        line for line in at.splitlines() if line.startswith("| Critical band: centre frequency")
    )
    assert cf_row.count("undefined (constant column, n=15)") == 4
    assert "nan" not in cf_row


def test_the_cell_state_matrix_tells_undefined_from_not_significant(
    constant_at, published_claim_context
):
    """The figure's data: each panel is drawn from ``cell_states`` of its grid; an undefined cell
    (NaN rho or NaN p) has its own state, never that of a non-significant 0."""
    from repro.analysis.analysis import Cell
    from repro.studies.gavrikov2024 import bias_category as bc

    states = bc.cell_states(np.array([[0.51, 0.0, np.nan, -0.3]]))
    assert states.tolist() == [
        [bc.SIGNIFICANT, bc.NOT_SIGNIFICANT, bc.UNDEFINED_CELL, bc.SIGNIFICANT]
    ]

    study = constant_at.analysis
    biases, cats = list(study.spec.biases), list(study.spec.categories)
    row = biases.index("critical_band_center_frequency")
    for g in study.spec.groups:
        got = bc.cell_states(bc.masked_grid(study, g))
        # expected from the cells' own p-values, not from the grid
        for i, b in enumerate(biases):
            for j, c in enumerate(cats):
                corr = study.cell(b, c, g).corr
                want = (
                    bc.UNDEFINED_CELL
                    if math.isnan(corr.p) or math.isnan(corr.rho)
                    else bc.SIGNIFICANT
                    if corr.p < study.spec.alpha
                    else bc.NOT_SIGNIFICANT
                )
                assert got[i, j] == want, (b, c, g)
        n_undefined = int((got == bc.UNDEFINED_CELL).sum())
        assert n_undefined == (len(cats) if g == "at" else 0), g
        assert (got == bc.NOT_SIGNIFICANT).any() and (got == bc.SIGNIFICANT).any()
        for method in ("holm", "bh"):
            corrected = bc.cell_states(bc.corrected_grid(study, g, method))
            assert [j for j in range(len(cats)) if corrected[row, j] == bc.UNDEFINED_CELL] == (
                list(range(len(cats))) if g == "at" else []
            )
    # a finite rho with a NaN p is undefined too (not the 0 of p >= alpha, not a coloured rho)
    cell = study.cell("critical_band_center_frequency", cats[0], "total")
    nan_p = Cell(cell.bias, cell.category, cell.group, replace(cell.corr, rho=0.4, p=float("nan")))
    assert bc.cell_states(np.array([[study.masked(nan_p)]]))[0, 0] == bc.UNDEFINED_CELL
    # the published data: no undefined cell in any group
    published = published_claim_context.analysis
    for g in published.spec.groups:
        assert not (bc.cell_states(bc.masked_grid(published, g)) == bc.UNDEFINED_CELL).any()

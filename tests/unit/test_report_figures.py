"""The study's figures and tables beyond the paper's heat map, on a synthetic analysis: the
scatter grid (same bytes twice, the marked group's quadratic fit, the overlay hook drawing
extra labelled models), the corrected heat map and the benchmark heat map (same bytes twice),
the adjusted p-values of the table and the per-model rows."""

from __future__ import annotations

import numpy as np
import pytest

from repro.analysis.analysis import Analysis
from repro.analysis.multiple import benjamini_hochberg, holm
from repro.analysis.spec import AnalysisSpec, Derived, Group, Selector
from repro.base.table import ModelTable
from repro.report import ReportContext
from repro.studies.gavrikov2024 import benchmarks, bias_category, figures

pytestmark = pytest.mark.unit


@pytest.fixture
def analysis() -> Analysis:
    rng = np.random.default_rng(0)
    cats = {
        "adversarial_training": [f"at{i}" for i in range(6)],
        "other": [f"o{i}" for i in range(10)],
    }
    models = [m for ms in cats.values() for m in ms]
    values = {}
    for i, m in enumerate(models):
        s = rng.random()
        values[m] = {
            "sb": s,
            "lf": rng.random(),
            "acc1": 70 - 20 * s + rng.normal(0, 3),
            "acc2": 30 + rng.normal(0, 5),
            "acc3": 40 + 10 * s - 12 * s * s + rng.normal(0, 1),
            "b1": 70 + rng.normal(0, 5),
            "b2": 60 + rng.normal(0, 5),
            "b3": 50 + i,
        }
    spec = AnalysisSpec(
        name="synthetic",
        alpha=0.05,
        population=Selector(model_categories="all"),
        groups={
            "total": Group("total", "Total", Selector()),
            "at": Group("at", "AT", Selector(model_categories=("adversarial_training",))),
            "other": Group(
                "other", "Other", Selector(exclude_model_categories=("adversarial_training",))
            ),
        },
        categories={
            "id": Derived("id", "ID", ("acc1", "acc2")),
            "adv": Derived("adv", "Adversarial", ("acc3",)),
        },
        biases={
            "shape": Derived("shape", "Shape bias", ("sb",)),
            "low": Derived("low", "Low-frequency bias", ("lf",)),
        },
        benchmarks={"b1": "b1", "b2": "b2", "b3": "b3"},
        resamples=2000,
        seed=0,
        origin="<synthetic>",
    )
    return Analysis(spec, ModelTable(values, origin="<synthetic>"), cats)


def _png(tmp_path, name, fig) -> bytes:
    ctx = ReportContext(tmp_path / name / "REPORT.md", [])
    link = ctx.save_figure(fig, "f.png")
    return (tmp_path / name / link).read_bytes()


def test_figures_are_the_same_bytes_twice(tmp_path, analysis):
    overlay = figures.Overlay(
        "measured here", {"new": {"sb": 0.4, "lf": 0.5, "acc1": 60, "acc2": 30, "acc3": 41}}
    )
    for i, make in enumerate(
        [
            lambda: figures.scatter_grid(analysis, [overlay]),
            lambda: bias_category.corrected_figure(analysis),
            lambda: benchmarks.heatmap(analysis.benchmark_correlation),
        ]
    ):
        a, b = _png(tmp_path, f"a{i}", make()), _png(tmp_path, f"b{i}", make())
        assert a.startswith(b"\x89PNG") and a == b and b"matplotlib" not in a


def test_scatter_grid_marks_the_group_and_draws_its_quadratic_fit(analysis):
    fig = figures.scatter_grid(analysis)
    axes = fig.axes
    assert len(axes) == 4  # 2 biases x 2 categories
    ax = axes[1]  # shape bias x adversarial
    dots, triangles = ax.collections[0], ax.collections[1]
    x, y = analysis.bias("shape"), analysis.category("adv")
    at = [i for i, m in enumerate(analysis.population) if m.startswith("at")]
    assert np.allclose(triangles.get_offsets(), np.column_stack([x[at], y[at]]))
    assert len(dots.get_offsets()) == len(analysis.population) - len(at)
    (fit,) = ax.lines
    xs, ys = fit.get_data()
    coef = np.polyfit(x[at], y[at], 2)
    assert np.allclose(ys, np.polyval(coef, xs)) and xs.min() == pytest.approx(x[at].min())


def test_overlay_hook_draws_labelled_models_that_have_the_columns(analysis):
    rows = {
        "new_a": {"sb": 0.4, "lf": 0.5, "acc1": 60.0, "acc2": 32.0, "acc3": 41.0},
        "new_b": {"sb": 0.9, "acc1": 50.0, "acc2": 20.0},
    }  # no low-frequency bias, no adversarial column
    fig = figures.scatter_grid(analysis, [figures.Overlay("measured here", rows, marker="*")])
    shape_id, shape_adv, low_id, _ = fig.axes
    assert np.allclose(
        shape_id.collections[-1].get_offsets(), [[0.4, 46.0], [0.9, 35.0]]
    )  # ID = mean(acc1, acc2)
    assert np.allclose(shape_adv.collections[-1].get_offsets(), [[0.4, 41.0]])
    assert np.allclose(low_id.collections[-1].get_offsets(), [[0.5, 46.0]])
    assert "measured here" in [t.get_text() for t in fig.legends[0].get_texts()]
    names, xs, ys = figures.overlay_xy(figures.Overlay("x", rows), ("sb",), ("acc3",))
    assert names == ["new_a"] and xs.tolist() == [0.4] and ys.tolist() == [41.0]


def test_overlay_providers_are_collected(analysis, monkeypatch):
    from types import SimpleNamespace

    extra = figures.Overlay("real models", {"m": {"sb": 0.1}})
    monkeypatch.setattr(figures, "OVERLAYS", [*figures.OVERLAYS, f"{__name__}:_provider"])
    globals()["_provider"] = lambda ctx: [extra]
    ctx = SimpleNamespace(plans=[], claims=SimpleNamespace(study=SimpleNamespace(name="synthetic")))
    assert figures.overlays(ctx) == [
        extra
    ]  # no store without a measuring plan; the added provider's


def test_adjusted_p_over_the_whole_table(analysis):
    cells = analysis.bias_vs_category()
    assert len(cells) == 2 * 2 * 3
    ps = [c.corr.p for c in cells]
    rows = analysis.bias_vs_category_rows()
    assert [r["p_holm"] for r in rows] == pytest.approx(holm(ps))
    assert [r["p_bh"] for r in rows] == pytest.approx(benjamini_hochberg(ps))
    assert analysis.adjusted_p[("shape", "id", "total")]["holm"] == rows[0]["p_holm"]
    survived = bias_category.survival_rows(analysis)
    assert [(r["bias"], r["category"], r["group"]) for r in survived] == [
        (c.bias, c.category, c.group) for c in cells if c.corr.p < 0.05
    ]


def test_per_model_rows(analysis):
    rows = analysis.per_model_rows()
    assert [r["model"] for r in rows] == analysis.population
    at0 = rows[0]
    assert at0["model_category"] == "adversarial_training" and at0["groups"] == ["total", "at"]
    assert at0["id"] == pytest.approx(
        np.mean([analysis.table.value("at0", "acc1"), analysis.table.value("at0", "acc2")])
    )
    assert set(at0) == {"model", "model_category", "groups", "shape", "low", "id", "adv"}
    ranked = sorted(rows, key=lambda r: r["shape"])  # flat records: sortable by any field
    assert ranked[0]["shape"] == min(analysis.bias("shape"))


def test_save_png_writes_no_metadata_and_style_ignores_the_callers_settings(tmp_path):
    """``repro.report.png``: a figure made in ``style()`` is the same bytes whatever rcParams the
    caller had set; matplotlib's own savefig writes a Software chunk that
    ``save_png`` leaves out."""
    import matplotlib
    from matplotlib.figure import Figure

    from repro.report.png import save_png, style, text_chunks

    def draw(path):
        with style():
            fig = Figure(figsize=(3, 2))
            ax = fig.subplots()
            ax.plot([0, 1, 2], [1, 0, 2], label="a line")
            ax.set_title("title")
            ax.legend()
            return save_png(fig, path).read_bytes()

    plain = draw(tmp_path / "plain.png")
    with matplotlib.rc_context(
        {
            "font.size": 20.0,
            "lines.linewidth": 5.0,
            "font.family": ["monospace"],
            "savefig.dpi": 300.0,
            "axes.grid": True,
        }
    ):
        changed = draw(tmp_path / "changed.png")
        assert matplotlib.rcParams["font.size"] == 20.0  # restored after the style
    assert plain == changed and text_chunks(plain) == []
    fig = Figure(figsize=(3, 2))
    fig.subplots().plot([0, 1], [0, 1])
    fig.savefig(tmp_path / "default.png", format="png")  # matplotlib's default metadata
    assert text_chunks((tmp_path / "default.png").read_bytes()) == [b"Software"]
    with matplotlib.rc_context({"font.size": 20.0}):
        fig = Figure(figsize=(3, 2))  # made outside style(): the caller's font size shows
        ax = fig.subplots()
        ax.plot([0, 1, 2], [1, 0, 2], label="a line")
        ax.set_title("title")
        ax.legend()
    assert save_png(fig, tmp_path / "outside.png").read_bytes() != plain

"""The paper's figures the report lacked (issue 21 item 8): each figure's CSV recomputed from the
published files read with csv, json and scipy (not through repro.analysis); the AT quadratic is
drawn only on the panels whose claim tests it."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import curve_fit

pytestmark = pytest.mark.claims

ROOT = Path(__file__).resolve().parents[2]
CUTOFFS = ("0.01", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.99")
BIAS_COLUMNS = {
    "shape_bias": ["shape-bias"],
    "low_frequency_bias": [f"metric/bandpass/LFC/0.{i}" for i in range(1, 6)],
    "high_frequency_bias": [f"metric/bandpass/HFC/0.{i}" for i in range(1, 6)],
    "critical_band_bandwidth": ["metric/criticalband/bw_norm"],
    "critical_band_center_frequency": ["metric/criticalband/cf_norm"],
    "critical_band_peak_noise_sensitivity": ["metric/criticalband/pns_norm"],
}


@pytest.fixture(scope="module")
def bench(data_dir):
    with (data_dir / "gavrikov2024" / "benchmark.csv").open(newline="") as fh:
        return {
            r["model"]: {
                k: float(v) if v not in ("", None) else math.nan
                for k, v in r.items()
                if k != "model"
            }
            for r in csv.DictReader(fh)
        }


@pytest.fixture(scope="module")
def models(data_dir):
    cats = json.loads((data_dir / "gavrikov2024" / "r50_categories.json").read_text())
    return {m: c for c, ms in cats.items() for m in ms}


@pytest.fixture(scope="module")
def written(tmp_path_factory, published_claim_contexts, published_outcomes):
    """The Gavrikov section's and the ImageNet-X section's files, written once."""
    from repro.report import ReportContext
    from repro.studies.gavrikov2024 import paper_figures
    from repro.studies.imagenetx import report as imagenetx_report

    out = tmp_path_factory.mktemp("figures")
    texts = {}
    for study, section in (("gavrikov2024", paper_figures), ("imagenetx", imagenetx_report)):
        claims = published_claim_contexts[study]
        ctx = ReportContext(
            out / "REPORT.md",
            [(claims, published_outcomes.of(study))],
            claims=claims,
            outcomes=published_outcomes.of(study),
        )
        texts[study] = section.render(ctx)
    return out / "report_assets", texts


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_spectral_curves_csv_is_the_published_columns(written, bench, models):
    rows = _rows(written[0] / "spectral_curves.csv")
    assert len(rows) == 48 * 2 * len(CUTOFFS)
    for r in rows:
        want = bench[r["model"]][f"metric/bandpass/{r['filter']}/{r['cutoff']}"]
        assert float(r["ratio"]) == want and r["model_category"] == models[r["model"]]
    assert {r["cutoff"] for r in rows} == {repr(float(c)) for c in CUTOFFS}
    assert "](report_assets/spectral_curves.csv)" in written[1]["gavrikov2024"]


def _fit(vector):
    with np.errstate(all="ignore"):
        (a, mu, sigma), _ = curve_fit(
            lambda x, a, m, s: a * np.exp(-((x - m) ** 2) / (2 * s**2)),
            np.arange(7.0),
            np.asarray(vector, float),
            p0=[1, 0, 1],
            bounds=((0, -np.inf, -np.inf), (4, np.inf, np.inf)),
        )
    return a, mu, sigma


def test_threshold_profiles_are_the_fits_of_the_threshold_vectors(written):
    """Independent: each model's integer threshold vector (expected/critical_band, which reproduces
    its published triple) refitted with scipy's curve_fit gives the CSV's fitted profile."""
    rows = _rows(written[0] / "critical_band_profiles.csv")
    vectors = json.loads(
        (ROOT / "expected" / "critical_band" / "threshold_vectors.json").read_text()
    )["models"]
    assert len(rows) == 48 * 7
    worst = 0.0
    for model, entry in vectors.items():
        a, mu, sigma = _fit(entry["vectors"][0])
        got = [float(r["fitted_threshold"]) for r in rows if r["model"] == model]
        want = [a * math.exp(-((b - mu) ** 2) / (2 * sigma**2)) for b in range(7)]
        worst = max(worst, max(abs(g - w) for g, w in zip(got, want, strict=True)))
        assert [float(r["band_centre_cycles_per_image"]) for r in rows if r["model"] == model] == [
            1.75 * 2**b for b in range(7)
        ]
    assert worst < 1e-5


def test_bias_matrix_csv_is_scipys_spearman(written, bench, models):
    rows = {(r["bias_a"], r["bias_b"]): r for r in _rows(written[0] / "bias_x_bias.csv")}
    ms = list(models)
    vals = {
        b: [np.mean([bench[m][c] for c in cols]) for m in ms] for b, cols in BIAS_COLUMNS.items()
    }
    assert len(rows) == 36
    for a in BIAS_COLUMNS:
        for b in BIAS_COLUMNS:
            r = rows[(a, b)]
            if a == b:
                assert float(r["rho"]) == 1.0
                continue
            res = stats.spearmanr(vals[a], vals[b])
            assert float(r["rho"]) == pytest.approx(res.statistic, rel=1e-12) and int(r["n"]) == 48
            assert float(r["p"]) == pytest.approx(res.pvalue, rel=1e-9)


def test_error_ratio_against_strength_csv_is_the_per_strength_mean(written, data_dir):
    rows = _rows(written[0] / "imagenetx_error_ratio_vs_strength.csv")
    path = (
        data_dir
        / "imagenetx"
        / "factor_accuracies"
        / "crop"
        / "class"
        / "accuracies_per_factor.csv"
    )
    with path.open(newline="") as fh:
        runs = list(csv.DictReader(fh))
    strength = [100 - float(re.search(r"_crop([0-9.]+)_", r["model"]).group(1)) for r in runs]
    ratio = [(1 - float(r["smaller"])) / (1 - float(r["average"])) for r in runs]
    crop = {
        float(r["strength"]): r for r in rows if r["sweep"] == "crop" and r["factor"] == "smaller"
    }
    assert len(crop) == 93
    for s in (8.0, 80.0, 92.0, 99.8):
        sel = [y for x, y in zip(strength, ratio, strict=True) if x == pytest.approx(s)]
        r = next(v for k, v in crop.items() if k == pytest.approx(s))
        assert int(r["runs"]) == len(sel) and float(r["mean_error_ratio"]) == pytest.approx(
            np.mean(sel), rel=1e-12
        )
    assert {r["sweep"] for r in rows} == {"crop", "colorjitter", "gaussian_blur"}


def test_at_quadratic_only_on_the_panels_its_claim_tests(
    published_claim_contexts, published_outcomes
):
    from repro.studies.gavrikov2024.figures import fitted_panels, scatter_grid

    outcomes = published_outcomes.of("gavrikov2024")
    fitted = fitted_panels(outcomes)
    assert fitted == {("shape_bias", "adversarial"), ("shape_bias", "concepts")}
    analysis = published_claim_contexts["gavrikov2024"].analysis
    fig = scatter_grid(analysis, (), fitted)
    biases, cats = list(analysis.spec.biases), list(analysis.spec.categories)
    lines = {
        (biases[i // len(cats)], cats[i % len(cats)]): len(ax.lines)
        for i, ax in enumerate(fig.axes)
        if i < len(biases) * len(cats)
    }
    assert {panel for panel, n in lines.items() if n} == fitted

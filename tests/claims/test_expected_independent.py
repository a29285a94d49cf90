"""Independent checks of the generated expected files (issue 9, item 5).

``expected/claims/*.json`` (written by ``pytest -m claims --snapshot-update``) and
``expected/critical_band/threshold_vectors.json`` (written by ``python -m
repro.studies.gavrikov2024.critical_band_expected --generate-expected``) are produced by this
code, so a regression test against them alone would bless whatever the code computed when they
were written. Here their content is recomputed by other means: the published files read with the
standard library (csv, json), the statistics with scipy/numpy called directly (no
``repro.analysis``), and compared with the stored values and, where the paper or METHODS.md
states a number, with that number.
"""

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
SNAP = ROOT / "expected" / "claims"
VECTORS = ROOT / "expected" / "critical_band" / "threshold_vectors.json"
REL = 1e-9  # the same numbers computed by other code: room for float summation order only
P_REL = 1e-6

ID = ["top1_acc/imagenet", "top1_acc/imagenet-v2", "top1_acc/imagenet-real"]  # METHODS 4
ROBUSTNESS = ["top1_acc/imagenet-a", "top1_acc/imagenet-c", "top1_acc/imagenet-cbar"]
CONCEPTS = ["top1_acc/imagenet-sketch", "top1_acc/imagenet-r", "top1_acc/stylized"]
ADVERSARIAL = ["top1_acc/PGD-40/low"]
CATEGORIES = {"id": ID, "robustness": ROBUSTNESS, "concepts": CONCEPTS, "adversarial": ADVERSARIAL}
LFC = [f"metric/bandpass/LFC/{c}" for c in ("0.1", "0.2", "0.3", "0.4", "0.5")]
HFC = [f"metric/bandpass/HFC/{c}" for c in ("0.1", "0.2", "0.3", "0.4", "0.5")]
BENCHMARKS = {
    "imagenet": "top1_acc/imagenet",
    "imagenet_v2": "top1_acc/imagenet-v2",
    "imagenet_real": "top1_acc/imagenet-real",
    "imagenet_a": "top1_acc/imagenet-a",
    "imagenet_c": "top1_acc/imagenet-c",
    "imagenet_cbar": "top1_acc/imagenet-cbar",
    "imagenet_sketch": "top1_acc/imagenet-sketch",
    "imagenet_r": "top1_acc/imagenet-r",
}


def snap(claim_id: str) -> dict:
    return json.loads((SNAP / f"{claim_id}.json").read_text())


@pytest.fixture(scope="module")
def bench(data_dir) -> dict[str, dict[str, float]]:
    with (data_dir / "gavrikov2024" / "benchmark.csv").open(newline="") as fh:
        return {
            row["model"]: {
                k: (float(v) if v not in ("", None) else math.nan)
                for k, v in row.items()
                if k != "model"
            }
            for row in csv.DictReader(fh)
        }


@pytest.fixture(scope="module")
def groups(data_dir) -> dict[str, list[str]]:
    cats = json.loads((data_dir / "gavrikov2024" / "r50_categories.json").read_text())
    total = [m for ms in cats.values() for m in ms]
    at = list(cats["adversarial_training"])
    return {"total": total, "at": at, "other": [m for m in total if m not in at]}


def col(bench, models, columns) -> np.ndarray:
    """Unweighted mean of ``columns`` per model."""
    return np.array([np.mean([bench[m][c] for c in columns]) for m in models])


def close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-14)


FIT_REL = 1e-7  # a critical-band fit computed by other code: curve_fit's end point, not summation


def rel_of(s: dict, path: str, default: float = FIT_REL) -> float:
    """The relative tolerance of a snapshot field that rests on critical-band fits: the snapshot
    comparison's default (1e-7: two codes' curve_fit end points differ by up to 1e-9 on a
    well-conditioned vector, the CPU's kernels choosing), or its measured rule where wider
    (``_compare``: an ill-conditioned fit and what is computed from it,
    tests/snapshot_ext.py)."""
    return max(default, s.get("_compare", {}).get(path, {}).get("rel", 0.0))


# the generator of the threshold vectors; the file was written before the package restructure
# (issue 12), under the generator's old name, which its header records
VECTOR_GENERATORS = (
    "python -m repro.studies.gavrikov2024.critical_band_expected --generate-expected",
    "python -m repro.scoring.critical_band --generate-expected",
)


def test_every_generated_expected_file_says_how_it_was_made():
    for path in sorted(SNAP.glob("*.json")):
        assert (
            json.loads(path.read_text())["_generated_by"] == "pytest -m claims --snapshot-update"
        ), path.name
    header = json.loads(VECTORS.read_text())["_header"]
    assert header["generated_by"].startswith(VECTOR_GENERATORS)
    assert "benchmark.csv" in header["source"]


def test_every_claim_snapshot_has_an_independent_check():
    """A new claim's snapshot fails here until this file recomputes its content by other means."""
    checked = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    missing = [p.stem for p in sorted(SNAP.glob("*.json")) if p.stem not in checked]
    assert not missing, f"claim snapshots without an independent check here: {missing}"


# ------------------------------------------------------------------ Gavrikov & Keuper claims


def test_shape_bias_vs_id_accuracy(bench, groups):
    s = snap("shape_bias_vs_id_accuracy")
    for group, cell in (("total", s), ("at", s["details"]["at"]), ("other", s["details"]["other"])):
        ms = groups[group]
        rho, p = stats.spearmanr(col(bench, ms, ["shape-bias"]), col(bench, ms, ID))
        got = cell["value"] if group == "total" else cell["rho"]
        assert close(rho, got) and close(p, cell["p"], P_REL), (group, rho, got, p, cell["p"])
    for m in groups["total"]:
        assert close(s["per_model"][m]["id"], float(np.mean([bench[m][c] for c in ID])))
        assert s["per_model"][m]["shape_bias"] == bench[m]["shape-bias"]
    # the paper: Total -0.76, AT -0.98, Other -0.60 (METHODS 4)
    assert (
        round(s["value"], 2),
        round(s["details"]["at"]["rho"], 2),
        round(s["details"]["other"]["rho"], 2),
    ) == (-0.76, -0.98, -0.60)


def test_shape_bias_yfcc_ssl_equals_baseline(bench):
    s = snap("shape_bias_yfcc_ssl_equals_baseline")
    assert (
        s["value"] == bench["ssl_resnet50"]["shape-bias"]
        and s["details"]["baseline"]["value"] == bench["tv_resnet50"]["shape-bias"]
    )
    assert (round(s["value"], 4), round(s["details"]["baseline"]["value"], 4)) == (
        0.2096,
        0.2146,
    )  # METHODS 4


def test_critical_band_center_frequency_null(bench, groups):
    s = snap("critical_band_center_frequency_null")
    ps = []
    for cat, columns in CATEGORIES.items():
        for group, ms in groups.items():
            rho, p = stats.spearmanr(
                col(bench, ms, ["metric/criticalband/cf_norm"]), col(bench, ms, columns)
            )
            cell = s["details"][f"{cat}/{group}"]
            assert (
                close(rho, cell["rho"]) and close(p, cell["p"], P_REL) and cell["n"] == len(ms)
            ), (cat, group)
            ps.append(p)
    assert len(ps) == 12 and close(min(ps), s["value"], P_REL) and min(ps) >= 0.05


def test_imagenet_cbar_strongest_mean_correlation(bench, groups):
    s = snap("imagenet_cbar_strongest_mean_correlation")
    names = list(BENCHMARKS)
    matrix = np.column_stack([col(bench, groups["total"], [BENCHMARKS[b]]) for b in names])
    rho, _ = stats.spearmanr(matrix)
    incl = rho.mean(axis=1)
    excl = (rho.sum(axis=1) - 1) / (len(names) - 1)
    i_cbar, i_in = names.index("imagenet_cbar"), names.index("imagenet")
    d = s["details"]
    assert close(incl[i_cbar], s["value"]) and close(
        incl[i_cbar], d["imagenet_cbar_including_diagonal"]["value"]
    )
    assert close(incl[i_in], d["imagenet_including_diagonal"]["value"])
    assert close(excl[i_cbar], d["imagenet_cbar_excluding_diagonal"]["value"])
    assert close(excl[i_in], d["imagenet_excluding_diagonal"]["value"])
    assert [names[i] for i in np.argsort(-incl, kind="stable")] == d["ranking_including_diagonal"]
    assert [names[i] for i in np.argsort(-excl, kind="stable")] == d["ranking_excluding_diagonal"]
    # METHODS 4: C-bar 0.827 (first), ImageNet 0.789; without the diagonal 0.802 and 0.759
    assert [round(v, 3) for v in (incl[i_cbar], incl[i_in], excl[i_cbar], excl[i_in])] == [
        0.827,
        0.789,
        0.802,
        0.759,
    ]


def test_high_frequency_bias_positive(bench, groups):
    s = snap("high_frequency_bias_positive")
    ms = groups["total"]
    hf = col(bench, ms, HFC)
    for cat in ("id", "robustness", "concepts"):
        rho, p = stats.spearmanr(hf, col(bench, ms, CATEGORIES[cat]))
        cell = s["details"][f"{cat}/total"]
        assert close(rho, cell["rho"]) and close(p, cell["p"], P_REL) and rho > 0 and p < 0.001, cat


def test_low_frequency_bias_helps_pgd(bench, groups):
    s = snap("low_frequency_bias_helps_pgd")
    ms = groups["total"]
    rho, p = stats.spearmanr(col(bench, ms, LFC), col(bench, ms, ADVERSARIAL))
    assert close(rho, s["value"]) and close(p, s["p"], P_REL)
    assert round(rho, 2) == 0.73  # the paper


def test_peak_noise_sensitivity_near_one(bench, groups):
    s = snap("peak_noise_sensitivity_near_one")
    pns = [bench[m]["metric/criticalband/pns_norm"] for m in groups["total"]]
    at_one = sum(math.isclose(v, 1.0, rel_tol=0, abs_tol=1e-9) for v in pns)
    assert at_one == s["value"] == s["details"]["k"] == 34  # METHODS 4: 34 of 48
    assert max(pns) <= 1.0 + 1e-9  # the bound A <= 4 of the fit


def test_adversarial_training_curvilinear(bench, groups):
    """Quadratic vs linear least squares by numpy.linalg.lstsq, F-test with scipy.stats.f."""
    s = snap("adversarial_training_curvilinear")
    ms = groups["at"]
    x = col(bench, ms, ["shape-bias"])
    for cat in ("adversarial", "concepts"):
        y = col(bench, ms, CATEGORIES[cat])
        fits = {}
        for deg in (1, 2):
            design = np.column_stack([x**k for k in range(deg + 1)])
            coef, *_ = np.linalg.lstsq(design, y, rcond=None)
            fits[deg] = (coef, float(((y - design @ coef) ** 2).sum()))
        n = len(ms)
        f = (fits[1][1] - fits[2][1]) / (fits[2][1] / (n - 3))
        p = stats.f.sf(f, 1, n - 3)
        cell = s["details"][cat]
        assert close(fits[2][0][2], cell["value"], 1e-7) and close(p, cell["p"], 1e-5), cat
        assert fits[2][0][2] < 0 and p < 0.05  # inverted U, significant
    pgd = col(bench, ms, ADVERSARIAL)
    assert (
        ms[int(np.argmax(pgd))] == s["details"]["peak_model"] == "robust_resnet50_linf_eps1.0"
    )  # METHODS 4


def test_adversarial_training_curvilinear_turning_point(bench, groups):
    """Issue 21 item 4, recomputed by other means: the slope at each end of the AT models' shape
    bias is the linear coefficient of the quadratic re-centred there (numpy lstsq, its classical
    standard error), the U test's p the one-sided t p of the weaker end; the two lines are scipy's
    linregress on each side of the peak model's shape bias, with the residual variance pooled."""
    s = snap("adversarial_training_curvilinear")
    ms = groups["at"]
    x = col(bench, ms, ["shape-bias"])
    n = len(ms)
    for cat in ("adversarial", "concepts"):
        y = col(bench, ms, CATEGORIES[cat])
        u = s["details"][cat]["u_test"]
        ts = []
        for at in (x.min(), x.max()):
            d = x - at
            design = np.column_stack([np.ones(n), d, d * d])
            coef, res, *_ = np.linalg.lstsq(design, y, rcond=None)
            se = math.sqrt(float(res[0]) / (n - 3) * np.linalg.inv(design.T @ design)[1, 1])
            ts.append(coef[1] / se)
        assert close(ts[0], u["t_low"], 1e-7) and close(ts[1], u["t_high"], 1e-7), cat
        assert close(stats.t.sf(min(ts[0], -ts[1]), n - 3), u["p"], 1e-6)
        assert (
            u["x_low"] <= u["vertex"] <= u["x_high"] and u["inverted_u"]
        )  # inside the data (0.50, 0.44)
        lo, hi = u["vertex_interval"]
        assert lo < u["vertex"] < hi
        c = x[int(np.argmax(y))]
        t = s["details"][cat]["two_lines"]
        low, high = stats.linregress(x[x < c], y[x < c]), stats.linregress(x[x >= c], y[x >= c])
        assert close(low.slope, t["slope_low"], 1e-7) and close(high.slope, t["slope_high"], 1e-7)
        resid = np.r_[
            y[x < c] - low.intercept - low.slope * x[x < c],
            y[x >= c] - high.intercept - high.slope * x[x >= c],
        ]
        s2 = float(resid @ resid) / (n - 4)
        for side, slope, p in (
            (x[x < c], t["slope_low"], t["p_low"]),
            (x[x >= c], t["slope_high"], t["p_high"]),
        ):
            assert close(
                2
                * stats.t.sf(abs(slope / math.sqrt(s2 / ((side - side.mean()) ** 2).sum())), n - 4),
                p,
                1e-6,
            )
    # the U test shows an inverted U in both; the two lines only for Concepts
    # (PGD's high line p = 0.064)
    assert [s["details"][c]["two_lines"]["inverted_u"] for c in ("adversarial", "concepts")] == [
        False,
        True,
    ]


def test_high_frequency_strongest_model_9_percent(bench, groups):
    s = snap("high_frequency_strongest_model_9_percent")
    ms = groups["total"]
    hf = col(bench, ms, HFC)
    order = np.argsort(-hf)
    assert ms[order[0]] == s["details"]["model"] == "resnet50_prime" and close(
        hf[order[0]], s["value"]
    )
    assert ms[order[1]] == s["details"]["runner_up"]["model"] and close(
        hf[order[1]], s["details"]["runner_up"]["value"]
    )
    assert (round(hf[order[0]], 3), round(hf[order[1]], 3)) == (0.135, 0.087)  # METHODS 4


def test_high_frequency_strongest_model_9_percent_interval(bench, groups):
    """Version 2: the interval is the binomial measurement uncertainty of resnet50_prime's value
    (50,000 images per condition, each HFC column a ratio filtered / clean top-1), +-1.96 SD.
    Recomputed from benchmark.csv by the closed form written out here (delta method per column,
    covariance dropped, mean of the column SDs), and checked against a binomial simulation of
    the measurement itself: the per-column SDs agree with the closed form, and the SD of the
    five-column mean (the same clean draw in every column) stays below it (conservative)."""
    s = snap("high_frequency_strongest_model_9_percent")
    assert (
        s["version"] == 2
        and s["params"]["images"] == 50_000
        and s["params"]["clean_column"] == "top1_acc/imagenet"
    )
    m, images = s["details"]["model"], 50_000
    a_c = bench[m]["top1_acc/imagenet"] / 100
    ratios = [bench[m][c] for c in HFC]
    sds = []
    for r in ratios:
        a_f = r * a_c
        sds.append(math.sqrt(a_f * (1 - a_f) / images + r * r * a_c * (1 - a_c) / images) / a_c)
    sd = sum(sds) / len(sds)
    lo, hi = s["interval"]
    assert close(lo, s["value"] - 1.96 * sd) and close(hi, s["value"] + 1.96 * sd)
    assert close(s["value"], sum(ratios) / len(ratios))
    # the published 9% lies far outside, so the claim's not_reproduced
    # verdict is no rounding artefact
    assert not lo <= s["published"] <= hi and s["verdict"] == "not_reproduced"
    assert (
        hi - lo < s["value"] - s["details"]["runner_up"]["value"]
    )  # the runner-up's 0.087 is not inside either
    rng = np.random.default_rng(0)
    k_c = rng.binomial(images, a_c, 100_000)
    per_col = [rng.binomial(images, r * a_c, k_c.size) / k_c for r in ratios]
    assert float(np.mean([np.std(v) for v in per_col])) == pytest.approx(sd, rel=0.03)
    assert float(np.std(np.mean(per_col, axis=0))) <= sd * 1.01


# The bias x category figure as printed (rho to two decimals; 0.00 = p >= 0.05): the authors'
# poster, paulgavrikov/biases_vs_generalization @ 9168ac8, assets/poster.pdf, panel "Bias
# Correlation", read from the PDF's text with each number's position on the grid. Per bias, per
# category (ID, Robustness, Concepts, Adversarial), the groups (Total, AT, Other).
BIAS_COLUMNS = {
    "shape_bias": ["shape-bias"],
    "low_frequency_bias": LFC,
    "high_frequency_bias": HFC,
    "critical_band_bandwidth": ["metric/criticalband/bw_norm"],
    "critical_band_center_frequency": ["metric/criticalband/cf_norm"],
    "critical_band_peak_noise_sensitivity": ["metric/criticalband/pns_norm"],
}
FIGURE = {
    "shape_bias": [(-0.76, -0.98, -0.60), (-0.53, -0.91, 0), (0, 0, 0.41), (0.47, 0, 0)],
    "low_frequency_bias": [(0, -0.99, 0), (0, -0.91, 0.48), (0.29, 0, 0.61), (0.73, 0, 0.53)],
    "high_frequency_bias": [
        (0.65, 0.81, 0.40),
        (0.79, 0.75, 0.61),
        (0.53, 0, 0.59),
        (-0.40, -0.59, 0.53),
    ],
    "critical_band_bandwidth": [
        (-0.72, -0.72, -0.57),
        (-0.76, -0.62, -0.54),
        (-0.31, 0, 0),
        (0.49, 0.65, 0),
    ],
    "critical_band_center_frequency": [(0, 0, 0)] * 4,
    "critical_band_peak_noise_sensitivity": [
        (0.30, 0.81, 0),
        (0, 0.81, 0),
        (0, 0, -0.38),
        (-0.43, 0, -0.39),
    ],
}
GROUPS = ("total", "at", "other")


def printed(bias: str, category: str, group: str) -> float:
    return FIGURE[bias][list(CATEGORIES).index(category)][GROUPS.index(group)]


def spearman_cell(bench, groups, bias: str, category: str, group: str) -> tuple[float, float]:
    ms = groups[group]
    rho, p = stats.spearmanr(
        col(bench, ms, BIAS_COLUMNS[bias]), col(bench, ms, CATEGORIES[category])
    )
    return float(rho), float(p)


def test_bias_category_figure_as_printed(bench, groups):
    """All 72 cells recomputed with scipy from benchmark.csv: each printed non-zero cell is the
    rho rounded to two decimals with p < 0.05; each printed 0.00 has p >= 0.05."""
    for bias in FIGURE:
        for category in CATEGORIES:
            for group in GROUPS:
                rho, p = spearman_cell(bench, groups, bias, category, group)
                want = printed(bias, category, group)
                if want == 0:
                    assert p >= 0.05, (bias, category, group, rho, p)
                else:
                    assert round(rho, 2) == want and p < 0.05, (bias, category, group, rho, p)


def assert_cells(s, bench, groups, bias: str, cells: list[tuple[str, str]]) -> None:
    """Each detail cell ``category/group`` of snapshot ``s`` is scipy's Spearman rho and p."""
    for category, group in cells:
        rho, p = spearman_cell(bench, groups, bias, category, group)
        cell = s["details"][f"{category}/{group}"]
        assert close(rho, cell["rho"]) and close(p, cell["p"], P_REL), (category, group)
        assert cell["n"] == len(groups[group])


def test_high_frequency_bias_hurts_adversarial(bench, groups):
    s = snap("high_frequency_bias_hurts_adversarial")
    for group in GROUPS:
        rho, p = spearman_cell(bench, groups, "high_frequency_bias", "adversarial", group)
        got = s if group == "total" else s["details"][group]
        assert close(rho, got["value" if group == "total" else "rho"]) and close(p, got["p"], P_REL)
        assert round(rho, 2) == printed("high_frequency_bias", "adversarial", group)
    assert s["value"] < 0 and s["p"] < 0.05 and s["details"]["at"]["rho"] < 0
    assert s["details"]["at"]["p"] < 0.05 and s["details"]["other"]["rho"] > 0


def test_low_frequency_bias_no_clear_effect(bench, groups):
    s = snap("low_frequency_bias_no_clear_effect")
    cells = [("id", "total"), ("robustness", "total")]
    assert_cells(s, bench, groups, "low_frequency_bias", cells)
    ps = [spearman_cell(bench, groups, "low_frequency_bias", c, g)[1] for c, g in cells]
    assert close(min(ps), s["value"], P_REL) and min(ps) >= 0.05
    assert s["details"]["headline_cell"] == "id/total"  # p = 0.054, the closest to significance
    assert all(printed("low_frequency_bias", c, g) == 0 for c, g in cells)


def test_critical_band_bandwidth_vs_id_robustness(bench, groups):
    s = snap("critical_band_bandwidth_vs_id_robustness")
    bias = "critical_band_bandwidth"
    cells = [(c, g) for c in ("id", "robustness", "adversarial") for g in GROUPS]
    assert_cells(s, bench, groups, bias, cells)
    rhos = {(c, g): spearman_cell(bench, groups, bias, c, g)[0] for c, g in cells}
    assert min(rhos, key=rhos.get) == ("robustness", "total") and close(
        s["value"], min(rhos.values())
    )
    for (c, g), rho in rhos.items():
        if printed(bias, c, g) != 0:
            assert round(rho, 2) == printed(bias, c, g), (c, g)
    assert printed(bias, "adversarial", "other") == 0  # the one cell not a rounding target


def test_low_frequency_bias_at_negative_id_robustness(bench, groups):
    s = snap("low_frequency_bias_at_negative_id_robustness")
    cells = [("id", "at"), ("robustness", "at")]
    assert_cells(s, bench, groups, "low_frequency_bias", cells)
    assert close(s["value"], s["details"]["id/at"]["rho"])
    for c, g in cells:
        rho, p = spearman_cell(bench, groups, "low_frequency_bias", c, g)
        assert round(rho, 2) == printed("low_frequency_bias", c, g) and rho < 0 and p < 0.05


def test_low_frequency_bias_at_null_concepts_adversarial(bench, groups):
    s = snap("low_frequency_bias_at_null_concepts_adversarial")
    cells = [("concepts", "at"), ("adversarial", "at")]
    assert_cells(s, bench, groups, "low_frequency_bias", cells)
    ps = [spearman_cell(bench, groups, "low_frequency_bias", c, g)[1] for c, g in cells]
    assert close(min(ps), s["value"], P_REL) and min(ps) >= 0.05 and len(groups["at"]) == 15


def test_peak_noise_sensitivity_opposite_signs(bench, groups):
    s = snap("peak_noise_sensitivity_opposite_signs")
    bias = "critical_band_peak_noise_sensitivity"
    cells = [(c, "total") for c in CATEGORIES]
    assert_cells(s, bench, groups, bias, cells)
    rho_id, p_id = spearman_cell(bench, groups, bias, "id", "total")
    rho_adv, p_adv = spearman_cell(bench, groups, bias, "adversarial", "total")
    assert close(s["value"], rho_adv) and (round(rho_id, 2), round(rho_adv, 2)) == (0.30, -0.43)
    assert p_id < 0.05 and p_adv < 0.05 and rho_id > 0 > rho_adv  # opposite signs


def test_peak_noise_sensitivity_null_robustness_concepts(bench, groups):
    s = snap("peak_noise_sensitivity_null_robustness_concepts")
    bias = "critical_band_peak_noise_sensitivity"
    cells = [("robustness", "total"), ("concepts", "total")]
    assert_cells(s, bench, groups, bias, cells)
    ps = [spearman_cell(bench, groups, bias, c, g)[1] for c, g in cells]
    assert close(min(ps), s["value"], P_REL) and min(ps) >= 0.05


def test_texture_bias_helps_imagenet_a(bench, groups):
    s = snap("texture_bias_helps_imagenet_a")
    ms = groups["total"]
    sb, ina = col(bench, ms, ["shape-bias"]), col(bench, ms, ["top1_acc/imagenet-a"])
    rho, p = stats.spearmanr(sb, ina)
    assert close(rho, s["value"]) and close(p, s["p"], P_REL) and s["n"] == len(ms) == 48
    assert rho < 0 and p < 0.05  # the paper's direction, significant
    for m in ms:
        assert s["per_model"][m]["imagenet_a"] == bench[m]["top1_acc/imagenet-a"]
    # the Robustness category ImageNet-A is averaged into: the printed -0.53 of the figure
    rob, _ = spearman_cell(bench, groups, "shape_bias", "robustness", "total")
    assert round(rob, 2) == printed("shape_bias", "robustness", "total") == -0.53


# ------------------------------------------------------------------ ImageNet-X claims

FACTORS = (
    "pose",
    "background",
    "pattern",
    "color",
    "smaller",
    "shape",
    "partial_view",
    "subcategory",
    "texture",
    "larger",
    "darker",
    "object_blocking",
    "person_blocking",
    "style",
    "brighter",
    "multiple_objects",
)


def error_ratios(data_dir, model_set: str) -> tuple[list[str], np.ndarray]:
    """(1 - factor accuracy) / (1 - average accuracy), from the published CSV read with csv."""
    path = (
        data_dir
        / "imagenetx"
        / "factor_accuracies"
        / model_set
        / "class"
        / "accuracies_per_factor.csv"
    )
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    er = np.array([[(1 - float(r[f])) / (1 - float(r["average"])) for f in FACTORS] for r in rows])
    return [r["model"] for r in rows], er


def test_imagenetx_failure_modes_concordant(data_dir):
    """Kendall's W (tie-corrected) = Friedman chi-square / (m (n - 1)), scipy's Friedman test;
    the mean pairwise Spearman from scipy's m x m Spearman matrix."""
    s = snap("imagenetx_failure_modes_concordant")
    _, er = error_ratios(data_dir, "imagenet_testbed")
    m, n = er.shape
    assert m == s["n"] == 335 and n == 16
    chi2, p = stats.friedmanchisquare(*er.T)
    assert close(chi2 / (m * (n - 1)), s["value"], 1e-9)
    assert p == s["p"] == 0.0  # underflows: chi-square 3,487 on 15 df
    rho, _ = stats.spearmanr(er.T)  # models as variables
    assert close(
        rho[np.triu_indices(m, k=1)].mean(), s["details"]["mean_pairwise_spearman"]["value"], 1e-9
    )


def test_imagenetx_texture_hardest_for_most_models(data_dir):
    """Texture among a model's 3 highest error ratios. 37 models have tied error ratios; for 3 of
    them texture ties for first place with 3 to 6 other factors, so the count is 309 (ties
    never counted) to 312 (always counted); the statistic breaks ties by the table's column
    order (stable sort), which gives 312."""
    s = snap("imagenetx_texture_hardest_for_most_models")
    _, er = error_ratios(data_dir, "imagenet_testbed")
    t = FACTORS.index("texture")
    above = (er > er[:, [t]]).sum(axis=1)
    tied = (er == er[:, [t]]).sum(axis=1) - 1
    surely, possibly = int(((above + tied) < 3).sum()), int((above < 3).sum())
    assert (surely, possibly) == (309, 312)
    by_column_order = sum(
        "texture" in {FACTORS[j] for j in np.argsort(-row, kind="stable")[:3]} for row in er
    )
    assert by_column_order == s["details"]["k"] == 312 and close(312 / len(er), s["value"])
    p = stats.binomtest(312, len(er), 0.5, alternative="greater").pvalue
    assert close(p, s["p"], P_REL) and p < 1e-60
    assert (
        stats.binomtest(surely, len(er), 0.5, alternative="greater").pvalue < 1e-60
    )  # the claim holds either way


def test_imagenetx_crop_spillover_smaller(data_dir):
    s = snap("imagenetx_crop_spillover_smaller")
    models, er = error_ratios(data_dir, "crop")
    strength = np.array([100 - float(re.search(r"_crop([0-9.]+)_", m).group(1)) for m in models])
    rho, p = stats.spearmanr(strength, er[:, FACTORS.index("smaller")])
    assert (
        len(models) == s["n"] == 1272 and len(np.unique(strength)) == s["details"]["levels"] == 93
    )
    assert close(rho, s["value"]) and p == s["p"] == 0.0 and rho > 0.9


def _colorjitter_trend(data_dir, claim_id: str, factor: str) -> tuple[float, float, float, float]:
    """Issue 36's colour-jitter claims by other means: strength c of 'color<c>' parsed here with
    re, the error ratios from the published CSV read with csv, scipy's Spearman over the 664 runs
    and over the 33 strengths' means; the snapshot must hold the same numbers."""
    s = snap(claim_id)
    models, er = error_ratios(data_dir, "colorjitter")
    strength = np.array([float(re.search(r"_color([0-9.]+)(?:_|$)", m).group(1)) for m in models])
    y = er[:, FACTORS.index(factor)]
    rho, p = stats.spearmanr(strength, y)
    levels = np.unique(strength)
    counts = [int((strength == v).sum()) for v in levels]
    rho_s, p_s = stats.spearmanr(levels, [y[strength == v].mean() for v in levels])
    assert len(models) == s["n"] == 664 and levels.size == s["details"]["levels"] == 33
    assert (min(counts), max(counts)) == (16, 21) and levels.min() == 1 and levels.max() == 97
    assert close(rho, s["value"]) and close(p, s["p"], P_REL)
    st = s["details"]["unit_strength"]
    assert close(rho_s, st["rho"]) and close(p_s, st["p"], P_REL) and st["n"] == 33
    return rho, p, rho_s, p_s


def test_imagenetx_colorjitter_spillover_color(data_dir):
    rho, p, rho_s, _ = _colorjitter_trend(
        data_dir, "imagenetx_colorjitter_spillover_color", "color"
    )
    assert round(rho, 3) == -0.896 and p < 1e-200 and round(rho_s, 3) == -0.995


def test_imagenetx_colorjitter_spillover_brighter(data_dir):
    """The weakest of the four: rho -0.131 over runs (p 7.3e-4), -0.43 over strengths."""
    rho, p, rho_s, p_s = _colorjitter_trend(
        data_dir, "imagenetx_colorjitter_spillover_brighter", "brighter"
    )
    assert round(rho, 3) == -0.131 and 1e-4 < p < 1e-3 and round(rho_s, 2) == -0.43 and p_s < 0.05


def test_imagenetx_colorjitter_spillover_darker(data_dir):
    rho, p, rho_s, _ = _colorjitter_trend(
        data_dir, "imagenetx_colorjitter_spillover_darker", "darker"
    )
    assert round(rho, 3) == -0.556 and p < 1e-50 and round(rho_s, 3) == -0.935


def test_imagenetx_colorjitter_spillover_pose(data_dir):
    rho, p, rho_s, _ = _colorjitter_trend(data_dir, "imagenetx_colorjitter_spillover_pose", "pose")
    assert round(rho, 3) == 0.872 and p < 1e-200 and round(rho_s, 3) == 0.995


def test_imagenetx_crop_spillover_smaller_units(data_dir):
    """Issue 21 item 5 by other means: the per-strength rho over the strength levels' mean
    'smaller' error ratios (scipy), and crop0.2's two readings judged by its 15 other factors in
    pooled within-level SDs (numpy), read from the published CSV with csv."""
    s = snap("imagenetx_crop_spillover_smaller")
    models, er = error_ratios(data_dir, "crop")
    strength = np.array([100 - float(re.search(r"_crop([0-9.]+)_", m).group(1)) for m in models])
    j = FACTORS.index("smaller")
    levels = np.unique(strength)
    means = np.array([er[strength == v, j].mean() for v in levels])
    rho, p = stats.spearmanr(levels, means)
    st = s["details"]["unit_strength"]
    assert st["n"] == levels.size == 93 and close(rho, st["rho"]) and close(p, st["p"], P_REL)
    assert st["runs_per_strength"] == {"min": 1, "max": 22}
    assert s["details"]["unit_run"]["rho"] == s["value"] and s["details"]["unit_run"]["n"] == 1272
    run = "eval_resnet50_crop0.2_wd0.0001_id1660252539"
    i = models.index(run)
    others = [k for k in range(len(FACTORS)) if k != j]
    rest = np.arange(len(models)) != i
    lv = np.unique(strength[rest])
    resid = np.vstack(
        [
            er[rest & (strength == v)][:, others]
            - er[rest & (strength == v)][:, others].mean(axis=0)
            for v in lv
        ]
    )
    sd = np.sqrt((resid**2).sum(axis=0) / (resid.shape[0] - lv.size))
    z2 = {
        v: float(
            (((er[i, others] - er[rest & (strength == v)][:, others].mean(axis=0)) / sd) ** 2).sum()
        )
        for v in (92.0, 80.0)
    }  # crop8, the strongest level (0.2% lies beyond it), and crop20 (0.2 = 20%)
    c = s["details"]["crop_scale_below_1"][run]
    assert close(c["readings"]["percent"]["z2"], z2[92.0], 1e-9) and close(
        c["readings"]["fraction"]["z2"], z2[80.0], 1e-9
    )
    assert c["decided"] == "percent" and z2[92.0] < z2[80.0] and strength[i] == pytest.approx(99.8)
    x = strength.copy()
    x[i] = 80.0
    assert close(stats.spearmanr(x, er[:, j]).statistic, c["readings"]["fraction"]["rho"])
    assert close(stats.spearmanr(strength[rest], er[rest, j]).statistic, c["rho_without"])
    # its own 'smaller' ratio (not used to place it) sits between the 20% and
    # 25% runs' means, as noted
    assert er[strength == 75.0, j].mean() < er[i, j] < er[strength == 80.0, j].mean()


# ------------------------------------------------------------------ critical-band vectors


def _gauss(x, a, mu, sigma):
    return a * np.exp(-((x - mu) ** 2) / (2 * sigma**2))


def independent_fit(vector) -> tuple[float, float, float]:
    """METHODS 3 step 5 with scipy directly: (bandwidth, centre frequency, PNS)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (a, mu, sigma), _ = curve_fit(
            _gauss,
            np.arange(7.0),
            np.asarray(vector, float),
            p0=[1, 0, 1],
            bounds=((0, -np.inf, -np.inf), (4, np.inf, np.inf)),
        )
    return 2 * math.sqrt(math.log(4)) * abs(sigma), 1.75 * 2**mu, 2 ** (a - 4)


def test_methods_human_reference_thresholds():
    bw, cf, pns = independent_fit([0, 0, 0, 0, 2, 2, 0])
    assert (round(bw, 2), round(cf, 1), round(pns, 2)) == (1.00, 39.6, 1.00)  # METHODS 3


def test_threshold_vectors_reproduce_benchmark_csv_by_an_independent_fit(bench, groups):
    stored = json.loads(VECTORS.read_text())["models"]
    assert sorted(stored) == sorted(groups["total"])
    worst = 0.0
    for model in groups["total"]:
        want = tuple(
            bench[model][f"metric/criticalband/{k}"] for k in ("bw_norm", "cf_norm", "pns_norm")
        )
        assert (
            tuple(stored[model]["published"].values()) == want
        )  # the file records benchmark.csv's triple
        for vector in stored[model]["vectors"]:
            assert all(v in range(5) for v in vector) and len(vector) == 7
            got = independent_fit(vector)
            err = max(abs(g - w) / abs(w) for g, w in zip(got, want, strict=True))
            worst = max(worst, err)
            assert err < 1e-6, (model, vector, got, want)
    assert worst < 1e-7  # METHODS 3: below 1e-7


# ------------------------------------------------------------------ Subramanian et al. 2023 claims
# Recomputed from the network files with json and scipy/numpy directly: the thresholds by the
# authors' description of find_thresholds (50% on the accuracy matrix in percent), the fit by
# ``independent_fit`` (|sigma|), the populations and families from
# population.toml read with tomllib.

SUB = "critical-band-masking/network_data"


@pytest.fixture(scope="module")
def subramanian(data_dir) -> dict:
    import tomllib

    pop = tomllib.loads(
        (ROOT / "repro" / "studies" / "subramanian2023" / "population.toml").read_text()
    )
    left = {e["file"] for e in pop["left_out"]}
    sds = ["0", "0.02", "0.04", "0.08", "0.16"]
    fits: dict[tuple, tuple | None] = {}
    nets = {}
    for path in sorted((data_dir / SUB).glob("solomon_*_accuracies_*.json")):
        if path.name in left:
            continue
        raw = json.loads(path.read_text())
        acc = {}
        for name, trials in raw.items():
            sd, band = name.removeprefix("noise").split("freq")
            acc[(sds.index(sd), int(band))] = 100.0 * sum(trials) / len(trials)
        th = []
        for band in range(7):
            j = 0
            for j in range(5):
                if acc[(4 - j, band)] > 50:
                    break
            th.append(j)
        key = tuple(th)
        if key not in fits:
            fits[key] = None if len(set(key)) == 1 else independent_fit(key)
        nets[path.name.removeprefix("solomon_").split("_accuracies_")[0]] = {
            "thresholds": th,
            "fit": fits[key],
        }
    sb = json.loads((data_dir / SUB / "sb_scores.json").read_text())
    for n, scores in sb.items():
        if n in nets:
            nets[n]["shape_bias"] = float(np.mean(scores))
    for stem in ("waccs_eps0.1", "waccs_eps0.1_remaining"):
        for n, v in json.loads((data_dir / SUB / f"{stem}.json").read_text()).items():
            if n in nets:
                nets[n]["pgd"] = v
    return {"nets": nets, "pop": pop, "human": independent_fit([0, 0, 0, 0, 2, 2, 0])[0]}


def _r2_and_p(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    design = np.column_stack([np.ones(len(y)), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    r2 = 1 - np.sum((y - design @ coef) ** 2) / np.sum((y - y.mean()) ** 2)
    k = x.shape[1]
    return float(r2), float(stats.f.sf((r2 / k) / ((1 - r2) / (len(y) - k - 1)), k, len(y) - k - 1))


def test_subramanian2023_human_channel_one_octave():
    s = snap("subramanian2023_human_channel_one_octave")
    bw, cf, pns = independent_fit([0, 0, 0, 0, 2, 2, 0])
    assert close(s["value"], bw) and close(s["details"]["center_frequency"], cf)
    assert (round(bw, 2), round(cf, 2), round(pns, 2)) == (
        1.00,
        39.60,
        1.00,
    )  # the authors' notebook output
    assert s["interval"] is None and s["per_model"] == {}  # the human side carries no uncertainty


def _ratios(subramanian) -> dict[str, float]:
    nets = subramanian["nets"]
    return {
        n: nets[n]["fit"][0] / subramanian["human"]
        for n in subramanian["pop"]["population"]["networks"]
        if nets[n]["fit"] is not None
    }


def test_subramanian2023_network_channel_2_to_4_times_human(subramanian):
    s = snap("subramanian2023_network_channel_2_to_4_times_human")
    ratios = _ratios(subramanian)
    assert len(ratios) == s["n"] == 72 and len(subramanian["pop"]["population"]["networks"]) == 76
    assert close(s["value"], float(np.median(list(ratios.values()))), rel_of(s, "value"))
    assert set(s["per_model"]) == set(ratios)
    for n, v in s["per_model"].items():
        assert close(v["ratio"], ratios[n], rel_of(s, f"per_model.{n}.ratio")), n
    assert 1.5 <= s["value"] <= 4.5  # "2-4", printed as integers


def test_subramanian2023_network_channel_more_than_twice_human(subramanian):
    s = snap("subramanian2023_network_channel_more_than_twice_human")
    ratios = _ratios(subramanian)
    assert close(s["value"], min(ratios.values()), rel_of(s, "value"))
    assert min(ratios.values()) > 2


def test_subramanian2023_network_channel_wider_than_human(subramanian):
    """Band edges as the half-maximum points of each independent fit, in cycles/image (centre x
    2^(-+bandwidth/2)); the count of networks past both human edges is far from any edge: the
    closest network clears them by a third of an octave, so fit end points moved by a CPU's
    kernels (measured: about 1e-5 relative) cannot change it."""
    s = snap("subramanian2023_network_channel_wider_than_human")
    nets = subramanian["nets"]
    h_bw, h_cf, _ = independent_fit([0, 0, 0, 0, 2, 2, 0])
    h_lo, h_hi = h_cf / 2 ** (h_bw / 2), h_cf * 2 ** (h_bw / 2)
    assert (round(h_lo, 1), round(h_hi, 1)) == (28.0, 56.0)  # 39.6 cycles/image, one octave
    networks = subramanian["pop"]["population"]["networks"]
    edges = {
        n: (
            nets[n]["fit"][1] / 2 ** (nets[n]["fit"][0] / 2),
            nets[n]["fit"][1] * 2 ** (nets[n]["fit"][0] / 2),
        )
        for n in networks
        if nets[n]["fit"] is not None
    }
    flat = [n for n in networks if nets[n]["fit"] is None]
    assert s["details"]["undefined_fits"] == flat and len(flat) == 4
    k = sum(lo < h_lo and hi > h_hi for lo, hi in edges.values())
    assert (s["details"]["k"], s["n"]) == (k, len(edges)) == (72, 72)
    assert s["value"] == k / len(edges)
    margin = min(min(math.log2(h_lo / lo), math.log2(hi / h_hi)) for lo, hi in edges.values())
    assert margin > 0.3
    assert set(s["per_model"]) == set(edges)
    for n, v in s["per_model"].items():
        assert close(v["lower_edge"], edges[n][0], rel_of(s, f"per_model.{n}.lower_edge")), n
        assert close(v["upper_edge"], edges[n][1], rel_of(s, f"per_model.{n}.upper_edge")), n
    z = stats.norm.ppf(0.975)  # Wilson score interval at k = n: upper bound 1, lower n / (n + z^2)
    assert close(s["interval"][0], len(edges) / (len(edges) + z**2)) and s["interval"][1] == 1.0
    assert s["value"] >= 0.5  # most networks (the tolerance's declared share)


def test_subramanian2023_channel_explains_shape_bias(subramanian):
    s = snap("subramanian2023_channel_explains_shape_bias")
    nets = subramanian["nets"]
    ok = [n for n in subramanian["pop"]["population"]["networks"] if nets[n]["fit"] is not None]
    r2, p = _r2_and_p(
        np.array([nets[n]["fit"] for n in ok]), np.array([nets[n]["shape_bias"] for n in ok])
    )
    assert close(s["value"], r2, rel_of(s, "value")) and s["n"] == len(ok) == 72
    assert close(
        s["p"], p, max(P_REL, 10 ** s.get("_compare", {}).get("p", {}).get("log10", 0) - 1)
    )
    assert round(r2, 2) != 0.51  # the paper's 51% is not this model's (recorded as not reproduced)


def test_subramanian2023_channel_explains_at_robustness(subramanian):
    s = snap("subramanian2023_channel_explains_at_robustness")
    nets = subramanian["nets"]
    ok = [n for n in subramanian["pop"]["sweep"]["networks"] if nets[n]["fit"] is not None]
    r2, p = _r2_and_p(
        np.array([nets[n]["fit"] for n in ok]), np.array([nets[n]["pgd"] for n in ok])
    )
    assert close(s["value"], r2, rel_of(s, "value")) and s["n"] == len(ok) == 8
    assert close(
        s["p"], p, max(P_REL, 10 ** s.get("_compare", {}).get("p", {}).get("log10", 0) - 1)
    )
    assert round(r2, 2) != 0.66 and p > 0.05


def test_subramanian2023_adversarial_training_widens_channel(subramanian):
    """tau-b with the two flat fits ranked above every defined bandwidth (tied with each other), as
    scipy computes it with them replaced by a huge number; the permutation p within the binomial
    error of an independent simulation (other generator, other seed)."""
    s = snap("subramanian2023_adversarial_training_widens_channel")
    nets = subramanian["nets"]
    sweep = subramanian["pop"]["sweep"]["networks"]
    eps = np.array([float(n.removeprefix("resnet50_l2_eps").replace("_", ".")) for n in sweep])
    bw = np.array([1e9 if nets[n]["fit"] is None else nets[n]["fit"][0] for n in sweep])
    assert [n for n in sweep if nets[n]["fit"] is None] == ["resnet50_l2_eps3", "resnet50_l2_eps5"]
    tau = stats.kendalltau(eps, bw).statistic
    assert close(s["value"], tau)

    def s_stat(y):
        return sum(
            np.sign(eps[i] - eps[j]) * np.sign(y[i] - y[j])
            for i in range(10)
            for j in range(i + 1, 10)
        )

    observed = s_stat(bw)
    assert observed == s["details"]["test"]["s"]
    rng = np.random.Generator(np.random.MT19937(2024))
    sims = 4000
    hits = sum(s_stat(rng.permutation(bw)) >= observed for _ in range(sims))
    p_sim = (1 + hits) / (sims + 1)
    assert abs(s["p"] - p_sim) < 4 * math.sqrt(p_sim * (1 - p_sim) / sims) + 2e-4
    assert s["p"] < 0.05 and tau > 0


def _package_types() -> tuple[dict[str, str], set[str]]:
    """The model -> type member map and SELFSUPERVISED_MODELS of the installed imagenet-x's
    model_types.py, read as text (regular expressions; the package is not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("imagenet_x")
    assert spec is not None and spec.submodule_search_locations
    text = (Path(next(iter(spec.submodule_search_locations))) / "model_types.py").read_text()
    types = dict(re.findall(r"""^\s*['"]([^'"]+)['"]\s*:\s*ModelTypes\.(\w+)""", text, re.M))
    lists = {
        name: re.findall(r"""['"]([^'"]+)['"]""", body)
        for name, body in re.findall(r"^(\w+_MODELS) = \[(.*?)\]", text, re.M | re.S)
    }
    ssl = {m for name, ms in lists.items() if name != "SELFSUPERVISED_MODELS" for m in ms}
    return types, ssl


def _group_profile_rho(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rho over the factors of two groups' mean error ratios."""
    return float(stats.spearmanr(a.mean(axis=0), b.mean(axis=0)).statistic)


def test_imagenetx_same_failure_modes_across_paradigms(data_dir):
    """The package's explicit type entries (STANDARD = 'Supervised on ImageNet-1K',
    SELFSUPERVISED) on the testbed and the listed self-supervised models of the other sets; the
    groups' mean error ratios per factor, scipy's Spearman."""
    s = snap("imagenetx_same_failure_modes_across_paradigms")
    types, ssl_listed = _package_types()
    assert ssl_listed == {
        "DINO", "simclr_resnet50x1", "simclr_resnet50x2", "simclr_resnet50x4",
        "InsDis", "MoCo", "PIRL", "MoCoV2", "InfoMin",
    }  # fmt: skip
    rows: dict[str, list[np.ndarray]] = {"STANDARD": [], "SELFSUPERVISED": []}
    for model_set in ("imagenet_testbed", "modelvshuman", "base"):
        models, er = error_ratios(data_dir, model_set)
        for name, row in zip(models, er, strict=True):
            if model_set != "imagenet_testbed" and name not in ssl_listed:
                continue
            if types.get(name) in rows:
                rows[types[name]].append(row)
    sup, ssl = (np.array(rows[k]) for k in ("STANDARD", "SELFSUPERVISED"))
    assert (len(sup), len(ssl)) == (83, 13)
    assert s["details"]["n_per_group"] == {"Supervised on ImageNet-1K": 83, "Self-supervised": 13}
    assert s["n"] == 96
    rho = _group_profile_rho(sup, ssl)
    assert close(rho, s["value"], 1e-12) and rho >= 0.8


def test_imagenetx_same_failure_modes_across_architectures(data_dir):
    """The testbed models of the four plotted types, vit_* against the rest (every other name of
    that population is a convolutional network: checked against the claim's matches)."""
    s = snap("imagenetx_same_failure_modes_across_architectures")
    types, _ = _package_types()
    plotted = {"STANDARD", "MORE_DATA", "SELFSUPERVISED", "ROBUST_INTV"}
    models, er = error_ratios(data_dir, "imagenet_testbed")
    keep = np.array([types.get(m) in plotted for m in models])
    vit = np.array([m.startswith("vit_") for m in models])
    assert (int((keep & vit).sum()), int((keep & ~vit).sum())) == (8, 192)
    matches = s["details"]["name_rule"]["matches"]
    assert sorted(matches["transformer"]["models"]) == sorted(np.array(models)[keep & vit])
    assert sorted(matches["convolutional"]["models"]) == sorted(np.array(models)[keep & ~vit])
    rho = _group_profile_rho(er[keep & vit], er[keep & ~vit])
    assert close(rho, s["value"], 1e-12) and rho >= 0.8 and s["n"] == 200

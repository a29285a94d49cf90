"""Analysis: Spearman with bootstrap intervals, the Analysis on synthetic tables, and analysis
variants defined as data (another category, another population) without code changes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from repro.analysis.analysis import Analysis
from repro.analysis.correlation import bootstrap_spearman_matrices, spearman, spearman_matrix
from repro.analysis.spec import load_spec
from repro.base.errors import ConfigError, DataError
from repro.base.table import ModelTable

pytestmark = pytest.mark.unit


def _xy(n=30, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return x, x + rng.normal(size=n)


def test_spearman_matches_scipy_and_interval_is_reproducible():
    x, y = _xy()
    c = spearman(x, y, resamples=2000, seed=0)
    ref = stats.spearmanr(x, y)
    assert c.rho == pytest.approx(ref.statistic, abs=1e-12) and c.p == pytest.approx(
        ref.pvalue, rel=1e-12
    )
    assert c.interval[0] < c.rho < c.interval[1]
    assert spearman(x, y, resamples=2000, seed=0).interval == c.interval  # fixed seed: identical
    assert spearman(x, y, resamples=2000, seed=1).interval != c.interval
    assert "2000 resamples, seed 0" in c.method


def test_vectorised_bootstrap_equals_a_plain_loop():
    x, y = _xy(n=12)
    idx = np.random.default_rng(3).integers(0, 12, size=(2000, 12))
    loop = [stats.spearmanr(x[i], y[i]).statistic for i in idx]
    lo, hi = np.percentile(loop, [2.5, 97.5])
    c = spearman(x, y, resamples=2000, seed=3)
    assert c.interval == pytest.approx((lo, hi), abs=1e-12)


def test_bootstrap_matrices_match_spearman_matrix_on_identity_resample():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(20, 4))
    boots = bootstrap_spearman_matrices(data, 2000, 0)
    assert boots.shape == (2000, 4, 4)
    assert np.allclose(np.diagonal(boots, axis1=1, axis2=2), 1.0)
    # one resample recomputed independently
    idx = np.random.default_rng(0).integers(0, 20, size=(2000, 20))[5]
    assert np.allclose(boots[5], stats.spearmanr(data[idx]).statistic)
    assert np.allclose(spearman_matrix(data), stats.spearmanr(data).statistic)


def _synthetic(n_at=5, n_other=7, seed=0):
    """A table with every column the default spec reads; AT models have
    shape bias rising with ID."""
    spec = load_spec("gavrikov2024")
    rng = np.random.default_rng(seed)
    models = [f"at{i}" for i in range(n_at)] + [f"m{i}" for i in range(n_other)]
    values = {m: {c: float(rng.uniform(0.1, 0.9)) for c in spec.columns()} for m in models}
    cats = {"adversarial_training": models[:n_at], "baseline": models[n_at:]}
    return spec, ModelTable(values, origin="synthetic.csv"), cats


def test_study_groups_and_unweighted_category_means():
    spec, table, cats = _synthetic()
    s = Analysis(spec, table, cats)
    assert s.population == [*cats["adversarial_training"], *cats["baseline"]]
    assert s.groups == {
        "total": s.population,
        "at": cats["adversarial_training"],
        "other": cats["baseline"],
    }
    m = "m0"
    want = np.mean(
        [
            table.value(m, c)
            for c in ("top1_acc/imagenet", "top1_acc/imagenet-v2", "top1_acc/imagenet-real")
        ]
    )
    assert s.category("id", [m])[0] == pytest.approx(want)
    lf = np.mean([table.value(m, f"metric/bandpass/LFC/0.{k}") for k in range(1, 6)])
    assert s.bias("low_frequency_bias", [m])[0] == pytest.approx(lf)


def test_masked_cell_is_zero_when_not_significant():
    spec, table, cats = _synthetic()
    s = Analysis(spec, table, cats)
    cells = s.bias_vs_category()
    assert len(cells) == 6 * 4 * 3
    for c in cells:
        assert s.masked(c) == (c.corr.rho if c.corr.p < 0.05 else 0.0)


def test_benchmark_row_means_with_and_without_diagonal():
    spec, table, cats = _synthetic()
    bc = Analysis(spec, table, cats).benchmark_correlation
    k = len(bc.benchmarks)
    assert np.allclose(
        bc.row_mean_excluding_diagonal, (bc.row_mean_including_diagonal * k - 1) / (k - 1)
    )
    for (lo, hi), v in zip(
        bc.interval_including_diagonal, bc.row_mean_including_diagonal, strict=True
    ):
        assert lo <= hi and np.isfinite(v)


def test_missing_column_is_a_data_error_naming_column_and_model():
    spec, table, cats = _synthetic()
    values = {m: dict(r) for m, r in table.values.items()}
    del values["m3"]["shape-bias"]
    s = Analysis(spec, ModelTable(values, origin="synthetic.csv"), cats)
    with pytest.raises(
        DataError, match=r"synthetic\.csv: column 'shape-bias' missing \(needed for model 'm3'\)"
    ):
        s.cell("shape_bias", "id", "total")


def test_user_variant_adds_a_category_and_changes_the_population(tmp_path):
    variant = tmp_path / "variant.toml"
    variant.write_text("""
extends = "gavrikov2024"
name = "no_at_imagenet_only"
[population]
model_categories = "all"
exclude_models = ["m6"]
[categories.imagenet_only]
label = "ImageNet top-1"
columns = ["top1_acc/imagenet"]
[groups.at]
drop = true
""")
    spec = load_spec(variant)
    assert (
        spec.name == "no_at_imagenet_only"
        and "imagenet_only" in spec.categories
        and "at" not in spec.groups
    )
    assert list(spec.biases) == list(load_spec("gavrikov2024").biases)  # inherited unchanged
    _, table, cats = _synthetic()
    s = Analysis(spec, table, cats)
    assert "m6" not in s.population and len(s.population) == 11
    cell = s.cell("shape_bias", "imagenet_only", "total")
    x = s.bias("shape_bias", s.population)
    y = table.column("top1_acc/imagenet", s.population)
    assert cell.corr.rho == pytest.approx(stats.spearmanr(x, y).statistic)
    assert {c.group for c in s.bias_vs_category()} == {"total", "other"}


@pytest.mark.parametrize(
    "body,match",
    [
        (
            'extends = "gavrikov2024"\n[categories.x]\nlabel = "x"\n',
            r"\[categories\.x\] needs `columns",
        ),
        ('extends = "gavrikov2024"\n[bootstrap]\nresamples = 100\n', "at least 2000"),
        ('extends = "gavrikov2024"\n[groups.g]\nmodel_categorie = ["x"]\n', "unknown field"),
        ('name = "x"\n', r"missing table \[population\]"),
        ('extends = "gavrikov2024"\n[population\n', "not valid TOML"),
    ],
)
def test_bad_variant_is_a_config_error_naming_the_file(tmp_path, body, match):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(ConfigError, match=match):
        load_spec(p)


def test_unknown_model_category_in_a_group_is_named(tmp_path):
    p = tmp_path / "v.toml"
    p.write_text('extends = "gavrikov2024"\n[groups.g]\nmodel_categories = ["adversarial"]\n')
    _, table, cats = _synthetic()
    with pytest.raises(ConfigError, match=r"\[groups\.g\]: unknown model category 'adversarial'"):
        Analysis(load_spec(p), table, cats).groups  # noqa: B018

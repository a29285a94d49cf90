"""The seeds-linked analysis on synthetic inputs: the partial rank correlation against a direct
computation (residuals of the ranks), each cell's rho against scipy, the Benjamini-Hochberg q
against a hand computation, the recovery of Gavrikov's shape counts, and the one-line errors of a
bad identity row or a missing factor-table row."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from repro.analysis.partial_rank import partial_spearman
from repro.base.errors import ConfigError, DataError
from repro.report.seeds_linked import correlate, error_ratios, links, recover_counts
from tests.partial_by_hand import direct_partial

pytestmark = pytest.mark.unit


def test_partial_spearman_equals_the_residual_computation():
    rng = np.random.default_rng(3)
    z = rng.normal(size=23)
    x = z + rng.normal(size=23)
    y = -0.5 * z + 0.7 * x + rng.normal(size=23)
    rho, p, n = partial_spearman(x, y, z)
    want_rho, want_p = direct_partial(x, y, z)
    assert n == 23
    assert rho == pytest.approx(want_rho, abs=1e-12)
    assert p == pytest.approx(want_p, rel=1e-9)
    # holding z fixed changes the answer here (x and y both follow z)
    assert abs(rho - stats.spearmanr(x, y).statistic) > 0.05


def test_partial_spearman_drops_incomplete_triples():
    x = np.array([1.0, 2, 3, 4, 5, 6, math.nan])
    y = np.array([2.0, 1, 4, 3, 6, 5, 7])
    z = np.array([1.0, 1, 2, 2, 3, 3, 4])
    assert partial_spearman(x, y, z)[2] == 6


def _bh_by_hand(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    q = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        q[i] = running
    return q


def test_cells_match_scipy_and_bh_is_monotone_and_direct():
    rng = np.random.default_rng(0)
    models = [f"m{i}" for i in range(15)]
    acc = {m: float(v) for m, v in zip(models, rng.uniform(60, 80, 15), strict=True)}
    bias = {m: {"a": float(rng.normal()), "b": acc[m] + float(rng.normal())} for m in models}
    factors = ["pose", "color", "style"]
    ratios = {
        m: {f: float(rng.normal()) + (acc[m] / 10 if f == "style" else 0) for f in factors}
        for m in models
    }
    cells = correlate(bias, ratios, acc, ["a", "b"], factors)
    assert len(cells) == 6
    for c in cells:
        x = [bias[m][c.bias] for m in models]
        y = [ratios[m][c.factor] for m in models]
        res = stats.spearmanr(x, y)
        assert (c.n, c.rho, c.p) == (15, pytest.approx(res.statistic), pytest.approx(res.pvalue))
        assert (c.partial_rho, c.partial_p) == pytest.approx(
            direct_partial(x, y, [acc[m] for m in models])
        )
    for p_key, q_key in (("p", "q"), ("partial_p", "partial_q")):
        p = [getattr(c, p_key) for c in cells]
        q = [getattr(c, q_key) for c in cells]
        assert q == pytest.approx(_bh_by_hand(p))
        by_p = [qi for _, qi in sorted(zip(p, q, strict=True))]
        assert by_p == sorted(by_p)  # monotone in p
        assert all(qi >= pi for pi, qi in zip(p, q, strict=True))


def _decl(*rows):
    return SimpleNamespace(
        origin=Path("independent/imagenetx.toml"),
        identity=[
            SimpleNamespace(study_model=s, source_model=src, level=lvl) for s, src, lvl in rows
        ],
    )


def test_links_prefer_the_better_identity_then_the_set_order_and_skip_not_same():
    decl = _decl(
        ("a", "imagenet_testbed/a", "probable"),
        ("a", "modelvshuman/a", "certain"),
        ("b", "imagenet_testbed/b", "probable"),
        ("b", "modelvshuman/b", "probable"),
        ("c", "modelvshuman/c", "not_same"),
        ("d", "base/d", "certain"),
    )
    rows = {
        k: {}
        for k in ("imagenet_testbed/a", "modelvshuman/a", "imagenet_testbed/b", "modelvshuman/b")
    }
    got = links(decl, ["a", "b", "c", "d"], rows, ("modelvshuman", "imagenet_testbed"))
    assert {m: k.source_model for m, k in got.items()} == {
        "a": "modelvshuman/a",
        "b": "modelvshuman/b",
    }


def test_bad_identity_row_is_one_line_naming_file_and_row():
    decl = _decl(("a", "modelvshuman/a", "certain"), ("nope", "modelvshuman/x", "certain"))
    with pytest.raises(ConfigError) as err:
        links(decl, ["a"], {"modelvshuman/a": {}, "modelvshuman/x": {}}, ("modelvshuman",))
    msg = str(err.value)
    assert "\n" not in msg
    assert "imagenetx.toml: [[identity]] #2: study_model 'nope'" in msg


def test_source_model_missing_from_its_factor_table_is_one_line():
    decl = _decl(("a", "modelvshuman/gone", "certain"))
    with pytest.raises(DataError) as err:
        links(decl, ["a"], {}, ("modelvshuman",))
    msg = str(err.value)
    assert "\n" not in msg
    assert "[[identity]] #1: source_model 'modelvshuman/gone'" in msg
    assert "imagenetx/factor_accuracies/modelvshuman/class/accuracies_per_factor.csv" in msg


def test_error_ratio_and_a_row_without_average():
    r = error_ratios({"class/average": 0.8, "class/pose": 0.7}, "m")
    assert r["pose"] == pytest.approx(1.5)
    assert math.isnan(r["style"])
    with pytest.raises(DataError, match="m: no class/average"):
        error_ratios({"class/pose": 0.7}, "m")


def test_counts_recovered_from_the_printed_bias_and_cue_conflict_accuracy():
    # 153 shape of 890 cue decisions; 222 of 1,280 images decided by shape
    assert recover_counts(153 / 890, 222 / 1280 * 100) == (153, 890)
    # 496/766 prints as 248/383 reduced: the cue-conflict accuracy (563/1280) picks k = 2
    assert recover_counts(496 / 766, 563 / 1280 * 100) == (496, 766)
    # 5/18: several multiples fit within the 80 same-class images: not unique
    assert recover_counts(5 / 18, 250 / 1280 * 100) is None
    assert recover_counts(0.3, math.nan) is None

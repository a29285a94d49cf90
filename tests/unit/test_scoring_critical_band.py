"""Unit tests of the critical-band scoring (pure functions, synthetic inputs): thresholds from
a 5 x 7 accuracy grid (absolute and normalized, METHODS.md 3 step 4), the bounded Gaussian
fit and its summaries, the degenerate cases reported as undefined, and the vector search."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.scoring import critical_band as cb

pytestmark = pytest.mark.unit


def grid_from_columns(cols: list[list[float]]) -> np.ndarray:
    """7 columns of [acc at SD 0, 0.02, 0.04, 0.08, 0.16] -> (5, 7)."""
    return np.array(cols, dtype=float).T


def test_thresholds_count_from_the_highest_noise_down_until_accuracy_exceeds_half():
    cols = [
        [0.9, 0.9, 0.9, 0.9, 0.9],  # passes everywhere -> 0
        [0.9, 0.9, 0.9, 0.9, 0.4],  # fails only at 0.16 -> 1
        [0.9, 0.9, 0.9, 0.3, 0.2],  # -> 2
        [0.9, 0.8, 0.5, 0.3, 0.2],  # exactly 50% does not exceed -> 3
        [0.9, 0.4, 0.3, 0.2, 0.1],  # fails at every noise level -> 4
        [0.9, 0.2, 0.2, 0.6, 0.1],  # stops at the first pass from the top (0.08) -> 1
        [0.4, 0.9, 0.9, 0.9, 0.9],  # row 0 (SD 0) is never counted -> 0
    ]
    assert cb.thresholds(grid_from_columns(cols)).tolist() == [0, 1, 2, 3, 4, 1, 0]


def test_norm_thresholds_use_accuracy_relative_to_the_baseline():
    # a weak model: 40% at SD 0, 30% at low noise, 10% at high noise
    col = [0.4, 0.3, 0.3, 0.1, 0.1]
    grid = grid_from_columns([col] * 7)
    assert cb.thresholds(grid).tolist() == [4] * 7  # absolute: never above 50%
    # relative: 0.75, 0.75, 0.25, 0.25 -> fails at 0.16 and 0.08 only
    assert cb.thresholds(grid, baseline=0.4).tolist() == [2] * 7


@pytest.mark.parametrize(
    ("grid", "baseline", "match"),
    [
        (np.zeros((7, 5)), None, r"5 x 7 \(noise SD x band\), got shape \(7, 5\)"),
        (np.full((5, 7), 75.0), None, "fractions in"),
        (np.full((5, 7), np.nan), None, "fractions in"),
        (np.full((5, 7), 0.5), 0.0, r"baseline \(SD-0 accuracy\)"),
        (np.full((5, 7), 0.5), 80.0, r"baseline \(SD-0 accuracy\)"),
        (np.full((5, 7), 0.5), 1.5, r"must be a fraction in \(0, 1\], got 1.5"),  # just above 1
    ],
)
def test_thresholds_reject_bad_grids(grid, baseline, match):
    with pytest.raises(ValueError, match=match):
        cb.thresholds(grid, baseline=baseline)


def test_thresholds_are_integer_counts_and_a_baseline_of_one_is_allowed():
    grid = np.full((5, 7), 0.9)
    out = cb.thresholds(grid, baseline=1.0)
    assert out.dtype == np.int64 and out.tolist() == [0] * 7
    assert cb.thresholds(grid).dtype == np.int64


def test_human_reference_thresholds():
    res = cb.fit([0, 0, 0, 0, 2, 2, 0])
    assert res.defined
    assert round(res.bandwidth, 2) == 1.00
    assert round(res.center_frequency, 1) == 39.6
    assert round(res.peak_noise_sensitivity, 2) == 1.00
    # exact values of the closed form: peak midway between bands 4 and 5, A at its bound 4
    a, mu, sigma = res.params
    assert mu == pytest.approx(4.5, abs=1e-9)
    assert a == pytest.approx(4.0, abs=1e-9)
    assert res.center_frequency == pytest.approx(1.75 * 2**4.5, rel=1e-9)
    # g(4) = g(5) = 2 with A = 4: half maximum 0.5 octave from the peak, so FWHM = 1 band
    assert res.bandwidth == pytest.approx(1.0, abs=2e-4)


@pytest.mark.parametrize("level", [0, 1, 2, 3, 4])
def test_flat_thresholds_are_undefined(level):
    res = cb.fit([level] * 7)
    assert (res.bandwidth, res.center_frequency, res.peak_noise_sensitivity) == (None, None, None)
    assert not res.defined and "all thresholds equal" in res.reason
    assert res.as_json() == {
        "bandwidth": None,
        "center_frequency": None,
        "peak_noise_sensitivity": None,
    }


def test_all_four_raw_fit_is_the_published_flat_number():
    # what the study stored for 27 models' raw columns (Q4): bandwidth 11295.35, PNS ~1
    params = cb.fit_params([4] * 7)
    bw, _cf, pns = cb.summaries(params)
    assert bw == pytest.approx(11295.35, abs=0.01)
    assert pns == pytest.approx(0.999988, abs=1e-6)


def test_peak_position_moves_the_centre_frequency():
    for peak in range(1, 6):
        y = [0] * 7
        y[peak - 1], y[peak], y[peak + 1] = 2, 4, 2
        res = cb.fit(y)
        # exact for the symmetric vector (peak 3), within 0.05 band otherwise
        assert res.params[1] == pytest.approx(peak, abs=1e-6 if peak == 3 else 0.05)
        assert res.center_frequency == pytest.approx(1.75 * 2 ** res.params[1], rel=1e-12)
        assert 0.9 < res.peak_noise_sensitivity <= 1.0


def test_lower_peak_gives_lower_peak_noise_sensitivity():
    res = cb.fit([0, 1, 2, 2, 2, 1, 0])
    assert res.peak_noise_sensitivity < 1.0
    assert res.peak_noise_sensitivity == pytest.approx(2 ** (res.params[0] - 4))
    assert res.bandwidth == pytest.approx(2 * math.sqrt(math.log(4)) * abs(res.params[2]))


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ([0, 0, 2], "need 7 thresholds"),
        ([0, 0, 0, 0, 2, 2, 5], r"in \[0, 4\]"),
        ([0, 0, 0, 0, 2, 2, -1], r"in \[0, 4\]"),
    ],
)
def test_fit_rejects_bad_vectors(values, match):
    with pytest.raises(ValueError, match=match):
        cb.fit(values)


def test_parse_thresholds():
    assert cb.parse_thresholds("0,0,0,0,2,2,0") == [0, 0, 0, 0, 2, 2, 0]
    assert cb.parse_thresholds(" 1, 2,3,4,4,4,4 ") == [1, 2, 3, 4, 4, 4, 4]
    with pytest.raises(ValueError, match="expected 7 comma-separated thresholds"):
        cb.parse_thresholds("0,0,2")
    with pytest.raises(
        ValueError, match=r"threshold 6 \(band 6\) is '5': expected an integer 0..4"
    ):
        cb.parse_thresholds("0,0,0,0,2,2,5")
    with pytest.raises(ValueError, match="threshold 2"):
        cb.parse_thresholds("0,0,x,0,2,2,0")
    # only spaces are stripped: a newline or a tab inside the list is an error, named
    with pytest.raises(ValueError, match=r"threshold 6 \(band 6\) is '0\\n'"):
        cb.parse_thresholds("0,0,0,0,2,2,0\n")
    with pytest.raises(ValueError, match=r"threshold 0 \(band 0\) is '\\t1'"):
        cb.parse_thresholds("\t1,0,0,0,2,2,0")
    with pytest.raises(ValueError, match=r"threshold 1 \(band 1\) is '1X'"):
        cb.parse_thresholds("0,1X,0,0,2,2,0")


def test_all_vectors_enumerates_the_grid():
    v = cb.all_vectors()
    assert v.shape == (78125, 7)
    assert len({tuple(r) for r in v}) == 78125
    assert v.min() == 0 and v.max() == 4


def test_target_params_inverts_the_summaries():
    res = cb.fit([0, 1, 2, 3, 4, 4, 3])
    a, mu, sigma = cb.target_params(res.bandwidth, res.center_frequency, res.peak_noise_sensitivity)
    assert (a, mu, sigma) == pytest.approx(
        (res.params[0], res.params[1], abs(res.params[2])), rel=1e-9
    )


def test_a_single_spike_does_not_converge_and_is_undefined():
    res = cb.fit([0, 0, 0, 4, 0, 0, 0])
    assert not res.defined and res.reason == "curve_fit did not converge"
    assert res.bandwidth is None


@pytest.mark.parametrize(
    "vector", [[0, 1, 2, 3, 4, 4, 3], [1, 2, 2, 2, 3, 3, 3], [0, 2, 3, 3, 2, 1, 0]]
)
def test_search_recovers_a_known_vector(vector):
    res = cb.fit(vector)
    triple = (res.bandwidth, res.center_frequency, res.peak_noise_sensitivity)
    found = cb.search({"m": triple})
    assert [h[0] for h in found["m"]] == [vector]
    assert found["m"][0][1] == 0.0


def test_search_reports_every_vector_with_the_same_fit():
    """A narrow peak ignores bands far from it: several vectors give the human triple."""
    res = cb.fit([0, 0, 0, 0, 2, 2, 0])
    triple = (res.bandwidth, res.center_frequency, res.peak_noise_sensitivity)
    hits = cb.search({"human": triple})["human"]
    vectors = [h[0] for h in hits]
    assert [0, 0, 0, 0, 2, 2, 0] in vectors and len(vectors) > 1
    for v in vectors:
        again = cb.fit(v)
        assert (
            cb.relative_error(
                (again.bandwidth, again.center_frequency, again.peak_noise_sensitivity), triple
            )
            <= 1e-6
        )
        assert v[3:6] == [0, 2, 2]  # the bands around the peak are pinned


def test_search_finds_nothing_for_an_impossible_triple():
    assert cb.search({"m": (1.0, 39.6, 0.5)})["m"] == []


def test_search_reads_past_screened_vectors_whose_fit_is_undefined():
    """[0, 2, 1, 0, 4, 0, 0]'s screen admits 625 vectors, the first of them with an undefined fit
    (skipped) and the vector itself 56th: it is found, at rtol 0 too (the same fit, exactly)."""
    v = [0, 2, 1, 0, 4, 0, 0]
    triple = cb.fit(v).triple()
    assert [h[0] for h in cb.search({"m": triple})["m"]] == [v]
    assert cb.search({"m": triple}, rtol=0.0)["m"] == [(v, 0.0)]
    # the screen's tolerance is the caller's: none admits a vector at 0
    assert cb.search({"m": triple}, screen_tol=0.0)["m"] == []
    # and the vectors searched are the caller's: without v, nothing
    others = cb.all_vectors()
    others = others[~(others == v).all(axis=1)]
    assert cb.search({"m": triple}, vectors=others)["m"] == []


def test_relative_error_is_the_largest_over_the_triple():
    assert cb.relative_error((1.0, 2.2, 3.0), (1.0, 2.0, 4.0)) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        cb.relative_error((1.0, 2.0), (1.0, 2.0, 3.0))


def test_exhaustive_search_agrees_with_the_screen_on_a_subset():
    """Table search over a slice of the grid gives the screened search's answer."""
    vectors = cb.all_vectors()[::997]  # 79 vectors
    table = cb.all_fits(1, vectors)
    k = next(i for i in range(len(vectors)) if np.isfinite(table[i, 0]))
    triple = tuple(table[k])
    full = cb.search_exhaustive({"m": triple}, table, vectors=vectors)
    screened = cb.search({"m": triple}, vectors=vectors)
    assert [h[0] for h in full["m"]] == [h[0] for h in screened["m"]] == [vectors[k].tolist()]
    # an exact match is found at rtol 0; a near one carries its largest relative error
    assert [h[0] for h in cb.search_exhaustive({"m": triple}, table, 0.0, vectors)["m"]] == [
        vectors[k].tolist()
    ]
    near = tuple(x * (1 + 4e-7) for x in triple)
    (hit,) = cb.search_exhaustive({"m": near}, table, vectors=vectors)["m"]
    assert hit[0] == vectors[k].tolist()
    assert hit[1] == pytest.approx(4e-7 / (1 + 4e-7), rel=1e-6)
    assert cb.search_exhaustive({"m": near}, table, 3e-7, vectors)["m"] == []


def test_the_default_vectors_are_the_whole_grid(monkeypatch):
    """Without ``vectors`` both the fit table and the exhaustive search run over all_vectors()."""
    few = cb.all_vectors()[::9973]  # 8 vectors
    monkeypatch.setattr(cb, "all_vectors", lambda: few)
    table = cb.all_fits()
    assert table.shape == (len(few), 3)
    np.testing.assert_array_equal(table, cb.all_fits(1, few))
    k = int(np.flatnonzero(np.isfinite(table[:, 0]))[0])
    found = cb.search_exhaustive({"m": tuple(table[k])}, table)["m"]
    assert found[0] == (few[k].tolist(), 0.0)


def test_shared_groups():
    found = {"a": [([0, 1], 0.0)], "b": [([0, 1], 0.0)], "c": [([1, 1], 0.0)], "d": []}
    from repro.studies.gavrikov2024.critical_band_expected import shared_groups

    assert shared_groups(found) == [
        {"vector": [0, 1], "models": ["a", "b"]},
        {"vector": [1, 1], "models": ["c"]},
    ]


def test_screen_keeps_every_converged_fit_on_a_random_sample():
    """The screen's premise: a vector's own converged fit is (nearly) stationary for it.

    Checked on random vectors (400 of them once by hand: no miss; 40 here), so the fast
    search cannot drop a vector that the exhaustive search would find.
    """
    vectors = cb.all_vectors()
    rng = np.random.default_rng(7)
    checked = 0
    for i in rng.choice(len(vectors), 40, replace=False):
        res = cb.fit(vectors[i])
        if not res.defined or res.center_frequency == 0.0:  # runaway centre underflows to 0
            continue
        params = cb.target_params(res.bandwidth, res.center_frequency, res.peak_noise_sensitivity)
        assert i in cb.screen(vectors, params), vectors[i].tolist()
        checked += 1
    assert checked >= 30


def _objective_gradient(vectors: np.ndarray, params: tuple[float, float, float]) -> np.ndarray:
    """The gradient of 0.5 * ||gaussian(params) - y||^2 for every vector y, by central differences
    of the objective itself (no Jacobian): (N, 3)."""
    grad = np.empty((len(vectors), 3))
    for j in range(3):
        h = 1e-6 * max(1.0, abs(params[j]))
        up, down = list(params), list(params)
        up[j] += h
        down[j] -= h
        g_up, g_down = cb.gaussian(cb.BANDS, *up), cb.gaussian(cb.BANDS, *down)
        # f(up) - f(down) = 0.5 * sum((g_up - g_down) * (g_up + g_down - 2 y)), without cancellation
        grad[:, j] = 0.5 * ((g_up + g_down)[None, :] - 2 * vectors) @ (g_up - g_down) / (2 * h)
    return grad


@pytest.mark.parametrize(
    "params", [(2.7, 2.3, 1.7), (3.1, 4.2, 0.8), (0.6, -0.5, 2.9), (4.0, 5.5, -1.3)]
)
def test_the_jacobian_is_the_gaussians_derivative(params):
    """``_jacobian`` against central differences of ``gaussian`` in A, mu and sigma (sigma != 1
    and x - mu != 2 so that a wrong power shows)."""
    jac = cb._jacobian(params)
    assert jac.shape == (cb.N_BANDS, 3)
    for j in range(3):
        h = 1e-6
        up, down = list(params), list(params)
        up[j] += h
        down[j] -= h
        numeric = (cb.gaussian(cb.BANDS, *up) - cb.gaussian(cb.BANDS, *down)) / (2 * h)
        np.testing.assert_allclose(jac[:, j], numeric, rtol=1e-6, atol=1e-9)


def _stationarity_conditions(vectors, params, tol):
    """The screen's rule from the objective's own gradient, as named conditions (N,) bool:
    |d/dmu| < tol, |d/dsigma| < tol, and in A: < tol at the upper bound (4), > -tol at the lower
    bound (0), |.| < tol inside; and the vectors within 1e-6 of a limit (rounding may decide)."""
    grad = _objective_gradient(vectors, params)
    a = params[0]
    if a >= cb.MAX_THRESHOLD - 1e-6:
        in_a = grad[:, 0]
    elif a <= 1e-6:
        in_a = -grad[:, 0]
    else:
        in_a = np.abs(grad[:, 0])
    margins = {"mu": np.abs(grad[:, 1]), "sigma": np.abs(grad[:, 2]), "A": in_a}
    conditions = {name: m < tol for name, m in margins.items()}
    borderline = np.logical_or.reduce([np.abs(m - tol) < 1e-6 for m in margins.values()])
    return conditions, borderline


@pytest.mark.parametrize(
    "params,tol",
    [
        ((2.0, 3.0, 1.5), 0.3),  # A inside (0, 4): 12 vectors admitted
        ((3.0, 3.0, 1.0), 0.2),  # 5
        ((4.0, 3.5, 1.0), 0.2),  # A at its upper bound: 3 (37 more if A were not asked)
        ((0.0, 2.0, 1.0), 1e-2),  # A at its lower bound, a flat zero curve: 5
    ],
)
def test_the_screen_is_the_stationarity_rule_on_every_vector(params, tol):
    """``screen`` on all 78,125 vectors against the rule computed from the objective's gradient
    by finite differences: the same vectors.

    Each case is one the rule can get wrong: the test also checks that leaving out the A
    condition, or the mu condition, would admit other vectors here."""
    vectors = cb.all_vectors()
    conditions, borderline = _stationarity_conditions(vectors, params, tol)
    want = conditions["mu"] & conditions["sigma"] & conditions["A"]
    assert borderline.sum() == 0  # no vector within 1e-6 of a limit: rounding decides none
    got = np.zeros(len(vectors), dtype=bool)
    got[cb.screen(vectors, params, tol)] = True
    assert want.sum() > 0
    np.testing.assert_array_equal(got, want)
    # the cases discriminate: the A condition and the mu condition each exclude vectors here
    assert (conditions["mu"] & conditions["sigma"] & ~conditions["A"]).sum() > 0
    if params[0] > 1e-6:  # (at A = 0 the curve is flat: no mu or sigma gradient at all)
        assert (~conditions["mu"] & conditions["sigma"] & conditions["A"]).sum() > 0


def test_the_screens_default_tolerance_is_a_hundredth():
    vectors = cb.all_vectors()
    params = cb.target_params(*cb.fit([0, 1, 2, 3, 4, 4, 3]).triple())
    np.testing.assert_array_equal(cb.screen(vectors, params), cb.screen(vectors, params, 1e-2))
    assert len(cb.screen(vectors, params, 1e-2)) < len(cb.screen(vectors, params, 0.5))


def test_the_screen_at_the_lower_bound_still_asks_for_stationary_mu_and_sigma():
    """Near A = 0 (within 1e-6) a very narrow Gaussian still has mu and sigma gradients: a unit
    threshold 3.2 sigma from the centre is excluded by them alone (its A gradient, -0.006, is
    inside the bound's one-sided tolerance); the all-zero vector is admitted."""
    sigma = 1e-6
    params = (1e-6, 3.0 - 3.2 * sigma, sigma)
    vectors = np.array([[0, 0, 0, 1, 0, 0, 0], [0] * 7], dtype=np.int64)
    jac = cb._jacobian(params)  # (checked against finite differences above)
    resid = cb.gaussian(cb.BANDS, *params)[None, :] - vectors
    g = resid @ jac
    assert -1e-2 < g[0, 0] < 0 and abs(g[0, 1]) > 1e-2  # the premise, stated
    assert cb.screen(vectors, params).tolist() == [1]


def test_search_lists_its_hits_by_error_then_vector():
    """With a wide ``rtol`` every fitted vector of a small set is a hit: they come sorted by
    their largest relative error, which is not the vectors' own order (the set is chosen so)."""
    base = [0, 1, 2, 3, 4, 4, 3]
    vectors = np.array(
        [
            base,
            [0, 1, 2, 3, 4, 4, 4],
            [1, 1, 2, 3, 4, 4, 3],
            [0, 0, 2, 3, 4, 4, 3],
            [0, 1, 2, 3, 3, 4, 3],
            [0, 1, 2, 2, 4, 4, 3],
        ],
        dtype=np.int64,
    )
    triple = cb.fit(base).triple()
    hits = cb.search({"m": triple}, rtol=10.0, vectors=vectors, screen_tol=1e9)["m"]
    table = cb.all_fits(1, vectors)
    full = cb.search_exhaustive({"m": triple}, table, rtol=10.0, vectors=vectors)["m"]
    for found in (hits, full):
        errors = [e for _, e in found]
        assert errors == sorted(errors) and found[0] == (base, 0.0)
        assert [v for v, _ in found] != sorted(v for v, _ in found)  # not the vectors' order
        assert len(found) >= 4
    assert [v for v, _ in hits] == [v for v, _ in full]


def test_fit_values_normalise_by_the_clean_accuracy():
    """The ``_norm`` thresholds divide by the clean (SD 0) accuracy, 60/100, not by a noisy cell:
    at SD 0.16 every band has 28/100, 0.47 of clean (fails), at 0.08 35/100, 0.58 (passes), so
    every normalised threshold is 1; the absolute ones are 4 (no noisy cell exceeds 50%).
    (Divided by the SD-0.02 cell, 50/100, 0.28 would pass and the thresholds would be 0.)"""
    from repro.base.results import ConditionCount

    per_sd = {0.02: 50, 0.04: 40, 0.08: 35, 0.16: 28}
    counts = [ConditionCount(cb.CLEAN, 60, 100)] + [
        ConditionCount(cb.condition_name(band, sd), k, 100)
        for sd, k in per_sd.items()
        for band in range(cb.N_BANDS)
    ]
    values = cb.fit_values(counts)
    assert [values[f"threshold/f={b}"] for b in range(cb.N_BANDS)] == [4.0] * cb.N_BANDS
    assert [values[f"threshold_norm/f={b}"] for b in range(cb.N_BANDS)] == [1.0] * cb.N_BANDS
    assert values["bw_norm"] is None and values["cf"] is None  # flat vectors: undefined fits

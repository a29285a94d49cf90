"""Scoring stage, critical band: accuracies to noise thresholds, thresholds to the Gaussian fit.

Subramanian et al. 2023, as used by Gavrikov & Keuper 2024: from a 5 x 7 grid of accuracies (noise
SD x frequency band) to per-band noise thresholds, and from thresholds to the bounded Gaussian fit
and its three summaries (METHODS.md section 3, steps 4 and 5).

Pure NumPy/SciPy. The probe (``repro.probes.critical_band``) synthesises the stimuli of the 29
conditions (``conditions``); the counts per condition become the grid (``accuracy_grid``), the
grid thresholds and fits (``fit_values``); ``score`` and ``score_16`` are the two protocols'
scorers of a measured result (the registry's ``score``).

Also holds the threshold-vector search that recovers, for a (bw_norm, cf_norm, pns_norm)
triple, the integer threshold vector(s) in {0..4}^7 whose fit reproduces it (a study's
expected-file generator applies it to its published triples).
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from repro.base.results import ConditionCount, ProbeResult

NOISE_SDS: tuple[float, ...] = (0.0, 0.02, 0.04, 0.08, 0.16)
N_BANDS = 7
MAX_THRESHOLD = len(NOISE_SDS) - 1  # 4 noisy levels -> thresholds 0..4
BANDS = np.arange(N_BANDS, dtype=float)  # x = 0..6 for the fit
P0 = (1.0, 0.0, 1.0)  # (A, mu, sigma) start of curve_fit, as in the study
#: the start every fit in this context uses: P0, except inside ``repro.scoring.fit_conditioning.
#: moved_start``, which measures how far an ill-conditioned fit's end point moves with it
START: ContextVar[tuple[float, float, float]] = ContextVar("critical_band_start", default=P0)
BOUNDS = ((0.0, -np.inf, -np.inf), (4.0, np.inf, np.inf))  # A in [0, 4]; mu, sigma free
BANDWIDTH_FACTOR = 2.0 * math.sqrt(math.log(4.0))  # FWHM of the Gaussian, in octaves
CENTRE_BASE = 1.75  # cycles/image of band 0; band f has nominal centre 1.75 * 2^f
CRITERION = 0.5  # a band "passes" a noise level while (relative) accuracy exceeds 50%
CLEAN = "sd=0"  # the condition without noise (SD 0, shown once for all bands)


def condition_name(band: int, sd: float) -> str:
    return f"f={band}/sd={sd:g}"


def conditions() -> list[tuple[str, int | None, float]]:
    """The 29 conditions as (name, band, SD), in the study's order.

    SD 0 once, then per band the four SDs."""
    out: list[tuple[str, int | None, float]] = [(CLEAN, None, 0.0)]
    for band in range(N_BANDS):
        for sd in NOISE_SDS[1:]:
            out.append((condition_name(band, sd), band, sd))
    return out


def condition_names() -> tuple[str, ...]:
    """The names of the 29 conditions, in ``conditions()`` order."""
    return tuple(name for name, _, _ in conditions())


def band_centre(f: float) -> float:
    """Nominal centre frequency (cycles/image) of band ``f`` (fractional bands allowed)."""
    return CENTRE_BASE * 2.0**f


@dataclass(frozen=True)
class CriticalBandFit:
    """The three critical-band summaries; all None when the fit is degenerate.

    bandwidth: full width at half maximum of the fitted Gaussian, in octaves
    center_frequency: 1.75 * 2^mu, in cycles/image
    peak_noise_sensitivity: 2^(A - 4)
    params: the fitted (A, mu, sigma), None when undefined
    reason: why the fit is undefined (None when it is defined)
    """

    bandwidth: float | None
    center_frequency: float | None
    peak_noise_sensitivity: float | None
    params: tuple[float, float, float] | None = None
    reason: str | None = None

    @property
    def defined(self) -> bool:
        return self.reason is None

    def triple(self) -> tuple[float, float, float]:
        """(bandwidth, centre frequency, PNS); ValueError when the fit is undefined."""
        if (
            self.bandwidth is None
            or self.center_frequency is None
            or self.peak_noise_sensitivity is None
        ):
            raise ValueError(f"critical-band fit undefined: {self.reason}")
        return self.bandwidth, self.center_frequency, self.peak_noise_sensitivity

    def as_json(self) -> dict[str, float | None]:
        return {
            "bandwidth": self.bandwidth,
            "center_frequency": self.center_frequency,
            "peak_noise_sensitivity": self.peak_noise_sensitivity,
        }


# --------------------------------------------------------------------------- thresholds


def thresholds(
    acc_grid: np.ndarray | Sequence[Sequence[float]], baseline: float | None = None
) -> np.ndarray:
    """Per-band noise thresholds (0..4) from a 5 x 7 accuracy grid.

    ``acc_grid[i, f]`` is the top-1 accuracy (fraction in [0, 1]) at noise SD ``NOISE_SDS[i]``
    in band ``f``; row 0 (SD 0) is not counted. For each band, the noise levels are counted
    from the highest SD downward until the accuracy exceeds 50%; the count is the threshold
    (4: the model fails even at SD 0.02; 0: it passes even at SD 0.16).

    With ``baseline`` (the model's own SD-0 accuracy) the 50% criterion applies to accuracy
    relative to the baseline: the ``_norm`` variant the paper uses. Without it, the absolute
    variant (the raw ``bw``/``cf``/``pns`` columns).
    """
    grid = np.asarray(acc_grid, dtype=float)
    if grid.shape != (len(NOISE_SDS), N_BANDS):
        raise ValueError(
            f"accuracy grid must be {len(NOISE_SDS)} x {N_BANDS} (noise SD x band), got shape "
            f"{grid.shape}"
        )
    if not np.all(np.isfinite(grid)) or grid.min() < 0 or grid.max() > 1:
        raise ValueError("accuracy grid must hold fractions in [0, 1] (not percentages, no NaN)")
    if baseline is not None:
        if not (math.isfinite(baseline) and 0 < baseline <= 1):
            raise ValueError(
                f"baseline (SD-0 accuracy) must be a fraction in (0, 1], got {baseline}"
            )
        grid = grid / baseline
    out = np.zeros(N_BANDS, dtype=np.int64)
    for f in range(N_BANDS):
        count = 0
        for i in range(len(NOISE_SDS) - 1, 0, -1):  # SD 0.16, 0.08, 0.04, 0.02
            if grid[i, f] > CRITERION:
                break
            count += 1
        out[f] = count
    return out


def accuracy_grid(counts: Sequence[ConditionCount]) -> np.ndarray:
    """Top-1 accuracy (fraction) as the (5 SDs, 7 bands) grid the threshold rule reads.

    Row 0 (SD 0) repeats the clean accuracy in every band."""
    by_name = {c.condition: c for c in counts}
    grid = np.empty((len(NOISE_SDS), N_BANDS))
    grid[0, :] = by_name[CLEAN].rate
    for i, sd in enumerate(NOISE_SDS[1:], start=1):
        for band in range(N_BANDS):
            grid[i, band] = by_name[condition_name(band, sd)].rate
    return grid


# --------------------------------------------------------------------------- fit


def gaussian(x: np.ndarray, a: float, mu: float, sigma: float) -> np.ndarray:
    """The fitted curve ``A * exp(-(x - mu)^2 / (2 sigma^2))``."""
    return a * np.exp(-((x - mu) ** 2) / (2.0 * sigma**2))


def _validate_vector(values: Iterable[float]) -> np.ndarray:
    y = np.asarray(list(values), dtype=float)
    if y.shape != (N_BANDS,):
        raise ValueError(f"need {N_BANDS} thresholds (bands 0..6), got {y.size}")
    if not np.all(np.isfinite(y)) or y.min() < 0 or y.max() > MAX_THRESHOLD:
        raise ValueError(f"thresholds must be numbers in [0, {MAX_THRESHOLD}], got {y.tolist()}")
    return y


def fit_params(values: Iterable[float]) -> tuple[float, float, float] | None:
    """The raw least-squares (A, mu, sigma), exactly as the study fits it; None if it fails.

    No degeneracy check: a flat vector returns its (meaningless) flat fit. Use ``fit``. The fit
    depends on the vector alone, so it is computed once per vector in a process (the 86 network
    files of Subramanian et al. hold 40 distinct vectors; a curve_fit costs milliseconds).
    """
    y = _validate_vector(values)
    return _fit_params(tuple(float(v) for v in y), START.get())


@functools.lru_cache(maxsize=4096)
def _fit_params(
    key: tuple[float, ...], start: tuple[float, float, float] = P0
) -> tuple[float, float, float] | None:
    from scipy.optimize import OptimizeWarning, curve_fit

    y = np.asarray(key, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            popt, _ = curve_fit(gaussian, BANDS, y, p0=list(start), bounds=BOUNDS)
        except (RuntimeError, ValueError):
            return None
    a, mu, sigma = (float(v) for v in popt)
    return a, mu, sigma


def summaries(params: tuple[float, float, float]) -> tuple[float, float, float]:
    """(bandwidth, centre frequency, peak noise sensitivity) of fitted (A, mu, sigma)."""
    a, mu, sigma = params
    with np.errstate(over="ignore"):  # a runaway centre (|mu| ~ 1e3) is inf, caught by fit()
        cf = float(CENTRE_BASE * np.exp2(np.float64(mu)))
    return BANDWIDTH_FACTOR * abs(sigma), cf, 2.0 ** (a - MAX_THRESHOLD)


def fit(values: Iterable[float]) -> CriticalBandFit:
    """Fit the Gaussian to 7 thresholds; undefined (None fields) when degenerate.

    Degenerate: all thresholds equal (no band is singled out; the least-squares optimum is a
    flat curve with arbitrary width and centre, e.g. bandwidth 11295.35 for all-4, which is
    reported as undefined), or the optimizer fails to converge. Computed once per vector and
    start in a process (the leave-one-out and start-moving checks refit the same vectors).
    """
    try:
        key = tuple(float(v) for v in values)
    except (TypeError, ValueError):  # not a flat vector of numbers: _validate_vector says why
        key = tuple(_validate_vector(values))
    return _fit(key, START.get())


@functools.lru_cache(maxsize=8192)
def _fit(key: tuple[float, ...], start: tuple[float, float, float]) -> CriticalBandFit:
    y = _validate_vector(key)
    if np.all(y == y[0]):
        return CriticalBandFit(
            None, None, None, None, f"all thresholds equal ({y[0]:g}): flat curve, no critical band"
        )
    params = _fit_params(tuple(float(v) for v in y), start)
    if params is None:
        return CriticalBandFit(None, None, None, None, "curve_fit did not converge")
    bw, cf, pns = summaries(params)
    if not all(math.isfinite(v) for v in (bw, cf, pns)):
        return CriticalBandFit(None, None, None, params, "fit produced a non-finite summary")
    return CriticalBandFit(bw, cf, pns, params)


def parse_thresholds(text: str) -> list[int]:
    """Parse ``"0,0,0,0,2,2,0"`` into 7 integer thresholds (ValueError naming what is wrong)."""
    parts = [
        p.strip(" ") for p in text.split(",")
    ]  # a space after a comma is fine; a newline is not
    if len(parts) != N_BANDS:
        raise ValueError(
            f"expected {N_BANDS} comma-separated thresholds (bands 0..6), got {len(parts)} in "
            f"{text!r}"
        )
    out = []
    for i, p in enumerate(parts):
        if (
            not (p.isascii() and p.isdigit()) or int(p) > MAX_THRESHOLD
        ):  # not '٣' or '²' (str.isdigit says yes)
            raise ValueError(
                f"threshold {i} (band {i}) is {p!r}: expected an integer 0..{MAX_THRESHOLD}"
            )
        out.append(int(p))
    return out


# --------------------------------------------------------------------------- search


def all_vectors() -> np.ndarray:
    """Every threshold vector in {0..4}^7, (78125, 7), in lexicographic order."""
    return np.array(
        list(itertools.product(range(MAX_THRESHOLD + 1), repeat=N_BANDS)), dtype=np.int64
    )


def target_params(bw: float, cf: float, pns: float) -> tuple[float, float, float]:
    """Invert the summaries: (A, mu, |sigma|) of a published triple."""
    return MAX_THRESHOLD + math.log2(pns), math.log2(cf / CENTRE_BASE), bw / BANDWIDTH_FACTOR


def _jacobian(params: tuple[float, float, float]) -> np.ndarray:
    a, mu, sigma = params
    x = BANDS
    e = np.exp(-((x - mu) ** 2) / (2 * sigma**2))
    return np.stack(
        [e, a * e * (x - mu) / sigma**2, a * e * (x - mu) ** 2 / sigma**3], axis=1
    )  # (7, 3)


def screen(
    vectors: np.ndarray, params: tuple[float, float, float], tol: float = 1e-2
) -> np.ndarray:
    """Indices of the vectors for which ``params`` is (nearly) a stationary point of the fit.

    A vector whose fit converges to ``params`` has a vanishing gradient J^T (g - y) there in
    mu and sigma, and in A unless A sits on a bound (then only the sign the bound allows). One
    matrix product tests all 78,125 vectors; the survivors are then fitted exactly.
    """
    a = params[0]
    jac = _jacobian(params)
    resid = gaussian(BANDS, *params)[None, :] - vectors  # (N, 7)
    grad = resid @ jac  # (N, 3), gradient of 0.5 * ||r||^2
    ok = (np.abs(grad[:, 1]) < tol) & (np.abs(grad[:, 2]) < tol)
    if a >= MAX_THRESHOLD - 1e-6:
        ok &= grad[:, 0] < tol  # at the upper bound the optimum may push against it (grad <= 0)
    elif a <= 1e-6:
        ok &= grad[:, 0] > -tol
    else:
        ok &= np.abs(grad[:, 0]) < tol
    return np.flatnonzero(ok)


def relative_error(got: Sequence[float], want: Sequence[float]) -> float:
    """Largest relative difference over the triple."""
    return max(abs(g - w) / abs(w) for g, w in zip(got, want, strict=True))


def search(
    published: dict[str, tuple[float, float, float]],
    rtol: float = 1e-6,
    vectors: np.ndarray | None = None,
    screen_tol: float = 1e-2,
) -> dict[str, list[tuple[list[int], float]]]:
    """For each model, the threshold vectors whose exact fit reproduces its triple to ``rtol``.

    Screened by stationarity (``screen`` with gradient tolerance ``screen_tol``), confirmed
    with the study's own fit (``fit``). Returns model -> [(vector, max relative error)],
    sorted by error.
    """
    vectors = all_vectors() if vectors is None else vectors
    cache: dict[tuple[int, ...], CriticalBandFit] = {}
    out: dict[str, list[tuple[list[int], float]]] = {}
    for model, triple in published.items():
        hits = []
        for idx in screen(vectors, target_params(*triple), tol=screen_tol):
            key = tuple(int(v) for v in vectors[idx])
            if key not in cache:
                cache[key] = fit(key)
            res = cache[key]
            if not res.defined:
                continue
            err = relative_error(res.triple(), triple)
            if err <= rtol:
                hits.append((list(key), err))
        out[model] = sorted(hits, key=lambda h: h[1])
    return out


def _fit_chunk(chunk: np.ndarray) -> np.ndarray:
    rows = np.full((len(chunk), 3), np.nan)
    for i, v in enumerate(chunk):
        res = fit(v)
        if res.defined:
            rows[i] = (res.bandwidth, res.center_frequency, res.peak_noise_sensitivity)
    return rows


def all_fits(workers: int = 1, vectors: np.ndarray | None = None) -> np.ndarray:
    """The (bandwidth, centre, PNS) of every vector (NaN when undefined), (78125, 3).

    The fit depends only on the vector, so this table is computed once (about 20 CPU-minutes,
    split over ``workers`` processes) and can be cached (``--cache`` of the generator).
    """
    vectors = all_vectors() if vectors is None else vectors
    chunks = np.array_split(vectors, max(1, workers) * 16)
    if workers <= 1:
        return np.concatenate([_fit_chunk(c) for c in chunks])
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        return np.concatenate(list(pool.map(_fit_chunk, chunks)))


def search_exhaustive(
    published: dict[str, tuple[float, float, float]],
    table: np.ndarray,
    rtol: float = 1e-6,
    vectors: np.ndarray | None = None,
) -> dict[str, list[tuple[list[int], float]]]:
    """The same answer as ``search``, from the full fit table (no screening)."""
    vectors = all_vectors() if vectors is None else vectors
    out = {}
    for model, triple in published.items():
        want = np.asarray(triple)
        with np.errstate(invalid="ignore"):
            err = np.max(np.abs(table - want) / np.abs(want), axis=1)
        idx = np.flatnonzero(err <= rtol)
        out[model] = sorted(([int(v) for v in vectors[i]], float(err[i])) for i in idx)
        out[model].sort(key=lambda h: h[1])
    return out


# --------------------------------------------------------------------------- a measured result


def fit_values(counts: Sequence[ConditionCount]) -> dict[str, float | None]:
    """Thresholds and fits of counts per condition, absolute and relative to the clean accuracy.

    Absolute: ``bw``, ``cf``, ``pns``, ``threshold/f=<band>``; relative to the clean accuracy: the
    same with ``_norm``, None when no clean image is right (relative accuracy undefined)."""
    grid = accuracy_grid(counts)
    values: dict[str, float | None] = {}
    for suffix, baseline in (("", None), ("_norm", grid[0, 0])):
        if baseline is not None and baseline <= 0:  # relative accuracy undefined
            values.update({f"bw{suffix}": None, f"cf{suffix}": None, f"pns{suffix}": None})
            continue
        th = np.asarray(thresholds(grid, baseline=baseline))
        for band, t in enumerate(th):
            values[f"threshold{suffix}/f={band}"] = float(t)
        f = fit(th)
        values[f"bw{suffix}"] = f.bandwidth
        values[f"cf{suffix}"] = f.center_frequency
        values[f"pns{suffix}"] = f.peak_noise_sensitivity
    return values


def score(result: ProbeResult, params: dict[str, Any] | None = None) -> ProbeResult:
    """The study's protocol (top-1 over 1000 classes): ``fit_values`` added.

    The headline value is ``cf_norm``, the centre frequency the paper correlates."""
    result.values.update(fit_values(result.conditions))
    result.value = result.values.get("cf_norm")
    return result


def score_16(result: ProbeResult, params: dict[str, Any] | None = None) -> ProbeResult:
    """The 16-class protocol of Subramanian et al. 2023: ``fit_values`` added.

    All six fit values are None instead (with ``empty_conditions``) when a cell has no images (a
    pre-made grid can lack one). Headline value: ``cf``, the centre frequency under the protocol's
    absolute 50% criterion."""
    empty = [c.condition for c in result.conditions if c.n == 0]
    if empty:
        result.values.update({f"{q}{s}": None for q in ("bw", "cf", "pns") for s in ("", "_norm")})
        result.values["empty_conditions"] = float(len(empty))
    else:
        result.values.update(fit_values(result.conditions))
    result.value = result.values.get("cf")
    return result

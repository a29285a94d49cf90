"""Scoring stage, critical band (Subramanian et al. 2023, as used by Gavrikov & Keuper 2024):
from a 5 x 7 grid of accuracies (noise SD x frequency band) to per-band noise thresholds, and
from thresholds to the bounded Gaussian fit and its three summaries (METHODS.md section 3,
steps 4 and 5).

Pure NumPy/SciPy. The probe (``repro.probes.critical_band``) produces the accuracy grid.

Also holds the threshold-vector search that recovers, for every published
(bw_norm, cf_norm, pns_norm) triple, the integer threshold vector(s) in {0..4}^7 whose fit
reproduces it; ``python -m repro.scoring.critical_band --generate-expected`` writes them to
``expected/critical_band/threshold_vectors.json``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

NOISE_SDS: tuple[float, ...] = (0.0, 0.02, 0.04, 0.08, 0.16)
N_BANDS = 7
MAX_THRESHOLD = len(NOISE_SDS) - 1  # 4 noisy levels -> thresholds 0..4
BANDS = np.arange(N_BANDS, dtype=float)  # x = 0..6 for the fit
P0 = (1.0, 0.0, 1.0)  # (A, mu, sigma) start of curve_fit, as in the study
BOUNDS = ((0.0, -np.inf, -np.inf), (4.0, np.inf, np.inf))  # A in [0, 4]; mu, sigma free
BANDWIDTH_FACTOR = 2.0 * math.sqrt(math.log(4.0))  # FWHM of the Gaussian, in octaves
CENTRE_BASE = 1.75  # cycles/image of band 0; band f has nominal centre 1.75 * 2^f
CRITERION = 0.5  # a band "passes" a noise level while (relative) accuracy exceeds 50%


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
        if self.bandwidth is None or self.center_frequency is None or self.peak_noise_sensitivity is None:
            raise ValueError(f"critical-band fit undefined: {self.reason}")
        return self.bandwidth, self.center_frequency, self.peak_noise_sensitivity

    def as_dict(self) -> dict[str, float | None]:
        return {
            "bandwidth": self.bandwidth,
            "center_frequency": self.center_frequency,
            "peak_noise_sensitivity": self.peak_noise_sensitivity,
        }


# --------------------------------------------------------------------------- thresholds


def thresholds(acc_grid: np.ndarray | Sequence[Sequence[float]], baseline: float | None = None) -> np.ndarray:
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
        raise ValueError(f"accuracy grid must be {len(NOISE_SDS)} x {N_BANDS} (noise SD x band), got shape {grid.shape}")
    if not np.all(np.isfinite(grid)) or grid.min() < 0 or grid.max() > 1:
        raise ValueError("accuracy grid must hold fractions in [0, 1] (not percentages, no NaN)")
    if baseline is not None:
        if not (math.isfinite(baseline) and 0 < baseline <= 1):
            raise ValueError(f"baseline (SD-0 accuracy) must be a fraction in (0, 1], got {baseline}")
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

    No degeneracy check: a flat vector returns its (meaningless) flat fit. Use ``fit``.
    """
    from scipy.optimize import OptimizeWarning, curve_fit

    y = _validate_vector(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            popt, _ = curve_fit(gaussian, BANDS, y, p0=list(P0), bounds=BOUNDS)
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
    reported as undefined), or the optimizer fails to converge.
    """
    y = _validate_vector(values)
    if np.all(y == y[0]):
        return CriticalBandFit(None, None, None, None, f"all thresholds equal ({y[0]:g}): flat curve, no critical band")
    params = fit_params(y)
    if params is None:
        return CriticalBandFit(None, None, None, None, "curve_fit did not converge")
    bw, cf, pns = summaries(params)
    if not all(math.isfinite(v) for v in (bw, cf, pns)):
        return CriticalBandFit(None, None, None, params, "fit produced a non-finite summary")
    return CriticalBandFit(bw, cf, pns, params)


def parse_thresholds(text: str) -> list[int]:
    """Parse ``"0,0,0,0,2,2,0"`` into 7 integer thresholds (ValueError naming what is wrong)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != N_BANDS:
        raise ValueError(f"expected {N_BANDS} comma-separated thresholds (bands 0..6), got {len(parts)} in {text!r}")
    out = []
    for i, p in enumerate(parts):
        if not p.isdigit() or int(p) > MAX_THRESHOLD:
            raise ValueError(f"threshold {i} (band {i}) is {p!r}: expected an integer 0..{MAX_THRESHOLD}")
        out.append(int(p))
    return out


# --------------------------------------------------------------------------- search


def all_vectors() -> np.ndarray:
    """Every threshold vector in {0..4}^7, (78125, 7), in lexicographic order."""
    return np.array(list(itertools.product(range(MAX_THRESHOLD + 1), repeat=N_BANDS)), dtype=np.int64)


def target_params(bw: float, cf: float, pns: float) -> tuple[float, float, float]:
    """Invert the summaries: (A, mu, |sigma|) of a published triple."""
    return MAX_THRESHOLD + math.log2(pns), math.log2(cf / CENTRE_BASE), bw / BANDWIDTH_FACTOR


def _jacobian(params: tuple[float, float, float]) -> np.ndarray:
    a, mu, sigma = params
    x = BANDS
    e = np.exp(-((x - mu) ** 2) / (2 * sigma**2))
    return np.stack([e, a * e * (x - mu) / sigma**2, a * e * (x - mu) ** 2 / sigma**3], axis=1)  # (7, 3)


def screen(vectors: np.ndarray, params: tuple[float, float, float], tol: float = 1e-2) -> np.ndarray:
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


# --------------------------------------------------------------------------- generator

PUBLISHED_COLUMNS = ("metric/criticalband/bw_norm", "metric/criticalband/cf_norm", "metric/criticalband/pns_norm")
EXPECTED_PATH = "expected/critical_band/threshold_vectors.json"


def read_published(data_dir: str | None = None) -> dict[str, tuple[float, float, float]]:
    """The 48 study models' published (bw_norm, cf_norm, pns_norm), from benchmark.csv."""
    import csv
    import json

    from repro.base.errors import DataError
    from repro.published.fetch import require_file

    csv_path = require_file("gavrikov2024/benchmark.csv", data_dir)
    cat_path = require_file("gavrikov2024/r50_categories.json", data_dir)
    models = [m for group in json.loads(cat_path.read_text()).values() for m in group]
    rows = {}
    with csv_path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("model", *PUBLISHED_COLUMNS) if c not in (reader.fieldnames or [])]
        if missing:
            raise DataError(f"{csv_path}: missing column(s) {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            rows[row["model"]] = (line, row)
    out = {}
    for m in models:
        if m not in rows:
            raise DataError(f"{csv_path}: no row for study model {m!r} (listed in {cat_path.name})")
        line, row = rows[m]
        try:
            out[m] = tuple(float(row[c]) for c in PUBLISHED_COLUMNS)
        except ValueError:
            raise DataError(f"{csv_path}: row {line} ({m}): {PUBLISHED_COLUMNS} must be numbers") from None
    return out  # type: ignore[return-value]


def shared_groups(found: dict[str, list[tuple[list[int], float]]]) -> list[dict]:
    """Models grouped by their (first) recovered vector, largest group first."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for model, hits in found.items():
        if hits:
            groups.setdefault(tuple(hits[0][0]), []).append(model)
    return [{"vector": list(v), "models": ms} for v, ms in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def generate_expected(
    out_path: str, data_dir: str | None = None, exhaustive_table: np.ndarray | None = None, screen_tol: float = 1e-2
) -> dict:
    """Search every study model's vector(s) and write them, with a header, as JSON."""
    import datetime
    import json
    import re
    from pathlib import Path

    import scipy

    from repro.published.fetch import require_file, sha256_of

    published = read_published(data_dir)
    found = search(published, screen_tol=screen_tol)
    method = (f"stationarity screen over all 78,125 vectors (gradient tolerance {screen_tol:g}), "
              "survivors confirmed by the exact fit")
    if exhaustive_table is not None:
        full = search_exhaustive(published, exhaustive_table)
        if {m: [h[0] for h in hs] for m, hs in full.items()} != {m: [h[0] for h in hs] for m, hs in found.items()}:
            raise RuntimeError("screened search and exhaustive search disagree; not writing")
        method += "; cross-checked against all 78,125 exact fits (identical result)"
    csv_path = require_file("gavrikov2024/benchmark.csv", data_dir)
    errors = [hs[0][1] for hs in found.values() if hs]
    doc = {
        "_header": {
            "what": "integer threshold vectors in {0..4}^7 whose critical-band fit reproduces each study "
            "model's published (bw_norm, cf_norm, pns_norm)",
            "generated_by": "python -m repro.scoring.critical_band --generate-expected"
            + (f" --screen-tol {screen_tol:g}" if screen_tol != 1e-2 else "")
            + (" --exhaustive" if exhaustive_table is not None else ""),
            "generated_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "source": "paulgavrikov/biases_vs_generalization @ 9168ac8, raw-data/benchmark.csv "
            f"(sha256 {sha256_of(csv_path)}), models of raw-data/r50_categories.json",
            "method": method,
            "fit": "scipy.optimize.curve_fit(A*exp(-(x-mu)^2/(2 sigma^2)), x=0..6, p0=[1,0,1], "
            "bounds A in [0,4]); bw = 2 sqrt(ln 4)|sigma|, cf = 1.75*2^mu, pns = 2^(A-4)",
            "rtol": 1e-6,
            "scipy": scipy.__version__,
            "numpy": np.__version__,
            "max_relative_error": max(errors) if errors else None,
            "models_without_vector": [m for m, hs in found.items() if not hs],
        },
        "models": {
            m: {
                "published": dict(zip(("bw_norm", "cf_norm", "pns_norm"), published[m], strict=True)),
                "vectors": [h[0] for h in hs],
                "relative_errors": [h[1] for h in hs],
            }
            for m, hs in found.items()
        },
        "shared_vectors": shared_groups(found),
    }
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    text = json.dumps(doc, indent=1)
    # one line per vector / error list, so a diff of the file reads model by model
    text = re.sub(r"\[\s+([-\d.e,\s]+?)\s+\]", lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]", text)
    tmp.write_text(text + "\n")
    tmp.replace(path)
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m repro.scoring.critical_band", description=__doc__.splitlines()[0])
    parser.add_argument("--generate-expected", action="store_true", help=f"search the vectors and write {EXPECTED_PATH}")
    parser.add_argument("--out", default=None, help=f"output path (default: <checkout>/{EXPECTED_PATH})")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--exhaustive", action="store_true", help="also fit all 78,125 vectors and cross-check")
    parser.add_argument("--workers", type=int, default=1, help="processes for --exhaustive")
    parser.add_argument("--cache", default=None, help="npy file holding the all-fits table (read if present, else written)")
    parser.add_argument("--screen-tol", type=float, default=1e-2,
                        help="gradient tolerance of the screen (larger: more exact fits, same answer; 1.0 fits ~18,000)")
    args = parser.parse_args(argv)
    if not args.generate_expected:
        parser.print_help()
        return 2
    from pathlib import Path

    from repro.base.settings import checkout_dir

    table = None
    if args.exhaustive:
        cache = Path(args.cache) if args.cache else None
        if cache is not None and cache.is_file():
            table = np.load(cache)
        else:
            table = all_fits(args.workers)
            if cache is not None:
                np.save(cache, table)
    out = args.out or str(checkout_dir() / EXPECTED_PATH)
    doc = generate_expected(out, args.data_dir, table, args.screen_tol)
    h = doc["_header"]
    try:
        out = str(Path(out).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        pass
    print(f"wrote {out}: {len(doc['models'])} models, max relative error {h['max_relative_error']:.3g}, "
          f"without vector: {h['models_without_vector'] or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

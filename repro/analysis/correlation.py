"""Analysis: Spearman rank correlation with scipy's p-value and a 95% bootstrap interval.

Interval method: percentile bootstrap over models (resample the models with replacement,
recompute Spearman's rho), ``resamples`` >= 2000 draws from ``numpy.random.default_rng(seed)``
with a fixed seed, vectorised over resamples. Resamples in which one variable is constant
(rho undefined) are dropped; their number is kept in ``dropped``. ``resamples = 0`` asks for
no interval (a leave-one-out recomputation whose verdict does not read it): the interval is
(nan, nan) and the method says so.

Also here, for the robustness of a claim: ``spearman_leave_one_out`` (rho and p of every
leave-one-out subsample, exact and vectorised) and ``permutation_p`` (a permutation test of
Spearman's rho, ``scipy.stats.permutation_test``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

INTERVAL_METHOD = "percentile bootstrap over models"
NO_INTERVAL = "no interval (not computed)"
PERMUTATIONS = 10_000  # permutation tests: at least 10,000 resamples, fixed seed
PERMUTATION_SEED = 0


@dataclass(frozen=True)
class Correlation:
    """A Spearman correlation: rho, its p, the n it rests on and its interval with the method."""

    rho: float
    p: float
    n: int
    interval: tuple[float, float]
    method: str
    dropped: int = 0

    def as_json(self) -> dict[str, object]:
        return {"rho": self.rho, "p": self.p, "n": self.n, "interval": list(self.interval)}


def describe_interval(resamples: int, seed: int, confidence: float = 0.95) -> str:
    if resamples == 0:
        return NO_INTERVAL
    return f"{INTERVAL_METHOD} ({confidence:.0%}, {resamples} resamples, seed {seed})"


def _rowwise_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    num = (a * b).sum(axis=-1)
    den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def bootstrap_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n) model indices drawn with replacement.

    The same for every correlation of one seed.
    """
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def resampled_ranks(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``stats.rankdata(values[idx], axis=1)``: the average ranks within every resample.

    Counted, not sorted: a resample's ranks follow from how often it draws each distinct value
    (its rank among the distinct values is fixed), so no row is sorted. The same numbers as
    rankdata's (every rank is a whole or a half number, computed exactly both ways); a value
    that is NaN makes rankdata's own answer the one returned.
    """
    values = np.asarray(values, dtype=float)
    if not np.isfinite(values).all():
        return stats.rankdata(values[idx], axis=1)
    distinct, dense = np.unique(values, return_inverse=True)
    k = distinct.size
    drawn = dense.reshape(-1)[idx]  # (resamples, n): the distinct value each draw took
    counts = np.bincount(
        (np.arange(len(idx))[:, None] * k + drawn).ravel(), minlength=len(idx) * k
    ).reshape(len(idx), k)
    first = np.cumsum(counts, axis=1) - counts + 1.0  # the lowest rank each value takes
    average = first + (counts - 1) / 2
    return np.take_along_axis(average, drawn, axis=1)


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    ok = samples[np.isfinite(samples)]
    if ok.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(ok, [tail, 100 - tail])
    return float(lo), float(hi)


def spearman(
    x: np.ndarray, y: np.ndarray, *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> Correlation:
    """Spearman's rho of paired samples and its interval.

    rho and p are scipy's ``spearmanr`` (default two-sided p).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"spearman needs two 1-d arrays of equal length, got {x.shape} and {y.shape}"
        )
    if x.size < 3:
        raise ValueError(f"spearman needs at least 3 models, got {x.size}")
    res = stats.spearmanr(x, y)
    if resamples == 0:
        return Correlation(
            float(res.statistic),
            float(res.pvalue),
            int(x.size),
            (float("nan"), float("nan")),
            NO_INTERVAL,
        )
    idx = bootstrap_indices(x.size, resamples, seed)
    rx = resampled_ranks(x, idx)
    ry = resampled_ranks(y, idx)
    boot = _rowwise_pearson(rx, ry)
    dropped = int(np.count_nonzero(~np.isfinite(boot)))
    return Correlation(
        float(res.statistic),
        float(res.pvalue),
        int(x.size),
        percentile_interval(boot, confidence),
        describe_interval(resamples, seed, confidence),
        dropped,
    )


def spearman_matrix(data: np.ndarray) -> np.ndarray:
    """Spearman matrix of the columns of ``data`` (models x variables)."""
    ranks = stats.rankdata(data, axis=0)
    return np.corrcoef(ranks, rowvar=False)


def bootstrap_spearman_matrices(data: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples, k, k) Spearman matrices of ``data`` (n x k).

    One matrix per bootstrap resample of the rows.
    """
    n, _ = data.shape
    idx = bootstrap_indices(n, resamples, seed)
    ranks = stats.rankdata(data[idx], axis=1)  # (B, n, k)
    z = ranks - ranks.mean(axis=1, keepdims=True)
    sd = np.sqrt((z * z).sum(axis=1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = z / sd
    return np.einsum("bni,bnj->bij", z, z)


def spearman_p(rho: np.ndarray | float, n: np.ndarray | int) -> np.ndarray:
    """scipy ``spearmanr``'s two-sided p-value of ``rho`` over ``n`` pairs (t test, n - 2 df)."""
    rho = np.asarray(rho, dtype=float)
    dof = np.asarray(n, dtype=float) - 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = rho * np.sqrt((dof / ((rho + 1.0) * (1.0 - rho))).clip(0))
    return 2 * stats.t.sf(np.abs(t), dof)


def _leave_one_out_ranks(v: np.ndarray) -> np.ndarray:
    """(n, n) midranks of ``v`` without element i in row i (diagonal: 0).

    Dropping element i lowers the rank of every larger element by 1 and of every tied one by 1/2.
    """
    r = stats.rankdata(v)
    out = r[None, :] - (v[:, None] < v[None, :]) - 0.5 * (v[:, None] == v[None, :])
    np.fill_diagonal(out, 0.0)
    return out


def spearman_leave_one_out(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Spearman's rho and scipy's p of (x, y) without pair i, for every i.

    Exactly what ``scipy.stats.spearmanr(np.delete(x, i), np.delete(y, i))`` gives, vectorised
    (O(n^2) memory). A subsample in which one variable is constant gets rho = p = nan.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    n = x.size
    if x.shape != y.shape or x.ndim != 1 or n < 4:
        raise ValueError(
            f"spearman_leave_one_out needs two 1-d arrays of equal length >= 4, got {x.shape}, "
            f"{y.shape}"
        )
    centre = n / 2.0  # the mean midrank of n - 1 values
    rx = _leave_one_out_ranks(x) - centre
    ry = _leave_one_out_ranks(y) - centre
    np.fill_diagonal(rx, 0.0)
    np.fill_diagonal(ry, 0.0)
    num = (rx * ry).sum(axis=1)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    rho = np.clip(rho, -1.0, 1.0)
    return rho, np.where(np.isfinite(rho), spearman_p(rho, n - 1), np.nan)


def _rank_pearson(rx: np.ndarray, ry: np.ndarray, axis: int = -1) -> np.ndarray:
    rx = rx - rx.mean(axis=axis, keepdims=True)
    ry = ry - ry.mean(axis=axis, keepdims=True)
    return (rx * ry).sum(axis=axis) / np.sqrt((rx * rx).sum(axis=axis) * (ry * ry).sum(axis=axis))


def permutation_p(
    x: np.ndarray, y: np.ndarray, permutations: int = PERMUTATIONS, seed: int = PERMUTATION_SEED
) -> float:
    """Two-sided permutation p of Spearman's rho (``scipy.stats.permutation_test``).

    The pairings of x with y are permuted: exact over all n! pairings when n! <= ``permutations``,
    else ``permutations`` random pairings from ``numpy.random.default_rng(seed)``: each one-sided p
    is (k + 1) / (permutations + 1) and the two-sided p twice the smaller, so at least
    2 / (permutations + 1).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError(
            f"permutation_p needs two 1-d arrays of equal length >= 3, got {x.shape}, {y.shape}"
        )
    rx, ry = stats.rankdata(x), stats.rankdata(y)  # ranking commutes with permuting x
    if np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return float("nan")

    def statistic(a: np.ndarray, axis: int = -1) -> np.ndarray:
        return _rank_pearson(a, np.broadcast_to(ry, a.shape), axis=axis)

    res = stats.permutation_test(
        (rx,),
        statistic,
        permutation_type="pairings",
        vectorized=True,
        n_resamples=permutations,
        batch=1000,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(res.pvalue)

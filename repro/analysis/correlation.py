"""Analysis: Spearman rank correlation with scipy's p-value and a 95% bootstrap interval.

Interval method: percentile bootstrap over models (resample the models with replacement,
recompute Spearman's rho), ``resamples`` >= 2000 draws from ``numpy.random.default_rng(seed)``
with a fixed seed, vectorised over resamples. Resamples in which one variable is constant
(rho undefined) are dropped; their number is kept in ``dropped``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

INTERVAL_METHOD = "percentile bootstrap over models"


@dataclass(frozen=True)
class Correlation:
    rho: float
    p: float
    n: int
    interval: tuple[float, float]
    method: str
    dropped: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"rho": self.rho, "p": self.p, "n": self.n, "interval": list(self.interval)}


def describe_interval(resamples: int, seed: int, confidence: float = 0.95) -> str:
    return f"{INTERVAL_METHOD} ({confidence:.0%}, {resamples} resamples, seed {seed})"


def _rowwise_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    num = (a * b).sum(axis=-1)
    den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def bootstrap_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """(resamples, n) model indices drawn with replacement; the same for every correlation of one seed."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    ok = samples[np.isfinite(samples)]
    if ok.size == 0:
        return (float("nan"), float("nan"))
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(ok, [tail, 100 - tail])
    return float(lo), float(hi)


def spearman(x: np.ndarray, y: np.ndarray, *, resamples: int = 2000, seed: int = 0,
             confidence: float = 0.95) -> Correlation:
    """Spearman's rho of paired samples (scipy ``spearmanr``, default two-sided p) and its interval."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"spearman needs two 1-d arrays of equal length, got {x.shape} and {y.shape}")
    if x.size < 3:
        raise ValueError(f"spearman needs at least 3 models, got {x.size}")
    res = stats.spearmanr(x, y)
    idx = bootstrap_indices(x.size, resamples, seed)
    rx = stats.rankdata(x[idx], axis=1)
    ry = stats.rankdata(y[idx], axis=1)
    boot = _rowwise_pearson(rx, ry)
    dropped = int(np.count_nonzero(~np.isfinite(boot)))
    return Correlation(float(res.statistic), float(res.pvalue), int(x.size),
                       percentile_interval(boot, confidence), describe_interval(resamples, seed, confidence), dropped)


def spearman_matrix(data: np.ndarray) -> np.ndarray:
    """Spearman matrix of the columns of ``data`` (models x variables)."""
    ranks = stats.rankdata(data, axis=0)
    return np.corrcoef(ranks, rowvar=False)


def bootstrap_spearman_matrices(data: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples, k, k) Spearman matrices of ``data`` (n x k) over bootstrap resamples of the rows."""
    n, _ = data.shape
    idx = bootstrap_indices(n, resamples, seed)
    ranks = stats.rankdata(data[idx], axis=1)  # (B, n, k)
    z = ranks - ranks.mean(axis=1, keepdims=True)
    sd = np.sqrt((z * z).sum(axis=1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = z / sd
    return np.einsum("bni,bnj->bij", z, z)

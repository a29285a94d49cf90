"""Analysis: a monotone trend test (Kendall's tau) that keeps right-censored observations
instead of dropping them.

A censored observation is known only to lie at or above its censoring value ``c`` (e.g. a
critical-band fit that is undefined because the threshold profile is flat at its cap: the
channel is wider than the fit can resolve). Pairs are compared as Gehan (1965) compares
censored survival times: two exact values by their order; a censored value c_i against an
exact y_j is greater when y_j < c_i and undetermined otherwise; two censored values are
undetermined. S = sum over pairs of sign(x_i - x_j) * (that comparison); tau-b divides S by
sqrt((pairs - pairs tied in x) (pairs - pairs tied or undetermined in y)). Without censoring
this is exactly Kendall's tau-b (``scipy.stats.kendalltau``).

p-value: a permutation test of S (the (y, censored) pairs permuted together against x, which
is what "no trend" makes exchangeable): exact over all n! orders for n <= ``EXACT_N``, else
``resamples`` seeded random permutations, p = (1 + #{S* >= S}) / (resamples + 1) (one-sided
``greater``; ``two-sided`` compares |S|).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

RESAMPLES = 100_000
SEED = 0
EXACT_N = 8  # 8! = 40,320 orders


@dataclass(frozen=True)
class Trend:
    tau: float  # tau-b with the comparisons above
    s: int
    p: float
    n: int
    censored: int
    undetermined: int  # pairs whose y order is tied or unknown
    method: str

    def as_dict(self) -> dict[str, object]:
        return {"tau": self.tau, "s": self.s, "p": self.p, "n": self.n, "censored": self.censored,
                "undetermined_pairs": self.undetermined, "method": self.method}


def comparisons(y: np.ndarray, censored: np.ndarray) -> np.ndarray:
    """(n, n) antisymmetric matrix: +1 where y_i is known to exceed y_j, -1 the reverse, 0 tied
    or undetermined (``censored[i]``: y_i is a censoring value, the truth is >= y_i)."""
    y = np.asarray(y, dtype=float)
    c = np.asarray(censored, dtype=bool)
    greater = np.where(~c[:, None] & ~c[None, :], y[:, None] > y[None, :],
                       c[:, None] & ~c[None, :] & (y[None, :] < y[:, None]))
    return greater.astype(np.int8) - greater.T.astype(np.int8)


def _s_of(sx: np.ndarray, sy: np.ndarray, perms: np.ndarray) -> np.ndarray:
    i, j = np.triu_indices(sx.shape[0], k=1)
    return (sy[perms[:, i], perms[:, j]].astype(np.int64) * sx[i, j]).sum(axis=1)


def kendall_censored(x: np.ndarray, y: np.ndarray, censored: np.ndarray | None = None, *,
                     alternative: str = "greater", resamples: int = RESAMPLES, seed: int = SEED) -> Trend:
    """Kendall's tau-b of ``x`` and ``y`` with ``y[i]`` right-censored where ``censored[i]``
    (its value is then the censoring value; ``np.inf`` = above every exact value), and the
    permutation p-value (see the module docstring)."""
    if alternative not in ("greater", "two-sided"):
        raise ValueError(f"alternative must be 'greater' or 'two-sided', got {alternative!r}")
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    cens = np.zeros(len(y), dtype=bool) if censored is None else np.asarray(censored, dtype=bool)
    n = len(x)
    if not (len(y) == n == len(cens)) or n < 3:
        raise ValueError(f"need three or more (x, y, censored) triples of equal length, got {len(x)}, {len(y)}, {len(cens)}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not hold NaN (mark an unknown y as censored with its censoring value)")
    sx = np.sign(x[:, None] - x[None, :]).astype(np.int8)
    sy = comparisons(y, cens)
    i, j = np.triu_indices(n, k=1)
    pairs = len(i)
    s = int((sx[i, j].astype(np.int64) * sy[i, j]).sum())
    tied_x = int((sx[i, j] == 0).sum())
    undetermined = int((sy[i, j] == 0).sum())
    den = math.sqrt((pairs - tied_x) * (pairs - undetermined))
    tau = s / den if den > 0 else float("nan")
    if n <= EXACT_N:
        perms = np.array(list(itertools.permutations(range(n))), dtype=np.intp)
        method = f"exact permutation test over all {len(perms):,} orders"
        null = _s_of(sx, sy, perms)
        hits = (null >= s) if alternative == "greater" else (np.abs(null) >= abs(s))
        p = float(hits.mean())
    else:
        rng = np.random.default_rng(seed)
        perms = np.argsort(rng.random((resamples, n)), axis=1)
        method = f"permutation test, {resamples:,} random orders (seed {seed})"
        null = np.concatenate([_s_of(sx, sy, chunk) for chunk in np.array_split(perms, max(1, resamples // 20_000))])
        hits = (null >= s) if alternative == "greater" else (np.abs(null) >= abs(s))
        p = float((1 + hits.sum()) / (resamples + 1))
    method += f", {alternative}" + (f"; {int(cens.sum())} censored (Gehan comparisons)" if cens.any() else "")
    return Trend(float(tau), s, p, n, int(cens.sum()), undetermined, method)

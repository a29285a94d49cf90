"""Analysis: a monotone trend test (Kendall's tau) that keeps right-censored observations.

Censored observations are compared, not dropped. A censored observation is known only to lie at or
above its censoring value ``c`` (e.g. a critical-band fit that is undefined because the threshold
profile is flat at its cap: the channel is wider than the fit can resolve). Pairs are compared as
Gehan (1965) compares censored survival times: two exact values by their order; a censored value c_i
against an exact y_j is greater when y_j < c_i and undetermined otherwise; two censored values are
undetermined. S = sum over pairs of sign(x_i - x_j) * (that comparison); tau-b divides S by
sqrt((pairs - pairs tied in x) (pairs - pairs tied or undetermined in y)). Without censoring this is
exactly Kendall's tau-b (``scipy.stats.kendalltau``).

p-value: a permutation test of S (the (y, censored) pairs permuted together against x, which
is what "no trend" makes exchangeable): exact over all n! orders for n <= ``EXACT_N``, else
``resamples`` seeded random permutations, p = (1 + #{S* >= S}) / (resamples + 1) (one-sided
``greater``; ``two-sided`` compares |S|).

``kendall_censored_rows`` and ``permutation_p_rows``: the same tau and p for many redrawn y at
once against one x (a claim's replication, ``repro.analysis.redraws``), the p at a given
(possibly bias-moved) S.
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

    def as_json(self) -> dict[str, object]:
        return {
            "tau": self.tau,
            "s": self.s,
            "p": self.p,
            "n": self.n,
            "censored": self.censored,
            "undetermined_pairs": self.undetermined,
            "method": self.method,
        }


def comparisons(y: np.ndarray, censored: np.ndarray) -> np.ndarray:
    """(n, n) antisymmetric matrix of the known order of each pair of ``y``.

    +1 where y_i is known to exceed y_j, -1 the reverse, 0 tied or undetermined (``censored[i]``:
    y_i is a censoring value, the truth is >= y_i). The matrix form of ``_pair_comparisons``.
    """
    y = np.asarray(y, dtype=float)
    n = y.size
    i, j = np.triu_indices(n, k=1)
    upper = _pair_comparisons(y[None, :], np.asarray(censored, dtype=bool)[None, :], i, j)[0]
    out = np.zeros((n, n), dtype=np.int8)
    out[i, j] = upper
    out[j, i] = -upper
    return out


def kendall_censored(
    x: np.ndarray,
    y: np.ndarray,
    censored: np.ndarray | None = None,
    *,
    alternative: str = "greater",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Trend:
    """Kendall's tau-b of ``x`` and right-censored ``y``, and its permutation p-value.

    ``y[i]`` is right-censored where ``censored[i]`` (its value is then the censoring value;
    ``np.inf`` = above every exact value). The p-value: see the module docstring.
    """
    if alternative not in ("greater", "two-sided"):
        raise ValueError(f"alternative must be 'greater' or 'two-sided', got {alternative!r}")
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    cens = np.zeros(len(y), dtype=bool) if censored is None else np.asarray(censored, dtype=bool)
    n = len(x)
    if not (len(y) == n == len(cens)) or n < 3:
        raise ValueError(
            f"need three or more (x, y, censored) triples of equal length, got {len(x)}, {len(y)}, "
            f"{len(cens)}"
        )
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError(
            "x and y must not hold NaN (mark an unknown y as censored with its censoring value)"
        )
    i, j = np.triu_indices(n, k=1)
    sx = np.sign(x[i] - x[j]).astype(np.int8)
    sy = _pair_comparisons(y[None, :], cens[None, :], i, j)  # (1, pairs)
    pairs = len(i)
    s = int((sx.astype(np.int64) * sy[0]).sum())
    tied_x = int((sx == 0).sum())
    undetermined = int((sy[0] == 0).sum())
    den = math.sqrt((pairs - tied_x) * (pairs - undetermined))
    tau = s / den if den > 0 else float("nan")
    # the null of S over the orders: the one-row case of ``permutation_p_rows`` (same orders)
    p = float(_permutation_p(x, sy, np.array([s]), alternative, resamples, seed)[0])
    if n <= EXACT_N:
        method = f"exact permutation test over all {math.factorial(n):,} orders"
    else:
        method = f"permutation test, {resamples:,} random orders (seed {seed})"
    method += f", {alternative}" + (
        f"; {int(cens.sum())} censored (Gehan comparisons)" if cens.any() else ""
    )
    return Trend(float(tau), s, p, n, int(cens.sum()), undetermined, method)


# -- many y at once (the replication of a trend: the same x, redrawn y) ----------------------------


def kendall_censored_rows(
    x: np.ndarray, y: np.ndarray, censored: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tau, S, denominator) of ``kendall_censored`` for every row of ``y`` and ``censored``.

    ``y`` and ``censored`` are (B, n), against one ``x`` (n): the same comparisons, vectorised; tau
    NaN where the denominator is 0.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    cens = np.asarray(censored, dtype=bool)
    n = x.size
    i, j = np.triu_indices(n, k=1)
    sx = np.sign(x[i] - x[j])  # (pairs,)
    sy = _pair_comparisons(y, cens, i, j)  # (B, pairs)
    s = (sy * sx[None, :]).sum(axis=1).astype(np.int64)
    pairs = i.size
    tied_x = int((sx == 0).sum())
    undetermined = (sy == 0).sum(axis=1)
    den = np.sqrt((pairs - tied_x) * (pairs - undetermined).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(den > 0, s / np.where(den > 0, den, 1.0), np.nan)
    return tau, s, den


def _pair_comparisons(y: np.ndarray, cens: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """(B, pairs) of ``comparisons(y_b, censored_b)[i, j]`` for every row b."""
    yi, yj, ci, cj = y[:, i], y[:, j], cens[:, i], cens[:, j]
    gt = np.where(~ci & ~cj, yi > yj, ci & ~cj & (yj < yi))
    lt = np.where(~ci & ~cj, yj > yi, cj & ~ci & (yi < yj))
    return gt.astype(np.int8) - lt.astype(np.int8)


def permutation_p_rows(
    x: np.ndarray,
    y: np.ndarray,
    censored: np.ndarray,
    s: np.ndarray,
    *,
    alternative: str = "greater",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> np.ndarray:
    """The permutation p of ``kendall_censored`` for every row of ``y`` / ``censored``.

    Each at the statistic ``s`` of its row (its S, or a moved one: a bias-corrected replicate): the
    same orders (all n! for n <= ``EXACT_N``, else the same ``resamples`` seeded ones), so an
    unmoved S gives exactly ``kendall_censored``'s p. Rows with the same comparisons share one null
    distribution: S* = C @ comparisons, C the (orders x pairs) signs of x that each order puts on
    each pair.
    """
    if alternative not in ("greater", "two-sided"):
        raise ValueError(f"alternative must be 'greater' or 'two-sided', got {alternative!r}")
    x = np.asarray(x, dtype=float)
    if np.isnan(x).any():
        raise ValueError("x must not hold NaN")
    i, j = np.triu_indices(x.size, k=1)
    sy = _pair_comparisons(np.asarray(y, dtype=float), np.asarray(censored, dtype=bool), i, j)
    return _permutation_p(x, sy, s, alternative, resamples, seed)


def _permutation_p(
    x: np.ndarray, sy: np.ndarray, s: np.ndarray, alternative: str, resamples: int, seed: int
) -> np.ndarray:
    """``permutation_p_rows`` from the rows' (B, pairs) comparisons ``sy``."""
    n = x.size
    i, j = np.triu_indices(n, k=1)
    s = np.asarray(s, dtype=float)
    if n <= EXACT_N:
        perms = np.array(list(itertools.permutations(range(n))), dtype=np.intp)
    else:
        perms = np.argsort(np.random.default_rng(seed).random((resamples, n)), axis=1)
    # order r puts unit perms[r, k] at position k: the pair of units (a, b), a < b, sits at the
    # positions (inv[r, a], inv[r, b]) and carries the x-sign of those positions, the sign of
    # their x-ranks (small integers: the (pairs, orders) matrix stays small)
    inv = np.empty_like(perms)
    inv[np.arange(len(perms))[:, None], perms] = np.arange(n)
    rank = np.unique(x, return_inverse=True)[1].reshape(-1).astype(np.int16)
    at = rank[inv.T]  # (n, orders): the x-rank of each unit's position
    coef = np.sign(at[i] - at[j]).astype(np.float32)  # (pairs, orders)
    distinct, inverse = np.unique(sy, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    # the rows of each distinct comparison row, ascending: a stable sort by it, cut at its bounds
    by_row = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[by_row], np.arange(len(distinct) + 1))
    p = np.full(s.shape, np.nan)
    for start in range(0, len(distinct), 64):
        block = distinct[start : start + 64].astype(np.float32)
        null = block @ coef  # (block, orders): exact integers, a row per null distribution
        null = np.abs(null) if alternative == "two-sided" else null
        for d in range(block.shape[0]):
            mine = by_row[bounds[start + d] : bounds[start + d + 1]]
            target = np.abs(s[mine]) if alternative == "two-sided" else s[mine]
            ok = np.isfinite(target)
            # S* >= target - 1e-9 for an integer S*: S* >= ceil(target - 1e-9)
            floor = np.ceil(target[ok] - 1e-9)
            hits = np.count_nonzero(null[d][None, :] >= floor[:, None], axis=1)
            p[mine[ok]] = hits / len(perms) if n <= EXACT_N else (1 + hits) / (len(perms) + 1)
    return p

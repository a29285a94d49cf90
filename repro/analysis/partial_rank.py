"""Partial rank correlation: Spearman's rho of x and y with a third variable z held fixed.

It is the Pearson partial correlation of the midranks, with its two-sided p-value (t test, n - 3
df).
"""

from __future__ import annotations

import math

import numpy as np


def partial_spearman(x, y, z) -> tuple[float, float, int]:
    """(rho, p, n) of x and y given z, over the pairs where all three are finite."""
    from scipy import stats

    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    c = np.asarray(z, dtype=float)
    if not (a.shape == b.shape == c.shape) or a.ndim != 1:
        raise ValueError(
            f"partial_spearman needs three 1-d arrays of equal length, got {a.shape}, {b.shape}, "
            f"{c.shape}"
        )
    ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    n = int(ok.sum())
    if n < 4:
        raise ValueError(f"partial_spearman needs at least 4 complete triples, got {n}")
    r = np.corrcoef(np.vstack([stats.rankdata(v[ok]) for v in (a, b, c)]))
    rxy, rxz, ryz = r[0, 1], r[0, 2], r[1, 2]
    denom = math.sqrt(max(0.0, (1 - rxz**2) * (1 - ryz**2)))
    if denom == 0.0:
        return float("nan"), float("nan"), n
    rho = float(np.clip((rxy - rxz * ryz) / denom, -1.0, 1.0))
    dof = n - 3
    if abs(rho) == 1.0:
        return rho, 0.0, n
    t = rho * math.sqrt(dof / (1 - rho**2))
    return rho, float(2 * stats.t.sf(abs(t), dof)), n

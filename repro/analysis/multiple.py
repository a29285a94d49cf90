"""Analysis: adjusted p-values for a family of tests (multiple comparisons).

One shared implementation for every study.

- ``holm``: Holm-Bonferroni step-down, controls the family-wise error rate under any
  dependence between the tests. scipy has no Holm, so it is written here in closed form:
  with p sorted ascending, p_(i) adjusted = max_{j <= i} min(1, (m - j + 1) p_(j)).
- ``benjamini_hochberg``: the false discovery rate (``scipy.stats.false_discovery_control``,
  method ``bh``); valid for independent or positively dependent tests (as the overlapping
  groups of a bias x category table are expected to be).

Both return adjusted p-values in the order given; a test survives the correction at level
alpha when its adjusted p is below alpha.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

METHODS = ("holm", "bh")


def _check(pvalues: Sequence[float] | np.ndarray) -> np.ndarray:
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"adjusted p-values need a 1-d list of p-values, got shape {p.shape}")
    if p.size and (not np.isfinite(p).all() or (p < 0).any() or (p > 1).any()):
        raise ValueError("adjusted p-values need p-values in [0, 1] (no NaN)")
    return p


def holm(pvalues: Sequence[float] | np.ndarray) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given."""
    p = _check(pvalues)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adj = np.empty(m)
    adj[order] = np.maximum.accumulate(scaled)
    return adj.tolist()


def benjamini_hochberg(pvalues: Sequence[float] | np.ndarray) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (scipy), in the order given."""
    from scipy import stats

    p = _check(pvalues)
    if p.size == 0:
        return []
    return np.asarray(stats.false_discovery_control(p, method="bh"), dtype=float).tolist()


def adjust(pvalues: Sequence[float] | np.ndarray, method: str) -> list[float]:
    """Adjusted p-values by ``method`` (``holm`` or ``bh``)."""
    if method == "holm":
        return holm(pvalues)
    if method == "bh":
        return benjamini_hochberg(pvalues)
    raise ValueError(f"unknown p-value adjustment {method!r} (known: {', '.join(METHODS)})")

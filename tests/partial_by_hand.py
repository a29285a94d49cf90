"""The partial Spearman correlation computed the long way, for the tests of
``repro.analysis.partial_rank``: the Pearson correlation of the residuals of rank(x) and rank(y)
after a least-squares fit on rank(z), with its t-test on n - 3 degrees of freedom."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def direct_partial(x, y, z):
    """Pearson correlation of the residuals of rank(x) and rank(y) on rank(z)."""
    rx, ry, rz = (stats.rankdata(v) for v in (x, y, z))
    design = np.column_stack([np.ones_like(rz), rz])
    res = [r - design @ np.linalg.lstsq(design, r, rcond=None)[0] for r in (rx, ry)]
    rho = float(np.corrcoef(*res)[0, 1])
    n = len(x)
    t = rho * math.sqrt((n - 3) / (1 - rho**2))
    return rho, float(2 * stats.t.sf(abs(t), n - 3))

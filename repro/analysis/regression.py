"""Analysis: ordinary least squares with an intercept, and the variance its predictors explain.

The share of variance explained is R^2, with the overall F-test of the model against the intercept
alone.

"Variance explained" here is in-sample: the R^2 of the model fitted to the same models it is
reported on (it can only grow with more predictors; ``adjusted_r2`` corrects for their number).
Undefined (NaN) where the fit is not determined: fewer models than parameters plus one, a
predictor matrix of deficient rank (e.g. a constant predictor), or a constant outcome.
``weighted_r_squared`` gives the same R^2 on cluster-bootstrap resamples (integer weights per
model, ``repro.analysis.clustered``), for a claim whose models are a sample; ``ols_rows`` the
R^2 and F-test p of many redrawn tables at once (a claim's replication, ``repro.analysis.redraws``),
each over the units defined in its redraw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NAN = float("nan")


@dataclass(frozen=True)
class LinearFit:
    """OLS of y on the predictors with an intercept: ``coef`` = (intercept, b_1, ..., b_p)."""

    r2: float
    adjusted_r2: float
    f: float
    p: float  # of the overall F-test (H0: every slope is 0)
    n: int
    predictors: tuple[str, ...]
    coef: tuple[float, ...]

    @property
    def df(self) -> tuple[int, int]:
        k = len(self.predictors)
        return k, self.n - k - 1

    def as_json(self) -> dict[str, object]:
        return {
            "r2": self.r2,
            "adjusted_r2": self.adjusted_r2,
            "f": self.f,
            "p": self.p,
            "n": self.n,
            "df": list(self.df),
            "predictors": list(self.predictors),
            "coef": dict(zip(("intercept", *self.predictors), self.coef, strict=True)),
        }


def _design(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    return np.column_stack([np.ones(len(x)), x])


def r_squared(x: np.ndarray, y: np.ndarray) -> float:
    """R^2 of OLS of ``y`` on the columns of ``x`` plus an intercept (NaN where undefined)."""
    design = _design(x)
    y = np.asarray(y, dtype=float)
    n, k = design.shape
    if n <= k or np.ptp(y) == 0 or np.linalg.matrix_rank(design) < k:
        return NAN
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    total = y - y.mean()
    return float(1.0 - (resid @ resid) / (total @ total))


def weighted_r_squared(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``r_squared`` per row of integer weights ``w`` (B, n), vectorised over the rows.

    The R^2 of OLS on the sample with unit i repeated w[b, i] times (a cluster-bootstrap resample,
    ``repro.analysis.clustered``); NaN where that sample's fit is undefined (as ``r_squared``).
    """
    design = _design(x)
    y = np.asarray(y, dtype=float)
    w = np.atleast_2d(np.asarray(w, dtype=float))
    k = design.shape[1]
    sw = (
        np.sqrt(w)[:, :, None] * design[None, :, :]
    )  # (B, n, k): rows of the expanded design, scaled
    rank = np.linalg.matrix_rank(sw)
    gram = np.einsum("bi,ij,ik->bjk", w, design, design)
    rhs = np.einsum("bi,ij,i->bj", w, design, y)
    ok = (rank == k) & (w.sum(axis=1) > k)
    coef = np.zeros((w.shape[0], k))
    coef[ok] = np.linalg.solve(gram[ok], rhs[ok][:, :, None])[:, :, 0]
    resid = y[None, :] - coef @ design.T
    total = w.sum(axis=1)
    mean = (w * y[None, :]).sum(axis=1) / np.where(total > 0, total, 1.0)
    sst = (w * (y[None, :] - mean[:, None]) ** 2).sum(axis=1)
    ok &= sst > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = 1.0 - (w * resid**2).sum(axis=1) / np.where(sst > 0, sst, 1.0)
    return np.where(ok, r2, np.nan)


def ols(x: np.ndarray, y: np.ndarray, predictors: Sequence[str] | None = None) -> LinearFit:
    """The fit, R^2, adjusted R^2 and the overall F-test (``scipy.stats.f`` survival function)."""
    from scipy import stats

    design = _design(x)
    y = np.asarray(y, dtype=float)
    n, k = design.shape
    names = (
        tuple(predictors) if predictors is not None else tuple(f"x{i + 1}" for i in range(k - 1))
    )
    if len(names) != k - 1:
        raise ValueError(f"{len(names)} predictor names for {k - 1} predictors")
    r2 = r_squared(design[:, 1:], y)
    if np.isnan(r2):
        return LinearFit(NAN, NAN, NAN, NAN, n, names, (NAN,) * k)
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    df_model, df_resid = k - 1, n - k
    adjusted = 1.0 - (1.0 - r2) * (n - 1) / df_resid
    f = (r2 / df_model) / ((1.0 - r2) / df_resid) if r2 < 1 else float("inf")
    p = float(stats.f.sf(f, df_model, df_resid)) if np.isfinite(f) else 0.0
    return LinearFit(r2, float(adjusted), float(f), p, n, names, tuple(float(c) for c in coef))


def ols_rows(
    x: np.ndarray, y: np.ndarray, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R^2, n, F-test p) of ``ols`` for every row of predictors ``x`` and outcomes ``y``.

    ``x`` is (B, n, p) and ``y`` (B, n); each row is fitted over the units where ``mask`` (B, n)
    holds (a replication: redrawn values and which units are defined in each redraw), vectorised (QR
    of the masked designs). Undefined (NaN) as ``ols``: no more units than parameters, a
    rank-deficient design, a constant outcome.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    m = np.asarray(mask, dtype=bool) & np.isfinite(y) & np.isfinite(x).all(axis=2)
    w = m.astype(float)
    design = (
        np.concatenate([np.ones((*y.shape, 1)), np.where(m[..., None], x, 0.0)], axis=2)
        * w[..., None]
    )
    yw = np.where(m, y, 0.0)
    k = design.shape[2]
    count = m.sum(axis=1)
    rank = np.linalg.matrix_rank(design)
    mean = yw.sum(axis=1) / np.maximum(count, 1)
    sst = (w * (yw - mean[:, None]) ** 2).sum(axis=1)
    constant = ~(np.where(m, y, -np.inf).max(axis=1) > np.where(m, y, np.inf).min(axis=1))
    ok = (count > k) & (rank == k) & ~constant
    r2 = np.full(y.shape[0], np.nan)
    if ok.any():
        q, r = np.linalg.qr(design[ok])
        coef = np.linalg.solve(r, np.einsum("bnk,bn->bk", q, yw[ok])[..., None])[..., 0]
        resid = (yw[ok] - np.einsum("bnk,bk->bn", design[ok], coef)) * w[ok]
        r2[ok] = 1.0 - (resid * resid).sum(axis=1) / sst[ok]
    p = f_test_p(r2, count, k - 1)
    return r2, count, p


def f_test_p(r2: np.ndarray, n: np.ndarray, predictors: int) -> np.ndarray:
    """The overall F-test's p of an R^2 over n units with ``predictors`` slopes.

    As ``ols``: 0 where R^2 = 1, NaN where R^2 is.
    """
    from scipy import stats

    r2 = np.asarray(r2, dtype=float)
    df_resid = np.asarray(n, dtype=float) - predictors - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(r2 < 1, (r2 / predictors) / ((1.0 - r2) / df_resid), np.inf)
        p = np.where(np.isfinite(f), stats.f.sf(f, predictors, np.maximum(df_resid, 1)), 0.0)
    return np.where(np.isfinite(r2) & (df_resid > 0), p, np.nan)

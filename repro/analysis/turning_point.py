"""Analysis: tests of an inverted U.

A negative quadratic coefficient whose F-test beats the linear fit says the relation bends; it is an
inverted U only if the slope changes sign INSIDE the data. Two tests of that:

- ``u_test``: Lind & Mehlum (2010, Oxford Bulletin of Economics and Statistics 72: 109-118).
  Least squares y = b0 + b1 x + b2 x^2; the slope s(x) = b1 + 2 b2 x must be positive at the
  low end of the data and negative at the high end. Each end's one-sided t statistic
  s / se(s) (se^2 = var b1 + 4 x cov(b1, b2) + 4 x^2 var b2, n - 3 df); the test's statistic is
  the smaller of t(x_low) and -t(x_high), its p the one-sided t p of that (intersection-union:
  both must hold). The extreme point (vertex) x* = -b1 / (2 b2), with its Fieller interval:
  the x where s(x) = 0 is not rejected at two-sided level alpha (bounded when b2 differs from 0
  at that level, else unbounded).
- ``two_lines``: Simonsohn (2018, Advances in Methods and Practices in Psychological Science 1:
  538-555): two regression lines joined at a breakpoint x_c (interrupted regression y = a +
  b_low (x - x_c) [x < x_c] + b_high (x - x_c) [x >= x_c] + c [x >= x_c]); an inverted U when
  b_low > 0 and b_high < 0, each significant (two-sided p < alpha). No quadratic is assumed.
  The breakpoint is the caller's (``repro.studies``: the observed peak); Simonsohn's
  Robin Hood search for it is not implemented.

Both use ordinary least squares with the classical covariance (numpy only, scipy's t).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats


def _ols(design: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Coefficients, their classical covariance s^2 (X'X)^-1, and the residual df."""
    n, k = design.shape
    if n <= k:
        raise ValueError(f"least squares with {k} coefficients needs more than {k} points, got {n}")
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    df = n - k
    s2 = float(resid @ resid) / df
    return coef, s2 * np.linalg.inv(design.T @ design), df


@dataclass(frozen=True)
class UTest:
    """Lind & Mehlum's U test of an inverted U on [x_low, x_high]."""

    b1: float
    b2: float
    x_low: float
    x_high: float
    slope_low: float
    slope_high: float
    t_low: float  # slope / se at x_low (positive for an inverted U)
    t_high: float  # slope / se at x_high (negative for an inverted U)
    t: float  # min(t_low, -t_high)
    p: float  # one-sided t p of t, n - 3 df
    df: int
    vertex: float  # -b1 / (2 b2), NaN when b2 = 0
    vertex_interval: tuple[float, float]  # Fieller, (-inf, inf) when unbounded
    alpha: float
    inside: bool  # the vertex lies within [x_low, x_high]

    @property
    def inverted_u(self) -> bool:
        """The slope is significantly positive at the low end and negative at the high end."""
        return self.p < self.alpha and self.t_low > 0 and self.t_high < 0

    def text(self) -> str:
        lo, hi = self.vertex_interval
        fieller = (
            f"[{lo:.3f}, {hi:.3f}]" if math.isfinite(lo) and math.isfinite(hi) else "unbounded"
        )
        return (
            f"U test (Lind-Mehlum): slope {self.slope_low:+.4g} at x = {self.x_low:.3f} (t "
            f"{self.t_low:+.2f}), {self.slope_high:+.4g} at x = {self.x_high:.3f} (t "
            f"{self.t_high:+.2f}); p = {self.p:.2g}; vertex {self.vertex:.3f}, "
            f"{1 - self.alpha:.0%} Fieller interval {fieller}: "
            + ("inverted U" if self.inverted_u else "no inverted U shown")
            + f" at {self.alpha:g}"
        )

    def as_json(self) -> dict[str, object]:
        out = asdict(self)
        out["vertex_interval"] = [None if not math.isfinite(v) else v for v in self.vertex_interval]
        out["inverted_u"] = self.inverted_u
        return out


def vertex_of(b1: float, b2: float) -> float:
    """The extreme point -b1 / (2 b2) of y = b0 + b1 x + b2 x^2; NaN without curvature (b2 = 0)."""
    return -b1 / (2.0 * b2) if b2 != 0 else math.nan


def fieller_interval(
    b1: float, b2: float, v11: float, v12: float, v22: float, tcrit: float
) -> tuple[float, float]:
    """The Fieller interval of the vertex -b1 / (2 b2).

    The x with (b1 + 2 b2 x)^2 <= tcrit^2 (v11 + 4 x v12 + 4 x^2 v22); (-inf, inf) when it is not a
    bounded interval (b2 not significant).
    """
    t2 = tcrit * tcrit
    a = 4.0 * (b2 * b2 - t2 * v22)
    b = 4.0 * (b1 * b2 - t2 * v12)
    c = b1 * b1 - t2 * v11
    disc = b * b - 4.0 * a * c
    if a <= 0 or disc < 0:
        return (-math.inf, math.inf)
    root = math.sqrt(disc)
    return ((-b - root) / (2.0 * a), (-b + root) / (2.0 * a))


def u_test(
    x: np.ndarray,
    y: np.ndarray,
    *,
    alpha: float = 0.05,
    x_low: float | None = None,
    x_high: float | None = None,
) -> UTest:
    """Lind & Mehlum's test of an inverted U of y on x over [x_low, x_high].

    [x_low, x_high] defaults to the data's range.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"u_test needs two 1-d arrays of equal length, got {x.shape} and {y.shape}"
        )
    if np.unique(x).size < 3:
        raise ValueError("u_test needs at least 3 distinct x values")
    coef, cov, df = _ols(np.column_stack([np.ones_like(x), x, x * x]), y)
    b1, b2 = float(coef[1]), float(coef[2])
    v11, v12, v22 = float(cov[1, 1]), float(cov[1, 2]), float(cov[2, 2])
    lo = float(x.min()) if x_low is None else float(x_low)
    hi = float(x.max()) if x_high is None else float(x_high)

    def slope_t(at: float) -> tuple[float, float]:
        s = b1 + 2.0 * b2 * at
        return s, s / math.sqrt(v11 + 4.0 * at * v12 + 4.0 * at * at * v22)

    s_lo, t_lo = slope_t(lo)
    s_hi, t_hi = slope_t(hi)
    t = min(t_lo, -t_hi)
    p = float(stats.t.sf(t, df))
    vertex = vertex_of(b1, b2)
    tcrit = float(stats.t.ppf(1.0 - alpha / 2.0, df))
    interval = fieller_interval(b1, b2, v11, v12, v22, tcrit)
    return UTest(
        b1,
        b2,
        lo,
        hi,
        s_lo,
        s_hi,
        t_lo,
        t_hi,
        t,
        p,
        df,
        vertex,
        interval,
        alpha,
        bool(math.isfinite(vertex) and lo <= vertex <= hi),
    )


@dataclass(frozen=True)
class TwoLines:
    """Simonsohn's two-lines test at ``breakpoint``."""

    breakpoint: float
    n_low: int  # points below the breakpoint
    n_high: int  # points at or above it
    slope_low: float
    slope_high: float
    p_low: float  # two-sided
    p_high: float
    df: int
    alpha: float

    @property
    def inverted_u(self) -> bool:
        return (
            self.slope_low > 0
            and self.slope_high < 0
            and self.p_low < self.alpha
            and self.p_high < self.alpha
        )

    def text(self) -> str:
        return (
            f"two lines (Simonsohn) at x = {self.breakpoint:.3f}: slope {self.slope_low:+.4g} over "
            f"{self.n_low} points below (p = {self.p_low:.2g}), {self.slope_high:+.4g} over "
            f"{self.n_high} at or above (p = {self.p_high:.2g}): "
            + ("inverted U" if self.inverted_u else "no inverted U shown")
            + f" at {self.alpha:g}"
        )

    def as_json(self) -> dict[str, object]:
        return asdict(self) | {"inverted_u": self.inverted_u}


def two_lines(x: np.ndarray, y: np.ndarray, breakpoint: float, *, alpha: float = 0.05) -> TwoLines:
    """The interrupted regression of y on x at ``breakpoint`` (see the module docstring)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    high = x >= breakpoint
    n_low, n_high = int((~high).sum()), int(high.sum())
    if n_low < 2 or n_high < 2:
        raise ValueError(
            f"two_lines: breakpoint {breakpoint:g} leaves {n_low} point(s) below and {n_high} at "
            "or above it; each line needs at least 2"
        )
    d = x - breakpoint
    design = np.column_stack(
        [np.ones_like(x), np.where(high, 0.0, d), np.where(high, d, 0.0), high.astype(float)]
    )
    coef, cov, df = _ols(design, y)
    t_low = coef[1] / math.sqrt(cov[1, 1])
    t_high = coef[2] / math.sqrt(cov[2, 2])
    return TwoLines(
        float(breakpoint),
        n_low,
        n_high,
        float(coef[1]),
        float(coef[2]),
        float(2 * stats.t.sf(abs(t_low), df)),
        float(2 * stats.t.sf(abs(t_high), df)),
        df,
        alpha,
    )

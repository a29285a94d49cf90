"""Placement: a model's residual against a study's fit of a category on a bias.

The fit is a least-squares polynomial over the population, with the 95% prediction band at the
model's bias (the band a new member of the population would fall in: t quantile with
n - degree - 1 degrees of freedom, ``s^2 (1 + x0' (X'X)^-1 x0)``), and the residual over the
ends of the model's own intervals (its bias and category values). Pure NumPy/SciPy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Residual:
    x: float
    y: float
    predicted: float
    residual: float  # y - predicted
    band: float  # half-width of the 95% prediction band at x
    n: int
    over_intervals: tuple[float, float] | None = (
        None  # smallest and largest residual over the intervals' ends
    )

    @property
    def inside_band(self) -> bool:
        return abs(self.residual) <= self.band


def residual(
    xs: np.ndarray,
    ys: np.ndarray,
    x: float,
    y: float,
    *,
    degree: int = 1,
    x_interval: tuple[float, float] | None = None,
    y_interval: tuple[float, float] | None = None,
) -> Residual:
    """The residual of (x, y) against a least-squares polynomial of ``ys`` on ``xs``.

    The polynomial has degree ``degree``. ValueError with fewer than degree + 2 points (no
    residual variance)."""
    from scipy.stats import t as student_t

    xs, ys = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    n, p = len(xs), degree + 1
    if n < p + 1:
        raise ValueError(f"a degree-{degree} fit needs at least {p + 1} models, got {n}")
    X = np.vander(xs, p)
    coef, *_ = np.linalg.lstsq(X, ys, rcond=None)
    rss = float(np.sum((ys - X @ coef) ** 2))
    s2 = rss / (n - p)
    x0 = np.vander(np.array([x]), p)[0]
    lev = float(x0 @ np.linalg.pinv(X.T @ X) @ x0)
    band = float(student_t.ppf(0.5 + CONFIDENCE / 2, n - p) * np.sqrt(s2 * (1 + lev)))
    pred = float(np.polyval(coef, x))
    over = None
    if x_interval is not None or y_interval is not None:
        xe = x_interval if x_interval is not None else (x, x)
        ye = y_interval if y_interval is not None else (y, y)
        ends = [yy - float(np.polyval(coef, xx)) for xx in xe for yy in ye]
        if degree > 1:  # a curve may turn inside the interval: check it densely
            grid = np.linspace(xe[0], xe[1], 101)
            ends += [yy - float(v) for v in np.polyval(coef, grid) for yy in ye]
        over = (min(ends), max(ends))
    return Residual(
        x,
        y,
        pred,
        y - pred,
        band,
        n,
        over,
    )

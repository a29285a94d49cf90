"""Analysis: equivalence tests (two one-sided tests, TOST).

THE one implementation that null claims ("no correlation": Spearman's rho within a margin of 0) and
per-model agreement ("our value within an implementation margin of the published one") share.

An equivalence test at level ``alpha`` passes when the (1 - 2 alpha) confidence interval of the
estimate lies inside ``[-margin, +margin]`` around the null value (Schuirmann 1987: the interval
inclusion rule equals the two one-sided tests). Its ``bound`` is the smallest margin that would
pass: ``max(|lo|, |hi|)`` of that interval. Absence of significance is never equivalence: a
wide interval gives a large bound, whatever the p-value of the ordinary test.

Spearman's rho (``spearman_equivalence``): Fisher's z = atanh(rho) with the Bonett & Wright
(2000) variance (1 + rho^2 / 2) / (n - 3) for Spearman's coefficient, back-transformed with tanh.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.special import ndtr, ndtri  # the normal cdf and its inverse: scipy.stats.norm's own


@dataclass(frozen=True)
class EquivalenceResult:
    """The outcome of an equivalence test.

    passed: the (1 - 2 alpha) interval lies inside [null - margin, null + margin]; bound: the
    smallest margin that passes (NaN when undefined); p: the TOST p-value (the larger of the two
    one-sided p, NaN when not defined); defined: False when the interval could not be formed (n too
    small, NaN estimate), with ``why``.
    """

    estimate: float
    interval: tuple[float, float]
    margin: float
    alpha: float
    bound: float
    passed: bool
    p: float = math.nan
    method: str = ""
    defined: bool = True
    why: str = ""

    def as_json(self) -> dict[str, object]:
        nan = lambda v: None if isinstance(v, float) and math.isnan(v) else v  # noqa: E731
        return {
            "estimate": nan(self.estimate),
            "interval": [nan(v) for v in self.interval],
            "margin": self.margin,
            "alpha": self.alpha,
            "bound": nan(self.bound),
            "passed": self.passed,
            "p": nan(self.p),
            "method": self.method,
            "defined": self.defined,
            "why": self.why,
        }


def _undefined(
    estimate: float, margin: float, alpha: float, method: str, why: str
) -> EquivalenceResult:
    nan = math.nan
    return EquivalenceResult(
        estimate, (nan, nan), margin, alpha, nan, False, nan, method, False, why
    )


def interval_equivalence(
    estimate: float,
    interval: tuple[float, float],
    margin: float,
    *,
    alpha: float = 0.05,
    null: float = 0.0,
    method: str = "interval inclusion",
) -> EquivalenceResult:
    """Equivalence of ``estimate`` to ``null`` within ``margin``, from a confidence interval.

    The interval is the caller's (1 - 2 alpha) ``interval`` (e.g. a paired-difference interval). No
    p-value (the interval alone decides).
    """
    if margin < 0 or not math.isfinite(margin):
        raise ValueError(f"equivalence margin must be a finite number >= 0, got {margin!r}")
    lo, hi = float(interval[0]), float(interval[1])
    if any(math.isnan(v) for v in (estimate, lo, hi)):
        return _undefined(
            estimate, margin, alpha, method, "the estimate or its interval is undefined (NaN)"
        )
    if lo > hi:
        raise ValueError(f"interval [{lo}, {hi}] has its low end above its high end")
    bound = max(abs(lo - null), abs(hi - null))
    return EquivalenceResult(
        estimate, (lo, hi), margin, alpha, bound, bound <= margin, math.nan, method
    )


def fisher_z_se(rho: float, n: int) -> float:
    """Bonett & Wright's standard error of atanh(rho) for Spearman's rho from n pairs."""
    return math.sqrt((1.0 + rho * rho / 2.0) / (n - 3))


def spearman_interval(rho: float, n: int, confidence: float) -> tuple[float, float]:
    """Two-sided ``confidence`` interval of Spearman's rho (Fisher z, Bonett-Wright variance)."""
    if n <= 3:
        raise ValueError(f"a Fisher-z interval needs n > 3 pairs, got n = {n}")
    if abs(rho) >= 1.0:
        return (float(rho), float(rho))  # degenerate: atanh is infinite; the caller says so
    z, se = math.atanh(rho), fisher_z_se(rho, n)
    q = float(ndtri(0.5 + confidence / 2.0))
    return (math.tanh(z - q * se), math.tanh(z + q * se))


def spearman_equivalence(
    rho: float, n: int, margin: float, *, alpha: float = 0.05
) -> EquivalenceResult:
    """TOST of Spearman's rho against 0 within ``margin``, at level ``alpha``.

    |rho| < margin counts as "no correlation": the (1 - 2 alpha) Fisher-z interval with the
    Bonett-Wright variance inside (-margin, margin). Undefined for n <= 3, a NaN rho, or |rho| = 1
    (the transform is infinite: a perfect rank correlation is never equivalent to 0).
    """
    method = "TOST on Fisher z, Bonett-Wright variance"
    if not 0 < margin < 1:
        raise ValueError(f"a margin for Spearman's rho must lie in (0, 1), got {margin!r}")
    if math.isnan(rho):
        return _undefined(rho, margin, alpha, method, "rho is undefined (NaN)")
    if n <= 3:
        return _undefined(
            rho, margin, alpha, method, f"n = {n} pairs: a Fisher-z interval needs n > 3"
        )
    if abs(rho) >= 1.0:
        return EquivalenceResult(
            rho,
            (rho, rho),
            margin,
            alpha,
            abs(rho),
            False,
            1.0,
            method,
            True,
            "|rho| = 1: perfectly rank-correlated, never equivalent to 0",
        )
    lo, hi = spearman_interval(rho, n, 1.0 - 2.0 * alpha)
    z, se, zm = math.atanh(rho), fisher_z_se(rho, n), math.atanh(margin)
    p_low = float(ndtr(-(z + zm) / se))  # H0: rho <= -margin
    p_high = float(ndtr((z - zm) / se))  # H0: rho >= +margin
    bound = max(abs(lo), abs(hi))
    return EquivalenceResult(
        rho, (lo, hi), margin, alpha, bound, bound < margin, max(p_low, p_high), method
    )


def smallest_spearman_bound(n: int, *, alpha: float = 0.05) -> float:
    """The smallest equivalence bound any rho can reach with n pairs (the bound at rho = 0).

    It is tanh(z_(1 - alpha) / sqrt(n - 3)). A margin below it can never pass, whatever the data.
    """
    if n <= 3:
        return math.nan
    return math.tanh(float(ndtri(1.0 - alpha)) / math.sqrt(n - 3))

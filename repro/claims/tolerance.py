"""Claims: tolerance policies, by name.

Each takes the claim's published value, the recomputed ``StatisticResult`` and the policy's
parameters, and returns a ``Check`` (passed + why).

- ``rounding``: |value - published| <= 0.5 * 10^-decimals (the published value's rounding;
  -0.76 -> +-0.005). ``also`` checks named details the same way.
- ``sign_significance``: every listed detail cell (or the headline) has the stated sign and
  p < alpha; ``"value"`` among the cells names the headline. ``signs = {cell = "+" | "-"}``
  instead of ``sign`` and ``cells``: a sign per cell (a finding with cells of opposite signs).
- ``null_all``: every detail cell has p >= alpha (no correlation anywhere).
- ``binomial``: |value - published| <= z * sqrt(p (1 - p) / n), for a rate from n trials (the
  claim's n before the result's); for a count of n, the same interval in counts.
- ``exact_details``: named details equal given values (``equal = {detail = value}``), e.g.
  which benchmark ranks first: the qualitative content of a ranking claim.
- ``correlation_interval``: for recomputations from measured inputs: the published statistic
  lies inside our 95% interval, with the same sign, and (``significant``, default true) our
  p < alpha like the published one.
- ``null_equivalent``: every detail cell's Spearman rho is equivalent to 0 within ``margin``
  (TOST on Fisher's z at ``alpha``, default 0.05, each cell; ``repro.analysis.equivalence``): a
  null shown, the finding of a null claim with a declared ``[claim.equivalence]``
  (``repro.diagnostics.strength``).
- ``within_range``: the value (or the detail ``of``) lies in [``low``, ``high``] (either may be
  left out: unbounded), for a claim that states a range ("2-4 times wider") or a bound ("more
  than twice"). ``decimals``: the bounds are printed numbers, each standing for its rounding
  interval (half a unit in the last printed digit; "4" with decimals 0 reaches 4.5).

Undefined is never passed: a NaN in anything a policy reads (the value, a p or rho of a cell it
checks, a detail it compares, the interval of ``correlation_interval``) gives a ``Check`` with
status ``undefined`` (``repro.claims.verdict``), naming what is undefined. A NaN nowhere read
(e.g. the interval of a leave-one-out recomputation made without one) does not matter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from repro.analysis.equivalence import EquivalenceResult, spearman_equivalence
from repro.analysis.result import StatisticResult
from repro.base.errors import ConfigError
from repro.base.registry import Registry
from repro.claims.verdict import UNDEFINED


@dataclass(frozen=True)
class Check:
    """A policy's answer: passed, why, and ``status`` when no comparison could be made.

    ``status``: ``undefined`` or ``incomplete`` (see ``repro.claims.verdict.verdict_of``)."""

    passed: bool
    why: str
    status: str | None = None


def is_nan(v: Any) -> bool:
    """True for a float NaN (numpy scalars included); False for None, strings, containers."""
    if not isinstance(v, (int, float)) and not hasattr(v, "dtype"):
        return False  # None, a string, a container (a bool is an int: never NaN)
    try:
        return math.isnan(float(v))
    except (TypeError, ValueError):
        return False


def undefined(what: list[str]) -> Check:
    """The check of a policy that read NaN: undefined, naming what."""
    return Check(False, "undefined (NaN): " + ", ".join(what), UNDEFINED)


Policy = Callable[[float | None, StatisticResult, dict[str, Any]], Check]


def rounding_halfwidth(decimals: int) -> float:
    """Half a unit in the last published digit, with a little room for binary floating point."""
    return 0.5 * 10.0 ** (-decimals) * (1 + 1e-9)


def _detail_value(result: StatisticResult, name: str) -> float:
    try:
        d = result.details[name]
    except KeyError:
        raise ConfigError(
            f"tolerance refers to detail {name!r}, which the statistic does not report "
            f"(has: {', '.join(result.details)})"
        ) from None
    if isinstance(d, dict):
        for key in ("value", "rho"):
            if key in d:
                return float(d[key])
        raise ConfigError(f"detail {name!r} has no 'value' or 'rho'")
    return float(d)


def rounding(published: float | None, result: StatisticResult, params: dict[str, Any]) -> Check:
    if published is None:
        raise ConfigError("policy 'rounding' needs a published value")
    decimals = int(params["decimals"])
    half = rounding_halfwidth(decimals)
    parts, ok = [], True
    compared = [("value", published, result.value)] + [
        (k, float(v), _detail_value(result, k)) for k, v in params.get("also", {}).items()
    ]
    nan = [name for name, _, got in compared if is_nan(got)]
    if nan:
        return undefined(nan)
    for name, pub, got in compared:
        good = abs(got - pub) <= half
        ok &= good
        parts.append(
            f"{name} {got:.{decimals + 2}f} {'within' if good else 'OUTSIDE'} {pub} +- "
            f"{0.5 * 10**-decimals:g}"
        )
    return Check(ok, "; ".join(parts))


def _cells(result: StatisticResult, names: list[str] | None) -> list[tuple[str, dict[str, Any]]]:
    if names is None:
        return [("value", {"rho": result.value, "p": result.p})]
    out = []
    for n in names:
        if n == "value":
            out.append(("value", {"rho": result.value, "p": result.p}))
            continue
        if n not in result.details or not isinstance(result.details[n], dict):
            raise ConfigError(
                f"tolerance refers to detail cell {n!r}, which the statistic does not report"
            )
        out.append((n, result.details[n]))
    return out


def _val(cell: dict[str, Any]) -> float:
    return float(cell["rho"] if "rho" in cell else cell["value"])


def sign_significance(
    published: float | None, result: StatisticResult, params: dict[str, Any]
) -> Check:
    signs = params.get("signs")
    if signs is not None and ("sign" in params or "cells" in params):
        raise ConfigError(
            "policy 'sign_significance': give `signs` or `sign` and `cells`, not both"
        )
    if signs is None:
        sign = params.get("sign", "+")
        names = params.get("cells")
        signs = {name: sign for name in (names if names is not None else ["value"])}
    bad = [v for v in signs.values() if v not in ("+", "-")]
    if bad:
        raise ConfigError(f"policy 'sign_significance': sign must be '+' or '-', got {bad[0]!r}")
    alpha = float(params.get("alpha", 0.05))
    parts, ok = [], True
    cells = _cells(result, None if list(signs) == ["value"] else list(signs))
    for name, cell in cells:
        if cell.get("p") is None:
            raise ConfigError(f"policy 'sign_significance': cell {name!r} has no p-value")
    nan = [
        f"{name} {k}"
        for name, cell in cells
        for k, v in (("rho" if "rho" in cell else "value", _val(cell)), ("p", cell["p"]))
        if is_nan(v)
    ]
    if nan:
        return undefined(nan)
    for name, cell in cells:
        v, p = _val(cell), float(cell["p"])
        good = (v > 0 if signs[name] == "+" else v < 0) and p < alpha
        ok &= good
        parts.append(f"{name} {v:+.3f} (p={p:.2g}) {'ok' if good else 'FAILS'}")
    if len(set(signs.values())) == 1:
        return Check(ok, f"sign {next(iter(signs.values()))}, p < {alpha:g}: " + "; ".join(parts))
    return Check(ok, f"signs as stated, p < {alpha:g}: " + "; ".join(parts))


def null_all(published: float | None, result: StatisticResult, params: dict[str, Any]) -> Check:
    alpha = float(params.get("alpha", 0.05))
    cells = [(k, v) for k, v in result.details.items() if isinstance(v, dict) and "p" in v]
    if not cells:
        raise ConfigError("policy 'null_all': the statistic reports no cells with p-values")
    nan = [f"{k} {f}" for k, v in cells for f in ("rho", "p") if is_nan(v.get(f))]
    if nan:  # a constant column: the correlation is undefined, not absent
        return undefined(nan)
    significant = [f"{k} (p={float(v['p']):.3g})" for k, v in cells if float(v["p"]) < alpha]
    if significant:
        return Check(
            False,
            f"{len(significant)} of {len(cells)} cells significant at {alpha:g}: "
            + ", ".join(significant),
        )
    smallest = min(float(v["p"]) for _, v in cells)
    return Check(True, f"all {len(cells)} cells p >= {alpha:g} (smallest p = {smallest:.3f})")


def equivalence_cells(
    result: StatisticResult, margin: float, alpha: float
) -> dict[str, EquivalenceResult]:
    """Every detail cell with a rho and an n, its rho tested for equivalence to 0.

    Equivalence within ``margin`` at ``alpha``."""
    return {
        k: spearman_equivalence(float(v["rho"]), int(v["n"]), margin, alpha=alpha)
        for k, v in result.details.items()
        if isinstance(v, dict) and "rho" in v and "n" in v
    }


def null_equivalent(
    published: float | None, result: StatisticResult, params: dict[str, Any]
) -> Check:
    margin, alpha = float(params["margin"]), float(params.get("alpha", 0.05))
    cells = equivalence_cells(result, margin, alpha)
    if not cells:
        raise ConfigError("policy 'null_equivalent': the statistic reports no cells with rho and n")
    nan = [k for k, c in cells.items() if is_nan(c.bound)]
    if nan:
        return undefined([f"{k} equivalence bound" for k in nan])
    within = sum(c.passed for c in cells.values())
    bound = max(c.bound for c in cells.values())
    return Check(
        within == len(cells),
        f"{within} of {len(cells)} cells equivalent to 0 within {margin:g} (TOST at {alpha:g}); "
        f"equivalence bound {bound:.3f}",
    )


def binomial(published: float | None, result: StatisticResult, params: dict[str, Any]) -> Check:
    """Passes when |value - published| <= z * sqrt(p (1 - p) / n), for a rate p of n trials.

    For a count (``unit = "count"``, or a published value above 1, e.g. 34 of 48 models) the same
    interval in counts, z * sqrt(n p (1 - p)) with p = published / n. The claim's ``n`` comes first:
    the result's ``n`` (often the number of models) is used only when the claim names none."""
    if published is None:
        raise ConfigError("policy 'binomial' needs a published value")
    if is_nan(result.value):
        return undefined(["value"])
    n = int(params.get("n") or result.n or 0)
    if n <= 0:
        raise ConfigError("policy 'binomial' needs n (number of trials) > 0")
    z = float(params.get("z", 1.96))
    unit = params.get("unit", "count" if published > 1 else "rate")
    if unit == "rate":
        if not 0 <= published <= 1:
            raise ConfigError(
                f"policy 'binomial': published rate {published} is not in [0, 1] (set unit = "
                '"count")'
            )
        p = published
        half = z * math.sqrt(p * (1 - p) / n)
    elif unit == "count":
        if not 0 <= published <= n:
            raise ConfigError(
                f"policy 'binomial': published count {published} is not in [0, n = {n}]"
            )
        p = published / n
        half = z * math.sqrt(n * p * (1 - p))
    else:
        raise ConfigError(f"policy 'binomial': unit must be 'rate' or 'count', got {unit!r}")
    ok = abs(result.value - published) <= half
    return Check(
        ok,
        f"{result.value:.4f} {'within' if ok else 'OUTSIDE'} {published} +- {half:.4f} "
        f"(z={z:g}, n={n}, {unit})",
    )


def exact_details(
    published: float | None, result: StatisticResult, params: dict[str, Any]
) -> Check:
    equal = params.get("equal")
    if not isinstance(equal, dict) or not equal:
        raise ConfigError("policy 'exact_details' needs `equal = {detail = value}` (at least one)")
    return details_equal(result, equal, "policy 'exact_details' refers to detail")


def details_equal(result: StatisticResult, wanted: dict[str, Any], asker: str) -> Check:
    """Passes when every detail named in ``wanted`` equals its value there.

    Each is listed, with the expected value where it differs; ``undefined`` when any of them is NaN.
    A detail the statistic does not report is a configuration error (``asker`` begins its
    message)."""
    for key in wanted:
        if key not in result.details:
            raise ConfigError(f"{asker} {key!r}, which the statistic does not report")
    nan = [key for key in wanted if is_nan(result.details[key])]
    if nan:
        return undefined(nan)
    parts, ok = [], True
    for key, want in wanted.items():
        got = result.details[key]
        good = got == want
        ok &= good
        parts.append(f"{key} = {got!r}" + ("" if good else f" (expected {want!r})"))
    return Check(ok, "; ".join(parts))


def correlation_interval(
    published: float | None, result: StatisticResult, params: dict[str, Any]
) -> Check:
    if published is None or result.interval is None:
        raise ConfigError("policy 'correlation_interval' needs a published value and an interval")
    alpha = float(params.get("alpha", 0.05))
    lo, hi = result.interval
    significant = params.get("significant", True) and result.p is not None
    read = [("value", result.value), ("interval low", lo), ("interval high", hi)] + (
        [("p", result.p)] if significant else []
    )
    nan = [name for name, v in read if is_nan(v)]
    if nan:
        return undefined(nan)
    inside = lo <= published <= hi
    same_sign = math.copysign(1, published) == math.copysign(1, result.value)
    checks = [
        f"published {published} {'inside' if inside else 'OUTSIDE'} [{lo:.3f}, {hi:.3f}]",
        f"sign {'same' if same_sign else 'DIFFERENT'}",
    ]
    ok = inside and same_sign
    if significant and result.p is not None:  # (significant implies it: for the type checker)
        sig = result.p < alpha
        ok &= sig
        checks.append(
            f"significance {'same' if sig else 'LOST'} (our p={result.p:.2g}, alpha {alpha:g})"
        )
    return Check(ok, "; ".join(checks))


def within_range(published: float | None, result: StatisticResult, params: dict[str, Any]) -> Check:
    low, high = params.get("low"), params.get("high")
    if low is None and high is None:
        raise ConfigError("policy 'within_range' needs low, high or both")
    if low is not None and high is not None and float(low) > float(high):
        raise ConfigError(f"policy 'within_range': low {low} > high {high}")
    name = params.get("of")
    value = result.value if name is None else _detail_value(result, str(name))
    label = "value" if name is None else str(name)
    if is_nan(value):
        return undefined([label])
    decimals = params.get("decimals")
    half = 0.0 if decimals is None else rounding_halfwidth(int(decimals))
    lo = -math.inf if low is None else float(low) - half
    hi = math.inf if high is None else float(high) + half
    ok = lo <= value <= hi
    rng = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
    rounding_note = (
        f" (printed to {int(decimals)} decimals: [{lo:g}, {hi:g}])" if decimals is not None else ""
    )
    return Check(ok, f"{label} {value:.4g} {'within' if ok else 'OUTSIDE'} {rng}{rounding_note}")


#: the tolerance policies a claim's ``tolerance.policy`` names; a study's own policy is added with
#: ``POLICIES.register(name, function)`` (the function's signature is ``Policy``)
POLICIES: Registry[Policy] = Registry("tolerance policy")
for _policy in (
    rounding,
    sign_significance,
    null_all,
    null_equivalent,
    binomial,
    exact_details,
    correlation_interval,
    within_range,
):
    POLICIES.register(_policy.__name__, _policy)


def get_policy(name: str) -> Policy:
    if name not in POLICIES:
        raise ConfigError(f"unknown tolerance policy {name!r} (known: {', '.join(POLICIES)})")
    return POLICIES.get(name)

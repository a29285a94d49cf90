"""Numbers as printed: the one formatter every table, report section and command output uses.

``fmt_num`` formats one value; its keywords say what a caller prints for a missing value, NaN,
infinities, whole numbers and very small values, so each output keeps its own conventions
(claims print whole counts as integers and NaN as ``undefined``, the placement tables three
fixed decimals and ``-`` when there is no value). ``fmt_interval`` prints ``[low, high]``.
``fmt_value`` (a claim's statistic) and ``fmt_p`` (a probability) are the two conventions
several modules share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def fmt_num(
    v: Any,
    digits: int = 3,
    *,
    style: str = "f",
    none: str = "-",
    nan: str | None = None,
    inf: str | None = None,
    whole: tuple[float, float] | None = None,
    small: float | None = None,
    strip: bool = False,
    only_floats: bool = False,
) -> str:
    """``v`` with ``digits`` digits in the format ``style``, after the rules below.

    ``style``: ``f`` decimals, ``g`` significant digits, ``e`` exponent. The rules, in this order:

    - ``none`` for None;
    - ``only_floats``: a value that is not a float printed as ``str(v)``;
    - ``nan`` (if given) for NaN, ``inf`` (if given) for an infinity (else Python's own text);
    - ``small``: a magnitude below it (zero included) in significant digits (``g``);
    - ``whole=(low, high)``: a whole number of magnitude in [low, high) as an integer;
    - ``strip``: trailing zeros and a trailing decimal point dropped.
    """
    if v is None:
        return none
    if only_floats and not isinstance(v, float):
        return str(v)
    x = float(v)
    if nan is not None and math.isnan(x):
        return nan
    if inf is not None and math.isinf(x):
        return inf
    if small is not None and abs(x) < small:
        return f"{x:.{digits}g}"
    if whole is not None and x.is_integer() and whole[0] <= abs(x) < whole[1]:
        return str(int(x))
    text = f"{x:.{digits}{style}}"
    return text.rstrip("0").rstrip(".") if strip and "." in text else text


def fmt_interval(iv: Sequence[float] | str | None, digits: int = 3, *, none: str = "-") -> str:
    """``[low, high]`` to ``digits`` decimals.

    ``none`` for None; a text (e.g. "not estimable") as it is."""
    if iv is None:
        return none
    if isinstance(iv, str):
        return iv
    return f"[{fmt_num(iv[0], digits)}, {fmt_num(iv[1], digits)}]"


def fmt_value(v: float | None) -> str:
    """A claim's statistic as printed.

    Whole numbers (from 1) as integers, magnitudes below 0.001 to four significant digits, others
    to four decimals; ``-`` when missing, ``undefined`` for NaN."""
    return fmt_num(v, 4, nan="undefined", whole=(1, math.inf), small=1e-3)


def fmt_p(p: float | None) -> str:
    """A share of redraws (P(verdict), P(finding)) as printed: two decimals.

    A share of 1,000 redraws has a Monte-Carlo standard error of up to 0.016, so its third decimal
    is noise: it moves with the CPU's kernels (0.956 on one machine, 0.957 on another). ``-`` when
    not computed."""
    return fmt_num(p, 2, nan="-")

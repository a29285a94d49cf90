"""Analysis: is an accuracy above chance?

A 16-class decision is right by chance 1/16 of the time; a filtered accuracy k/n that a one-sided
exact binomial test cannot tell from that rate (p >= alpha) is at or below chance, and a ratio built
on it (filtered / clean accuracy, the spectral LFC/HFC columns) measures nothing about the model's
frequency use: such values are flagged, never ranked.

The same for the decisions a shape bias rests on: a cue-conflict decision is the
shape or the texture class by chance 2/16 of the time; a model whose shape-or-texture decisions
a one-sided exact binomial test cannot tell from that rate decides at chance, and its shape bias
(S / (S + T) of those decisions) says nothing about it: ``decision_test``, flagged wherever the
value is placed or printed (``place``, ``probe``).

And for a 16-class accuracy itself (``accuracy_test``, ``clean_accuracy_test``): the correct
16-class decisions k of n against 1/16. A 16-class critical-band or spectral result rests on its
clean accuracy (the condition without noise or filter): at chance, its thresholds, channel and
ratios say nothing, and ``place``, ``probe`` and the report flag it (``record_test`` picks the test
a stored record's value rests on).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CHANCE_16 = 1 / 16
ALPHA = 0.05


def above_chance_p(k: int, n: int, chance: float) -> float:
    """One-sided exact binomial p of k successes in n trials against the rate ``chance``."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"above_chance_p needs 0 <= k <= n and n > 0, got k={k}, n={n}")
    from scipy.stats import binomtest

    return float(binomtest(int(k), int(n), chance, alternative="greater").pvalue)


def at_chance(k: int, n: int, chance: float = CHANCE_16, alpha: float = ALPHA) -> bool:
    """True when k/n is not above ``chance`` at level ``alpha`` (at or below chance)."""
    return above_chance_p(k, n, chance) >= alpha


def chance_ratio(clean_k: int, n: int, chance: float = CHANCE_16) -> float:
    """The filtered / clean accuracy ratio that chance performance gives: chance / (clean_k / n)."""
    return chance * n / clean_k if clean_k else float("nan")


#: the share of cue-conflict trials whose 16-class decision is the shape or the texture class
#: under a uniform guess: the two classes differ (same-class trials are dropped), so 2 of 16
CHANCE_SHAPE_OR_TEXTURE = 2 / 16


@dataclass(frozen=True)
class ChanceTest:
    """A decision rate k/n against the rate a uniform guess over the categories gives.

    A one-sided exact binomial test; at chance when it cannot tell them apart (p >= alpha).
    """

    what: str  # what k counts, e.g. "shape-or-texture decisions"
    k: int
    n: int
    chance: float
    p: float
    alpha: float = ALPHA

    @property
    def at_chance(self) -> bool:
        return self.p >= self.alpha

    def text(self) -> str:
        """One sentence: the count, the rate, chance, the test and what it means."""
        head = (
            f"{self.k:,} {self.what} of {self.n:,} trials ({self.k / self.n:.1%}; a uniform guess "
            f"over the 16 categories makes {self.chance:.1%}; one-sided exact binomial "
            f"p = {self.p:.2g})"
        )
        if self.at_chance:
            return (
                f"AT CHANCE: {head}: not above chance, so the value (and any rank of it) says "
                "nothing about the model"
            )
        return f"above chance: {head}"

    def as_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "k": self.k,
            "n": self.n,
            "chance": self.chance,
            "p": self.p,
            "alpha": self.alpha,
            "at_chance": self.at_chance,
            "test": "exact binomial, one-sided (greater)",
        }


def shape_or_texture(shape: int, texture: int, n: int, alpha: float = ALPHA) -> ChanceTest:
    """The shape-bias decisions (S + T of the n cue-conflict trials) against chance (2/16)."""
    k = int(shape) + int(texture)
    return ChanceTest(
        "shape-or-texture decisions",
        k,
        int(n),
        CHANCE_SHAPE_OR_TEXTURE,
        above_chance_p(k, int(n), CHANCE_SHAPE_OR_TEXTURE),
        alpha,
    )


def decision_test(values: Mapping[str, Any] | None) -> ChanceTest | None:
    """The chance test of a shape-bias result's or record's ``values``.

    ``values`` holds ``n``, ``shape``, ``texture`` (repro.probes.shape_bias); None for values of
    another kind or no trials.
    """
    if not values or not all(isinstance(values.get(k), (int, float)) for k in SHAPE_COUNTS):
        return None
    n, shape, texture = (int(values[k]) for k in SHAPE_COUNTS)
    if n <= 0 or not 0 <= shape + texture <= n:
        return None
    return shape_or_texture(shape, texture, n)


SHAPE_COUNTS = ("n", "shape", "texture")

#: the names of the condition without noise or filter (critical band: SD 0; spectral: clean)
CLEAN_CONDITIONS = ("sd=0", "clean")


def accuracy_test(k: int, n: int, alpha: float = ALPHA) -> ChanceTest:
    """A 16-class accuracy k/n (correct decisions of n trials) against chance (1/16)."""
    return ChanceTest(
        "correct 16-class decisions",
        int(k),
        int(n),
        CHANCE_16,
        above_chance_p(int(k), int(n), CHANCE_16),
        alpha,
    )


def clean_accuracy_test(conditions: Any) -> ChanceTest | None:
    """The chance test of the clean condition's 16-class accuracy among ``conditions``.

    ``conditions``: objects with ``condition``, ``k``, ``n``, or the dicts of a stored record. None
    without a clean condition.
    """
    for c in conditions or ():
        get = c.get if isinstance(c, Mapping) else lambda key, c=c: getattr(c, key, None)
        k, n = get("k"), get("n")
        if get("condition") in CLEAN_CONDITIONS and isinstance(n, int) and n > 0:
            if isinstance(k, int) and 0 <= k <= n:
                return accuracy_test(k, n)
    return None


def is_sixteen_class(protocol: str) -> bool:
    """Whether a measurement's protocol decides among the 16 categories."""
    return "16class" in protocol.replace("-", "")


def decides_among_16(measurement: Any) -> bool:
    """Whether a registered measurement decides among the 16 categories.

    The measurement is a ``repro.measurements.registry.Measurement``; it decides among the 16 when
    its protocol says so, or its description (Stylized-ImageNet's accuracy).
    """
    return is_sixteen_class(measurement.protocol) or "16-class" in measurement.description


def accuracy_flag(measurement: Any, column: str, k: int | None, n: int | None) -> str:
    """``AT CHANCE (...)`` for a 16-class accuracy column's k/n at chance, else ""."""
    if k is None or n is None or n <= 0 or not 0 <= k <= n:
        return ""
    if not (column.startswith("top1_acc/") and decides_among_16(measurement)):
        return ""
    test = accuracy_test(k, n)
    if not test.at_chance:
        return ""
    return f"AT CHANCE ({k:,}/{n:,} 16-class decisions right, chance 1/16, p = {test.p:.2g})"


def result_test(protocol: str, values: Any, conditions: Any) -> ChanceTest | None:
    """The chance test a result rests on (None when there is none).

    A shape bias's decisions, else, under a 16-class protocol, its clean 16-class accuracy; None
    when neither applies.
    """
    test = decision_test(values)
    if test is None and is_sixteen_class(protocol):
        test = clean_accuracy_test(conditions)
    return test


def record_test(record: Any) -> ChanceTest | None:
    """``result_test`` of a stored record (``repro.store.record.JobRecord``)."""
    if record is None:
        return None
    from repro.base.errors import UnknownNameError
    from repro.measurements.registry import get

    try:
        protocol = get(record.measurement).protocol
    except UnknownNameError:  # a measurement no longer registered: no protocol to tell
        protocol = ""
    return result_test(protocol, record.values, record.conditions)


def column_flag(record: Any, column: str, k: int | None, n: int | None) -> str:
    """``AT CHANCE (...)`` for one stored value that rests on decisions at chance, else "".

    The decisions are a 16-class accuracy column's own k/n, else the test its record's value rests
    on (a shape bias's shape-or-texture decisions, a 16-class result's clean accuracy). What
    ``compare`` prints and writes beside the value (``repro.cli.compare``).
    """
    from repro.base.errors import UnknownNameError
    from repro.measurements.registry import get

    try:
        measurement = get(record.measurement)
    except UnknownNameError:
        measurement = None
    if measurement is not None:
        flag = accuracy_flag(measurement, column, k, n)
        if flag:
            return flag
    test = record_test(record)
    if test is None or not test.at_chance:
        return ""
    return (
        f"AT CHANCE ({test.k:,}/{test.n:,} {test.what}, chance {test.chance:.4g}, p = {test.p:.2g})"
    )

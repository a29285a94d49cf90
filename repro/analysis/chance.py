"""Analysis: is an accuracy above chance? (issue 21, item 7). A 16-class decision is right by
chance 1/16 of the time; a filtered accuracy k/n that a one-sided exact binomial test cannot
tell from that rate (p >= alpha) is at or below chance, and a ratio built on it (filtered /
clean accuracy, the spectral LFC/HFC columns) measures nothing about the model's frequency use:
such values are flagged, never ranked."""

from __future__ import annotations

# Function-local imports, on purpose: scipy: heavy, loaded only where used (keeps this module's
# importers free of them).

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

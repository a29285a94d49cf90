"""Claims: a null claim ("no correlation anywhere") tested by equivalence.

The paper's criterion, every cell p >= 0.05, is what the paper did (``null_all``) and stays the
verdict; but absence of significance is not evidence of absence. Beside it: every cell's
Spearman rho tested for equivalence to 0 within the claim's declared margin
(``[claim.equivalence]``) by TOST on Fisher's z with the Bonett-Wright variance
(``repro.analysis.equivalence``, the one implementation). The claim says "no cell correlates", so it
holds when every cell is equivalent (an intersection-union test: each cell at level alpha, no
multiplicity correction; Berger 1982).

Reported: the result at the declared margin, the equivalence bound (the smallest margin at which
every cell passes: the largest cell bound), how many cells pass, and for each group size n the
smallest bound any data could reach (``smallest_spearman_bound``): where it is at or above the
margin, n is too small for any useful margin, and the output says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from repro.analysis.equivalence import EquivalenceResult, smallest_spearman_bound
from repro.analysis.result import StatisticResult
from repro.claims.spec import Equivalence
from repro.claims.tolerance import equivalence_cells

METHOD = "TOST on Fisher z, Bonett-Wright variance"


@dataclass(frozen=True)
class NullEquivalence:
    """The equivalence test of a null claim: its margin, alpha and reason, and the tested cells."""

    margin: float
    alpha: float
    reason: str
    cells: dict[str, EquivalenceResult]
    too_small: dict[int, float] = field(
        default_factory=dict
    )  # n -> the smallest reachable bound (>= margin)

    @property
    def passed(self) -> bool:
        return bool(self.cells) and all(c.passed for c in self.cells.values())

    @property
    def bound(self) -> float:
        """The smallest margin at which every cell passes (NaN when a cell is undefined)."""
        bounds = [c.bound for c in self.cells.values()]
        return max(bounds) if bounds and all(b == b for b in bounds) else float("nan")

    @property
    def widest(self) -> str:
        return max(self.cells, key=lambda k: self.cells[k].bound)

    def text(self) -> str:
        n_pass = sum(c.passed for c in self.cells.values())
        head = (
            f"equivalence ({METHOD}, each of {len(self.cells)} cells at {self.alpha:g}, all must "
            f"pass): {'shown' if self.passed else 'not shown'} at the declared margin "
            f"{self.margin:g}; equivalence bound {self.bound:.3f} (the smallest margin every cell "
            f"passes; widest cell {self.widest}); {n_pass} of {len(self.cells)} cells within "
            f"{self.margin:g}"
        )
        small = [
            f"n = {n}: no margin below {b:.3f} can pass, too small for any useful margin"
            for n, b in sorted(self.too_small.items())
        ]
        return head + ("; " + "; ".join(small) if small else "")

    def as_json(self) -> dict[str, Any]:
        return {
            "method": METHOD,
            "margin": self.margin,
            "alpha": self.alpha,
            "reason": self.reason,
            "passed": self.passed,
            "bound": self.bound,
            "widest_cell": self.widest,
            "cells": {k: v.as_json() for k, v in self.cells.items()},
            "too_small": [{"n": n, "smallest_bound": b} for n, b in sorted(self.too_small.items())],
        }


def null_equivalence(spec: Equivalence, result: StatisticResult) -> NullEquivalence:
    """Test every detail cell of ``result`` with a rho and an n against 0.

    The equivalence margin is ``spec.margin``.
    """
    tests = equivalence_cells(result, spec.margin, spec.alpha)
    sizes = sorted({int(result.details[k]["n"]) for k in tests})
    too_small = {
        n: b
        for n in sizes
        if (b := smallest_spearman_bound(n, alpha=spec.alpha)) >= spec.margin or b != b
    }
    return NullEquivalence(spec.margin, spec.alpha, spec.reason, tests, too_small)

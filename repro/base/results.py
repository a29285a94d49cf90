"""What a probe or benchmark returns to the runner.

It is the boundary between the torch stage and the measurement store.

A probe does only model work: it returns counts per condition (and, where the measurement
has them, per-item records such as predictions or per-trial decisions). Summary values are
computed by the pure functions in ``repro.scoring`` and attached as ``value``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ConditionCount:
    """Correct decisions ``k`` of ``n`` items under one condition (e.g. ``LFC/0.1``)."""

    condition: str
    k: int
    n: int

    @property
    def rate(self) -> float:
        return self.k / self.n if self.n else float("nan")


class Counts:
    """Correct decisions ``k`` of ``n`` per condition: what a decision rule keeps.

    Conditions come in the order given, then as first seen (a condition given but never seen
    counts 0 of 0)."""

    def __init__(self, names: Iterable[str] = ()):
        self.k: dict[str, int] = dict.fromkeys(names, 0)
        self.n: dict[str, int] = dict.fromkeys(self.k, 0)

    def add(self, name: str, k: int, n: int) -> None:
        self.k[name] = self.k.get(name, 0) + int(k)
        self.n[name] = self.n.get(name, 0) + int(n)

    def counts(self) -> list[ConditionCount]:
        return [ConditionCount(name, self.k[name], self.n[name]) for name in self.k]


@dataclass
class ProbeResult:
    """The outcome of running one measurement on one model.

    measurement: registered measurement name (``shape_bias``, ``spectral``, ...)
    version: the probe/benchmark version (bumped whenever its numbers can change)
    seed: the seed used (None for deterministic measurements)
    conditions: counts per condition, in a stable order
    value: the measurement's headline value (None when undefined, e.g. a degenerate fit)
    values: further named summary values (e.g. ``{"bw_norm": ..., "cf_norm": ...}``)
    records: per-item rows (predictions, decisions) as plain dicts, possibly empty
    """

    measurement: str
    version: str
    seed: int | None
    conditions: list[ConditionCount] = field(default_factory=list)
    value: float | None = None
    values: dict[str, float | None] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def top1_count(result: ProbeResult) -> tuple[int, int]:
    """The top-1 count (k, n) of a classification result.

    Its ``top1`` condition, else all conditions pooled."""
    named = [c for c in result.conditions if c.condition == "top1"] or result.conditions
    return sum(c.k for c in named), sum(c.n for c in named)

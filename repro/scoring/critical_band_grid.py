"""Scoring stage, critical band: a per-condition grid of 16-class decisions to thresholds and fits.

A per-condition grid of correct / incorrect 16-class decisions (the layout of Subramanian et al.
2023's published network files, or a counts table) into the 5 x 7 accuracy grid, the thresholds
under both criteria and the fit of ``repro.scoring.critical_band``. What
``python -m repro score critical-band --grid FILE`` prints.

Two inputs, one result:

- a per-trial JSON object ``{condition: [0/1, ...]}``, as the authors' ``nn_cbm.py`` writes it
  (``solomon_<network>_accuracies_<date>.json``): 35 conditions ``noise<sd>freq<band>``, the
  SD-0 images split over the 7 bands (``noise0freq0`` .. ``noise0freq6``), then 4 SDs x 7 bands;
- a counts table (CSV, header ``condition,k,n``), conditions named either way.

Conditions are named two ways, mapped explicitly (``parse_condition``):

================================  =====================================  ==================
grid (35, the authors' files)     the suite's probes (29)                cell
================================  =====================================  ==================
``noise0freq<b>``, b = 0..6        ``sd=0`` (the 7 pooled: k and n summed)  SD 0 (no noise)
``noise<sd>freq<b>``, sd > 0       ``f=<b>/sd=<sd>``                       (SD, band b)
================================  =====================================  ==================

A file uses one naming for SD 0 (split or pooled), never both. Thresholds: per band, the noise
levels counted from SD 0.16 downward until the accuracy exceeds 50% (``thresholds``); the SD-0
row is never read, so splitting or pooling SD 0 cannot change the absolute thresholds (the
authors' ``find_thresholds`` loops over the SD-0 row too, and returns 4 there either way). The
``_norm`` criterion applies 50% to the accuracy relative to the pooled SD-0 accuracy (every SD-0
trial of the file: 221 in each of the authors' files), the one baseline both layouts have.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.base.textfile import parse_json, read_text
from repro.scoring.critical_band import N_BANDS, NOISE_SDS, CriticalBandFit, fit, thresholds

GRID_FILE = (
    "a per-trial JSON object {condition: [0/1, ...]} or a counts CSV with header condition,k,n"
)
GRID_NAME = re.compile(r"noise(?P<sd>[0-9]*\.?[0-9]+)freq(?P<band>[0-9]+)")
SUITE_NAME = re.compile(r"f=(?P<band>[0-9]+)/sd=(?P<sd>[0-9]*\.?[0-9]+)")
CLEAN = "sd=0"  # the suite's pooled SD-0 condition (repro.probes.critical_band.CLEAN)
NOISY = tuple(sd for sd in NOISE_SDS if sd > 0)
COUNTS_HEADER = ("condition", "k", "n")

Cell = tuple[float, "int | None"]  # (SD, band); band None = SD 0 pooled over the bands


def suite_name(sd: float, band: int | None) -> str:
    """The suite's name of a cell (``sd=0`` for SD 0, split or pooled; ``f=<b>/sd=<sd>``)."""
    return CLEAN if sd == 0 else f"f={band}/sd={sd:g}"


def grid_name(sd: float, band: int) -> str:
    """The authors' name of a cell (``noise<sd>freq<b>``; SD 0 as ``noise0freq<b>``)."""
    return f"noise{sd:g}freq{band}"


def parse_condition(name: str) -> Cell:
    """(SD, band) of a condition named either way; band None for the pooled ``sd=0``.

    ValueError naming what is wrong (an SD outside the grid, a band outside 0..6, a name of neither
    form)."""
    text = name.strip()
    if text == CLEAN:
        return 0.0, None
    m = GRID_NAME.fullmatch(text) or SUITE_NAME.fullmatch(text)
    if m is None:
        raise ValueError(
            f"condition {name!r}: expected noise<sd>freq<band> (e.g. noise0.02freq3), "
            f"f=<band>/sd=<sd> (e.g. f=3/sd=0.02) or {CLEAN}"
        )
    sd, band = float(m.group("sd")), int(m.group("band"))
    if sd not in NOISE_SDS:
        raise ValueError(
            f"condition {name!r}: noise SD {sd:g} is not one of "
            f"{', '.join(f'{s:g}' for s in NOISE_SDS)}"
        )
    if band >= N_BANDS:
        raise ValueError(f"condition {name!r}: band {band} is not one of 0..{N_BANDS - 1}")
    if sd == 0 and SUITE_NAME.fullmatch(text):
        raise ValueError(f"condition {name!r}: SD 0 is named {CLEAN} in the suite's naming")
    return sd, band


@dataclass(frozen=True)
class DecisionGrid:
    """Correct counts per cell: the 28 noisy (SD, band) cells and SD 0, split or pooled.

    SD 0 is either split over the 7 bands (``split_clean``: the authors' 35 conditions) or pooled
    (the suite's 29)."""

    cells: Mapping[Cell, Count]
    origin: str = "<grid>"

    @property
    def split_clean(self) -> bool:
        return (0.0, None) not in self.cells

    @property
    def n_conditions(self) -> int:
        return len(self.cells)

    @property
    def trials(self) -> int:
        return sum(c.n for c in self.cells.values())

    def baseline(self) -> Count:
        """Every SD-0 trial pooled (the ``_norm`` criterion's baseline and the suite's ``sd=0``)."""
        if not self.split_clean:
            return self.cells[(0.0, None)]
        return sum((self.cells[(0.0, b)] for b in range(N_BANDS)), Count(0, 0))

    def suite_counts(self) -> list[tuple[str, Count]]:
        """The suite's 29 conditions in its order (``repro.probes.critical_band.conditions``).

        ``sd=0`` (the SD-0 cells pooled), then per band the four SDs."""
        out = [(CLEAN, self.baseline())]
        for band in range(N_BANDS):
            for sd in NOISY:
                out.append((suite_name(sd, band), self.cells[(sd, band)]))
        return out

    def accuracy_grid(self) -> np.ndarray:
        """The 5 x 7 accuracy grid (rows SD 0, 0.02, ..., 0.16; columns bands).

        Row 0 per band where SD 0 is split, the pooled SD-0 accuracy in every column where it is
        pooled."""
        grid = np.empty((len(NOISE_SDS), N_BANDS))
        for band in range(N_BANDS):
            clean = self.cells[(0.0, band)] if self.split_clean else self.baseline()
            grid[0, band] = clean.rate
            for i, sd in enumerate(NOISY, start=1):
                grid[i, band] = self.cells[(sd, band)].rate
        return grid


def _check_complete(cells: Mapping[Cell, Count], origin: str) -> None:
    split = [b for b in range(N_BANDS) if (0.0, b) in cells]
    pooled = (0.0, None) in cells
    if pooled and split:
        raise DataError(
            f"{origin}: SD 0 appears both pooled ({CLEAN}) and per band "
            f"({', '.join(grid_name(0, b) for b in split)}); expected one of the two"
        )
    if not pooled and len(split) != N_BANDS:
        missing = [grid_name(0, b) for b in range(N_BANDS) if b not in split]
        raise DataError(
            f"{origin}: missing condition(s) {', '.join(missing) or CLEAN} (expected SD 0 either "
            f"per band, noise0freq0..noise0freq{N_BANDS - 1}, or pooled as {CLEAN})"
        )
    missing = [grid_name(sd, b) for b in range(N_BANDS) for sd in NOISY if (sd, b) not in cells]
    if missing:
        raise DataError(
            f"{origin}: missing condition(s) {', '.join(missing[:4])}"
            + (f" (+{len(missing) - 4} more)" if len(missing) > 4 else "")
            + f" (expected all {len(NOISY) * N_BANDS} noisy cells: SD "
            f"{', '.join(f'{s:g}' for s in NOISY)} x bands 0..{N_BANDS - 1})"
        )
    empty = [
        suite_name(sd, b) if sd else (grid_name(0, b) if b is not None else CLEAN)
        for (sd, b), c in cells.items()
        if c.n == 0
    ]
    if empty:
        raise DataError(
            f"{origin}: condition(s) without trials: {', '.join(sorted(empty)[:4])} (n must be > 0)"
        )


def _new_cell(name: str, where: str, cells: Mapping[Cell, Count]) -> Cell:
    """The cell a condition name stands for, new to ``cells``.

    A DataError at ``where`` when it is not a condition or its cell is in ``cells`` already."""
    try:
        cell = parse_condition(name)
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from None
    if cell in cells:
        raise DataError(
            f"{where}: condition {name!r} appears twice (as {suite_name(*cell)}; expected each "
            "condition once)"
        )
    return cell


def _complete_grid(cells: dict[Cell, Count], origin: str) -> DecisionGrid:
    """The grid of ``cells``, once every condition of the suite is there (else a DataError)."""
    _check_complete(cells, origin)
    return DecisionGrid(cells, origin)


def grid_from_decisions(
    decisions: Mapping[str, Iterable[Any]], origin: str = "<grid>"
) -> DecisionGrid:
    """A grid from ``{condition: [0/1 per trial]}``.

    Trials are booleans or 0/1 numbers; anything else is a DataError naming the condition and the
    trial."""
    cells: dict[Cell, Count] = {}
    for name, trials in decisions.items():
        cell = _new_cell(name, origin, cells)
        if isinstance(trials, (str, bytes)) or not isinstance(trials, Iterable):
            raise DataError(
                f"{origin}: condition {name!r}: expected a list of 0/1 decisions, got "
                f"{type(trials).__name__}"
            )
        k = n = 0
        for i, t in enumerate(trials):
            if isinstance(t, bool) or (isinstance(t, (int, float)) and t in (0, 1)):
                k += int(t)
                n += 1
            else:
                raise DataError(
                    f"{origin}: condition {name!r}, trial {i}: {t!r} is not a decision "
                    "(expected 0 = wrong or 1 = correct)"
                )
        cells[cell] = Count(k, n)
    return _complete_grid(cells, origin)


def _integer(text: str, field: str, line: int, origin: str) -> int:
    t = text.strip()
    if not (t.isascii() and t.isdigit()):
        raise DataError(
            f"{origin}: line {line}: {field} = {text!r} is not a count (expected an integer >= 0)"
        )
    return int(t)


def grid_from_counts(
    rows: Iterable[Mapping[str, str]], origin: str = "<counts>", first_line: int = 2
) -> DecisionGrid:
    """A grid from counts rows ``{condition, k, n}`` (k <= n; each condition once)."""
    cells: dict[Cell, Count] = {}
    for line, row in enumerate(rows, start=first_line):
        name = (row.get("condition") or "").strip()
        if not name:
            raise DataError(f"{origin}: line {line}: empty condition")
        cell = _new_cell(name, f"{origin}: line {line}", cells)
        k = _integer(row.get("k") or "", "k", line, origin)
        n = _integer(row.get("n") or "", "n", line, origin)
        if k > n or n == 0:
            raise DataError(
                f"{origin}: line {line}: k = {k}, n = {n} for condition {name!r} "
                "(expected 0 <= k <= n and n >= 1: k correct of n trials)"
            )
        cells[cell] = Count(k, n)
    return _complete_grid(cells, origin)


def read_grid(path: str | os.PathLike[str]) -> DecisionGrid:
    """A per-trial JSON grid or a counts CSV (``condition,k,n``), told apart by content.

    A file whose first non-blank character is ``{`` is JSON. Every problem is one DataError naming
    the file."""
    p = Path(path)
    text = read_text(p, GRID_FILE)
    if text.lstrip().startswith("{"):
        return grid_from_decisions(parse_json(text, p, GRID_FILE), str(p))
    try:
        reader = csv.DictReader(text.splitlines())
        header = tuple(h.strip() for h in (reader.fieldnames or ()))
        if header != COUNTS_HEADER:
            raise DataError(
                f"{p}: header {','.join(header)[:200] or '(none)'}: expected {GRID_FILE}"
            )
        return grid_from_counts(
            ({k.strip(): v for k, v in row.items() if k} for row in reader), str(p)
        )
    except csv.Error as exc:
        raise DataError(
            f"{p}: malformed CSV ({exc}); expected {GRID_FILE}, one condition per line"
        ) from None


@dataclass(frozen=True)
class GridScore:
    """Thresholds and fits of one grid under both criteria.

    ``fit_norm`` and ``thresholds_norm`` are None when no SD-0 trial is correct: relative accuracy
    is undefined."""

    grid: DecisionGrid
    thresholds: tuple[int, ...]
    fit: CriticalBandFit
    thresholds_norm: tuple[int, ...] | None
    fit_norm: CriticalBandFit | None

    def as_json(self) -> dict[str, Any]:
        base = self.grid.baseline()
        return {
            "origin": self.grid.origin,
            "conditions": self.grid.n_conditions,
            "trials": self.grid.trials,
            "sd0_split_over_bands": self.grid.split_clean,
            "baseline": {"condition": CLEAN, "k": base.k, "n": base.n, "rate": base.rate},
            "thresholds": list(self.thresholds),
            "fit": fit_dict(self.fit),
            "thresholds_norm": None if self.thresholds_norm is None else list(self.thresholds_norm),
            "fit_norm": None if self.fit_norm is None else fit_dict(self.fit_norm),
            "suite_conditions": [
                {"condition": name, "k": c.k, "n": c.n} for name, c in self.grid.suite_counts()
            ],
        }


def fit_dict(res: CriticalBandFit) -> dict[str, Any]:
    """The fit's summaries, its (A, mu, sigma) and, when undefined, why.

    ``sigma`` keeps the sign curve_fit found: the authors' code reports ``2 sqrt(ln 4) sigma`` as
    the bandwidth (negative when sigma is, Q7), the suite its absolute value."""
    return {
        **res.as_json(),
        "params": None if res.params is None else list(res.params),
        "reason": res.reason,
    }


def score_grid(grid: DecisionGrid) -> GridScore:
    """Thresholds (absolute and ``_norm``) and their fits."""
    acc = grid.accuracy_grid()
    th = tuple(int(t) for t in thresholds(acc))
    base = grid.baseline().rate
    if not (base > 0 and math.isfinite(base)):
        return GridScore(grid, th, fit(th), None, None)
    th_norm = tuple(int(t) for t in thresholds(acc, baseline=base))
    return GridScore(grid, th, fit(th), th_norm, fit(th_norm))

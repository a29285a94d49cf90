"""ImageNet-C and ImageNet-C-bar aggregation (pipeline stage: scoring).

Input: one accuracy per (corruption, severity) cell, either as ``Count`` (k of n images,
from our runs) or as a plain rate (e.g. benchmark.csv's ``top1_acc/<corruption>_<severity>``
columns, in percent). Aggregates, selectable by name (``VARIANTS``):

- ``imagenet_c_published`` (METHODS.md quirk Q3, the study's ``top1_acc/imagenet-c``): the
  plain mean over 19 corruptions (the 15 standard + speckle_noise, gaussian_blur, spatter,
  saturate) x severities 1..5;
- ``imagenet_c`` (standard): the plain mean over the 15 standard corruptions x 5 severities
  (mean accuracy, not mCE: mCE needs AlexNet's errors as baseline);
- ``imagenet_cbar``: the mean over the 10 ImageNet-C-bar corruptions x 5 severities
  (``top1_acc/imagenet-cbar``).

The mean is unweighted (every cell counts once). With counts, its standard error is
sqrt(sum p_i (1 - p_i) / n_i) / K (cells independent), giving a normal 95% interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from repro.base.errors import DataError, UnknownNameError
from repro.base.stats import Count
from repro.datasets.specs import IMAGENET_C_CORRUPTIONS, IMAGENET_CBAR_CORRUPTIONS
from repro.datasets.specs import SEVERITIES as DATASET_SEVERITIES

# the corruption names and severities are the dataset's (repro.datasets.specs): the 15 of the
# benchmark first, then the 4 extra (METHODS.md Q3); ImageNet-C-bar's 10
IMAGENET_C_19: tuple[str, ...] = IMAGENET_C_CORRUPTIONS
IMAGENET_C_15: tuple[str, ...] = IMAGENET_C_19[:15]
IMAGENET_C_EXTRA: tuple[str, ...] = IMAGENET_C_19[15:]
IMAGENET_CBAR_10: tuple[str, ...] = IMAGENET_CBAR_CORRUPTIONS
SEVERITIES: tuple[int, ...] = DATASET_SEVERITIES

VARIANTS: dict[str, tuple[str, ...]] = {
    "imagenet_c_published": IMAGENET_C_19,
    "imagenet_c": IMAGENET_C_15,
    "imagenet_cbar": IMAGENET_CBAR_10,
}
PUBLISHED_COLUMN = {
    "imagenet_c_published": "top1_acc/imagenet-c",
    "imagenet_cbar": "top1_acc/imagenet-cbar",
}

Cell = tuple[str, int]


@dataclass(frozen=True)
class CorruptionSummary:
    """The aggregate of one variant: mean accuracy, the cells it averaged, a 95% interval.

    The mean accuracy is in the inputs' unit; the 95% interval is there when the cells were counts.
    """

    variant: str
    mean: float
    cells: tuple[Cell, ...]
    interval: tuple[float, float] | None = None

    @property
    def n_cells(self) -> int:
        return len(self.cells)


def _rate(value: Count | float) -> float:
    return value.rate if isinstance(value, Count) else float(value)


def aggregate(
    cells: Mapping[Cell, Count | float], variant: str = "imagenet_c_published"
) -> CorruptionSummary:
    """Unweighted mean over the variant's corruption x severity cells (all must be present)."""
    try:
        corruptions = VARIANTS[variant]
    except KeyError:
        raise UnknownNameError(
            f"unknown ImageNet-C variant {variant!r} (known: {', '.join(VARIANTS)})"
        ) from None
    wanted = [(c, s) for c in corruptions for s in SEVERITIES]
    missing = [cell for cell in wanted if cell not in cells]
    if missing:
        c, s = missing[0]
        raise DataError(
            f"{variant}: no accuracy for {len(missing)} of {len(wanted)} cells "
            f"(first: {c} severity {s}); expected all of {', '.join(corruptions)} x severities 1..5"
        )
    rates = [_rate(cells[cell]) for cell in wanted]
    bad = [cell for cell, r in zip(wanted, rates, strict=True) if not math.isfinite(r)]
    if bad:
        raise DataError(f"{variant}: accuracy of {bad[0][0]} severity {bad[0][1]} is not a number")
    mean = math.fsum(rates) / len(rates)
    interval = None
    counts = [c for c in (cells[cell] for cell in wanted) if isinstance(c, Count)]
    if len(counts) == len(wanted):
        var = math.fsum(c.rate * (1 - c.rate) / c.n for c in counts) / len(wanted) ** 2
        half = 1.959963984540054 * math.sqrt(var)
        interval = (max(0.0, mean - half), min(1.0, mean + half))
    return CorruptionSummary(variant, mean, tuple(wanted), interval)


def cells_from_columns(row: Mapping[str, float], prefix: str = "top1_acc/") -> dict[Cell, float]:
    """(corruption, severity) -> value from wide columns ``<prefix><corruption>_<severity>``.

    The benchmark.csv layout; columns that are not such cells are ignored."""
    known = set(IMAGENET_C_19) | set(IMAGENET_CBAR_10)
    out: dict[Cell, float] = {}
    for column, value in row.items():
        if not column.startswith(prefix):
            continue
        name, _, sev = column[len(prefix) :].rpartition("_")
        if name in known and sev.isdigit() and int(sev) in SEVERITIES:
            out[(name, int(sev))] = float(value)
    return out


def table(
    cells: Mapping[Cell, Count | float], corruptions: tuple[str, ...] = IMAGENET_C_19
) -> dict[str, dict[int, float]]:
    """Per-corruption x severity accuracies, plus each corruption's mean over severities (key 0)."""
    out: dict[str, dict[int, float]] = {}
    for c in corruptions:
        row = {s: _rate(cells[(c, s)]) for s in SEVERITIES if (c, s) in cells}
        if row:
            row[0] = math.fsum(row.values()) / len(row)
            out[c] = row
    return out

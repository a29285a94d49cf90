"""Subramanian et al. 2023: the hooks of its ``[placement]``.

They plug into the one placement mechanism of ``repro.placement`` (docs/howto/add-study.md,
"Placement"): the population a measured model's 16-class critical band is ranked among (the paper's
76 networks, scored from their files), the human channel shown beside them, and the 95% interval of
a measured model's channel, redrawn from its per-condition counts.

The interval (``channel_interval``): each of the record's 29 condition counts redrawn as a
binomial of its own n and rate (parametric bootstrap; ``RESAMPLES`` seeded draws), the thresholds
and the fit recomputed on every redraw (``repro.scoring.critical_band_grid``), the 2.5% and 97.5%
percentiles of the column's value. A redraw whose thresholds are all equal has no fit: for the
bandwidth it is wider than any fit resolves (counted above every defined value, so the upper end
becomes infinite once more than 2.5% of the redraws are flat); for the centre frequency and the
peak sensitivity it is dropped, and the interval is None when more than 2.5% are. Memoised by the
digest of the counts, so repeated counts reuse their redraws.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from typing import Any

import numpy as np

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.placement.reference import Reference
from repro.scoring.critical_band import fit, thresholds
from repro.scoring.critical_band_grid import DecisionGrid, parse_condition
from repro.studies.subramanian2023.population import population as read
from repro.studies.subramanian2023.published import load_table
from repro.studies.subramanian2023.statistics import human_fit

RESAMPLES = 1000
SEED = 0
PREFIXES = ("metric/criticalband-16class-premade/", "metric/criticalband-16class/")
KEYS = ("bw", "cf", "pns")


def population(
    study: Any, data_dir: str | os.PathLike[str] | None
) -> dict[str, dict[str, float | None]]:
    """{network: {bw, cf, pns}} over the paper's 76 networks.

    None where the fit is undefined: every threshold equal."""
    table = load_table(data_dir)
    out: dict[str, dict[str, float | None]] = {}
    for network in read().networks:
        row = table.values[network]
        defined = row["fit_defined"] == 1.0
        out[network] = {k: float(row[k]) if defined else None for k in KEYS}
    return out


def references(study: Any, data_dir: str | os.PathLike[str] | None) -> list[Any]:
    """The human channel: the authors' group thresholds, fitted here.

    No interval (no per-trial data)."""
    human = read().human
    res = human_fit()
    return [
        Reference(
            f"human observers ({human.observers}, group thresholds "
            f"{','.join(map(str, human.thresholds))})",
            {"bw": res.bandwidth, "cf": res.center_frequency, "pns": res.peak_noise_sensitivity},
            note="the authors' group thresholds (their notebook's output); the per-trial human "
            "data is not in the repository snapshot, so no interval",
        )
    ]


def _key(column: str) -> str:
    for prefix in PREFIXES:
        if column.startswith(prefix):
            key = column[len(prefix) :]
            if key in KEYS:
                return key
    raise ValueError(
        f"channel_interval: {column!r} is not a 16-class critical-band bandwidth, centre or PNS "
        f"(expected {PREFIXES[0]}<bw|cf|pns> or {PREFIXES[1]}<bw|cf|pns>)"
    )


def channel_interval(record: Any, column_value: Any) -> tuple[float, float] | None:
    """The 95% interval of a measured model's bandwidth, centre or PNS (absolute criterion).

    Redrawn from the record's per-condition counts (see the module docstring); None when the record
    has no complete set of counts."""
    key = _key(column_value.column)
    counts = tuple(
        (str(c["condition"]), int(c["k"]), int(c["n"]))
        for c in record.conditions
        if {"condition", "k", "n"} <= set(c)
    )
    draws = _redraws(hashlib.sha256(json.dumps(counts).encode()).hexdigest(), counts)
    if draws is None:
        return None
    values = draws[:, KEYS.index(key)]
    flat = np.isnan(values)
    if key == "bw":
        values = np.where(flat, np.inf, values)  # a flat profile: wider than any fit resolves
    elif flat.mean() > 0.025:
        return None
    else:
        values = values[~flat]
    lo, hi = np.quantile(values, [0.025, 0.975], method="inverted_cdf")  # no interpolation with inf
    return float(lo), float(hi)


@lru_cache(maxsize=256)
def _redraws(digest: str, counts: tuple[tuple[str, int, int], ...]) -> np.ndarray | None:
    """(RESAMPLES, 3) bandwidth, centre, PNS of the redrawn grids (NaN where flat).

    Memoised by the digest of the counts; None when they are not a complete grid."""
    try:
        cells = {parse_condition(name): Count(k, n) for name, k, n in counts}
        DecisionGrid(cells, f"record {digest[:12]}").accuracy_grid()
    except (KeyError, ValueError, DataError):
        return None
    names = list(cells)
    k = np.array([cells[c].k for c in names])
    n = np.array([cells[c].n for c in names])
    if (n <= 0).any():
        return None
    draws = np.random.default_rng(SEED).binomial(n, k / n, size=(RESAMPLES, len(names)))
    out = np.full((RESAMPLES, len(KEYS)), np.nan)
    for b in range(RESAMPLES):
        res = fit(
            thresholds(
                DecisionGrid(
                    {c: Count(int(draws[b, i]), int(n[i])) for i, c in enumerate(names)}
                ).accuracy_grid()
            )
        )
        if res.defined:
            out[b] = res.triple()
    return out

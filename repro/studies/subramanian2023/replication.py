"""Subramanian et al. 2023: the ``derive`` hook of its critical-band count grids.

The grids are declared in ``replication.toml`` (kind ``grid``: ``repro.diagnostics.count_grids``).
From every network's redrawn per-condition counts (35 conditions of about 30 trials) to the columns
the table holds for a network file (``published.threshold_columns``): the thresholds under the
absolute criterion and under ``_norm`` (relative to the pooled SD-0 accuracy of the redraw), their
fits, the fit summaries and the authors' signed ones.

The threshold rule is ``repro.scoring.critical_band.thresholds`` vectorised over redraws and
networks (per band, the noise levels counted from SD 0.16 downward while the accuracy does not
exceed 50%), with the same floating-point operations (k / n, then divided by the baseline); the
fit of each distinct threshold vector is computed once (``repro.scoring.critical_band.fit``,
memoised per vector: 1,000 redraws of the 85 networks hold about 1,200 distinct vectors under
the absolute criterion), and what the hook derives is cached on disk by the core.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from repro.base.errors import ConfigError
from repro.scoring.critical_band import CRITERION, N_BANDS, NOISE_SDS
from repro.scoring.critical_band_grid import parse_condition
from repro.studies.subramanian2023.published import threshold_columns

NOISY_DESCENDING = tuple(sorted((sd for sd in NOISE_SDS if sd > 0), reverse=True))  # 0.16 .. 0.02
NORM = "_norm"


def _suffix(column: str) -> str:
    return NORM if column.endswith(NORM) or column.startswith(f"threshold{NORM}/") else ""


def vector_thresholds(rate: np.ndarray, index: dict[tuple[float, int | None], int]) -> np.ndarray:
    """(..., 7) integer thresholds from (..., C) accuracies (``index``: (SD, band) -> cell)."""
    out = np.zeros((*rate.shape[:-1], N_BANDS), dtype=np.int64)
    for band in range(N_BANDS):
        alive = np.ones(rate.shape[:-1], dtype=bool)
        count = np.zeros(rate.shape[:-1], dtype=np.int64)
        for sd in NOISY_DESCENDING:
            alive &= ~(rate[..., index[(sd, band)]] > CRITERION)
            count += alive
        out[..., band] = count
    return out


def _columns_of(
    th: np.ndarray, suffix: str, columns: Sequence[str], valid: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """The wanted ``columns`` of criterion ``suffix`` for (B, M, 7) thresholds.

    NaN where not ``valid``."""
    flat = th.reshape(-1, N_BANDS)
    ok = np.ones(flat.shape[0], dtype=bool) if valid is None else valid.reshape(-1)
    vectors, inverse = np.unique(flat[ok], axis=0, return_inverse=True)
    rows = [threshold_columns(v, suffix) for v in vectors]
    known = threshold_columns([0] * N_BANDS, suffix)
    out = {}
    for c in columns:
        if c not in known:
            raise ConfigError(
                f"subramanian2023 replication: no column {c!r} derives from a threshold vector "
                f"(known: {', '.join(known)})"
            )
        values = np.array([r[c] for r in rows], dtype=float)
        a = np.full(flat.shape[0], np.nan)
        a[ok] = values[inverse.reshape(-1)]
        out[c] = a.reshape(th.shape[:-1])
    return out


def derive(
    cells: tuple[str, ...], k: np.ndarray, n: np.ndarray, columns: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """The ``derive`` hook (``repro.diagnostics.count_grids``).

    (B, M, C) redrawn counts of the cells ``cells`` (named as in the network files, or the suite's
    29) -> {column: (B, M)}."""
    try:
        index = {parse_condition(c): i for i, c in enumerate(cells)}
    except ValueError as exc:
        raise ConfigError(f"subramanian2023 replication: {exc}") from None
    clean = [i for (sd, _), i in index.items() if sd == 0]
    missing = [(sd, b) for sd in NOISY_DESCENDING for b in range(N_BANDS) if (sd, b) not in index]
    if missing or not clean:
        raise ConfigError(
            f"subramanian2023 replication: the grid lacks {len(missing)} noisy cell(s) or SD 0"
        )
    rate = k / n[None]
    out: dict[str, np.ndarray] = {}
    wanted = {s: [c for c in columns if _suffix(c) == s] for s in ("", NORM)}
    if wanted[""]:
        out.update(_columns_of(vector_thresholds(rate, index), "", wanted[""]))
    if wanted[NORM]:
        base = k[..., clean].sum(axis=-1) / n[None, :, clean].sum(
            axis=-1
        )  # (B, M): pooled SD-0 accuracy
        valid = base > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            relative = rate / np.where(valid, base, 1.0)[..., None]
        out.update(_columns_of(vector_thresholds(relative, index), NORM, wanted[NORM], valid))
    return out

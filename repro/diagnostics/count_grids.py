"""Claims: a count model's ``grid`` families (``repro.diagnostics.counts``).

A grid family's columns are derived from a grid of per-condition counts through a pipeline the
study supplies (e.g. a critical band: 35 conditions of about 30 trials -> thresholds -> a fit ->
bandwidth, centre, peak sensitivity).

The table holds each model's counts as columns ``<counts>/k/<cell>`` and ``<counts>/n/<cell>``
(``counts`` names the grid; the cells are whatever the table holds under it). A replication
redraws every cell of every model as a binomial of its own n around its own rate k / n, each
cell independently (the trials of a cell are exchangeable 0/1 decisions, so this is the same
distribution as resampling the cell's trials with replacement, and the cells of a grid are
different images). The family's ``derive`` hook (``"module:function"``) turns redrawn counts
into the family's columns::

    derive(cells: tuple[str, ...], k: (B, M, C) int array, n: (M, C) int array,
           columns: tuple[str, ...]) -> {column: (B, M) float array}

for the M models that have every cell (the others are NaN in every redraw: not redrawn). Two
families of the same ``counts`` read ONE draw of it (e.g. one critical band under two
criteria), drawn once per model run with its own generator (``grid:<counts>``).

What a family derives is cached on disk, ``<user cache>/replication/<digest>.npz``
(``REPRO_CACHE_DIR`` moves the user cache), keyed by the sha256 of everything it depends on: the
counts, the cells, resamples, seed, the hook and the source of the whole package (the one rule of
``repro.base.result_cache``), the columns, numpy's and scipy's versions and the machine's
architecture (``repro.base.numerics``). A derived pipeline that fits a curve per redraw is
computed once; afterwards ``claims`` reads the file. A cache file that cannot be read or does not
hold what the key promises is recomputed and rewritten (written to a temporary file and renamed,
so a reader never sees half of one).

Subset draws (``repro.diagnostics.counts``, a subset of a family's items) are not defined for a
grid: a ConfigError names the family.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from repro.base.errors import ConfigError
from repro.base.registry import load_lazy
from repro.base.settings import user_cache_dir

CACHE_FOLDER = "replication"
CACHE_FORMAT = "grid-derive-1"  # bump when what is cached changes meaning


def cells_of(table: Any, prefix: str, models: Sequence[str]) -> tuple[str, ...]:
    """The cells of grid ``prefix`` in the table, sorted.

    They are the cells of every ``<prefix>/k/<cell>`` column of any of ``models``.
    """
    head = f"{prefix}/k/"
    found: set[str] = set()
    for m in models:
        found.update(c[len(head) :] for c in table.values.get(m, {}) if c.startswith(head))
    return tuple(sorted(found))


def grid_counts(
    table: Any, prefix: str, models: Sequence[str], origin: str
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
    """The counts of every model: (cells, k (M, C), n (M, C), complete (M,)).

    A count is 0 where a model lacks a cell (``complete`` False: not redrawn). A count that is not
    an integer with 0 <= k <= n, n > 0, is a ConfigError naming the model and the cell.
    """
    cells = cells_of(table, prefix, models)
    k = np.zeros((len(models), len(cells)), dtype=np.int64)
    n = np.zeros_like(k)
    complete = np.zeros(len(models), dtype=bool)
    for i, m in enumerate(models):
        row = table.values.get(m, {})
        ks = [row.get(f"{prefix}/k/{c}") for c in cells]
        ns = [row.get(f"{prefix}/n/{c}") for c in cells]
        if not cells or any(v is None or not np.isfinite(v) for v in (*ks, *ns)):
            continue
        for c, kv, nv in zip(cells, ks, ns, strict=True):
            if kv != int(kv) or nv != int(nv) or not 0 <= kv <= nv or nv <= 0:
                raise ConfigError(
                    f"{origin}: grid {prefix!r}: model {m!r}, cell {c!r}: k = {kv}, n = {nv} "
                    "(expected integers 0 <= k <= n, n > 0)"
                )
        k[i], n[i], complete[i] = ks, ns, True
    return cells, k, n, complete


def draw_counts(seed: int, prefix: str, k: np.ndarray, n: np.ndarray, resamples: int) -> np.ndarray:
    """(resamples, M, C) binomial counts of each cell's n around its rate k / n.

    The counts are zeros where n = 0.
    """
    rng = np.random.default_rng([seed, zlib.crc32(f"grid:{prefix}".encode())])
    p = np.divide(k, n, out=np.zeros(k.shape), where=n > 0)
    return rng.binomial(n[None], p[None], size=(resamples, *k.shape))


def _hook(ref: str, origin: str, family: str):
    fn = load_lazy(ref, f"{origin}: family {family!r}: derive")
    if not callable(fn):
        raise ConfigError(f"{origin}: family {family!r}: derive {ref!r} is not a function")
    return fn


def cache_key(
    ref: str,
    fn: Any,
    columns: Sequence[str],
    cells: Sequence[str],
    k: np.ndarray,
    n: np.ndarray,
    resamples: int,
    seed: int,
) -> str:
    """The sha256 naming a family's cached derivation (see the module docstring)."""
    import scipy

    from repro.base.numerics import numerics
    from repro.base.result_cache import source_digest

    h = hashlib.sha256()
    for part in (
        CACHE_FORMAT,
        ref,
        source_digest(),  # the whole package (repro.base.result_cache), not the hook's module
        "\x1f".join(columns),
        "\x1f".join(cells),
        str(resamples),
        str(seed),
        np.__version__,
        scipy.__version__,
        numerics(),  # the libraries and the architecture (repro.base.numerics)
        str(k.shape),
    ):
        h.update(part.encode())
        h.update(b"\x00")
    h.update(np.ascontiguousarray(k, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(n, dtype=np.int64).tobytes())
    return h.hexdigest()


def cache_path(key: str) -> Path:
    return user_cache_dir() / CACHE_FOLDER / f"{key}.npz"


def _read_cache(
    path: Path, columns: Sequence[str], shape: tuple[int, int]
) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path, allow_pickle=False) as f:
            out = {c: np.asarray(f[c], dtype=float) for c in columns}
    except (OSError, KeyError, ValueError, EOFError, zlib.error):
        return None
    except Exception:  # a truncated or foreign file (zipfile.BadZipFile and the like)
        return None
    return out if all(a.shape == shape for a in out.values()) else None


def _write_cache(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        pass  # a cache that cannot be written is recomputed next time


def derive_grid(
    *,
    ref: str,
    columns: Sequence[str],
    counts: str,
    table: Any,
    models: Sequence[str],
    resamples: int,
    seed: int,
    origin: str,
    family: str,
    drawn: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """{column: (resamples, len(models)) values} of a grid family (see the module docstring).

    ``drawn``: a memo shared by the families of one draw (the redrawn counts of each grid).
    """
    models = list(models)
    fn = _hook(ref, origin, family)
    memo = {} if drawn is None else drawn
    if counts not in memo:
        memo[counts] = grid_counts(table, counts, models, origin)
    cells, k, n, complete = memo[counts]
    if not complete.any():
        return {c: np.full((resamples, len(models)), np.nan) for c in columns}
    kc, nc = k[complete], n[complete]
    key = cache_key(ref, fn, columns, cells, kc, nc, resamples, seed)
    path = cache_path(key)
    shape = (resamples, int(complete.sum()))
    got = _read_cache(path, columns, shape)
    if got is None:
        draw_key = ("draw", counts)
        if draw_key not in memo:
            memo[draw_key] = draw_counts(seed, counts, kc, nc, resamples)
        raw = fn(tuple(cells), memo[draw_key], nc, tuple(columns))
        missing = [c for c in columns if c not in raw]
        if missing:
            raise ConfigError(
                f"{origin}: family {family!r}: derive {ref} gave no {', '.join(missing[:3])}"
            )
        got = {}
        for c in columns:
            a = np.asarray(raw[c], dtype=float)
            if a.shape != shape:
                raise ConfigError(
                    f"{origin}: family {family!r}: derive {ref} gave column {c!r} of shape "
                    f"{a.shape}, expected {shape}"
                )
            got[c] = a
        _write_cache(path, got)
    out = {}
    for c in columns:
        full = np.full((resamples, len(models)), np.nan)
        full[:, complete] = got[c]
        out[c] = full
    return out

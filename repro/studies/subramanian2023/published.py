"""Subramanian et al. 2023: the study's per-network table, read from the published network data.

The data is ``critical-band-masking/network_data/``, every file sha256-verified against its pin.

Rows: the networks of the network files (``population.network_files``; the population decides
which rows a statistic reads). Columns:

- from each ``solomon_<network>_accuracies_<date>.json``, scored by the suite's one grid scorer
  (``repro.scoring.critical_band_grid``, what ``python -m repro score critical-band --grid FILE``
  prints): ``threshold/f=<b>`` (absolute 50%: the protocol's), ``bw``, ``cf``, ``pns``, ``sigma``
  (the fitted sigma with curve_fit's sign: the authors' bandwidth is ``2 sqrt(ln 4) sigma``, Q7),
  ``fit_defined`` (1 or 0: all thresholds equal gives no fit, and NaN summaries), the same with
  ``_norm`` (relative to the pooled SD-0 accuracy), ``sd0_correct`` / ``sd0_trials`` and ``trials``;
  ``bw_authors``, ``cf_authors``, ``pns_authors``: the summaries as the authors' code computes them
  (``authors_columns``: signed bandwidth, flat fits kept); the counts behind them,
  ``cbm/k/<condition>`` and ``cbm/n/<condition>`` for the file's 35 conditions (named as in the
  file: the grid the replication redraws, ``replication.toml``);
- from ``sb_scores.json`` (16 per-category shares of shape decisions, each of 75 cue-conflict
  trials: ``networks/nn_shapebias.py``): ``shape_decisions`` (their sum in trials), ``shape_trials``
  (16 x 75 = 1,200) and ``shape_bias`` = ``shape_decisions / shape_trials``, the unweighted mean
  of the 16 values (equal n);
- from each accuracy table (``baccs*.json`` clean, ``waccs_eps<eps>.json`` under L2 PGD of radius
  eps; fractions of 1,000 images): ``accuracy/<file stem>``, a ``*_remaining`` file merged into
  the column of its stem (its values must agree where both name a network).

Every value is a number the files hold or the grid scorer computes from them; NaN where undefined.
"""

from __future__ import annotations

import json
import math
import os
import re
from functools import lru_cache
from pathlib import Path

from repro.base.errors import DataError
from repro.base.settings import data_dir as resolve
from repro.base.study import get_study
from repro.base.table import ModelTable
from repro.published.fetch import require_file
from repro.scoring.critical_band import BANDWIDTH_FACTOR, START, fit, fit_params, summaries
from repro.scoring.critical_band_grid import grid_name, read_grid, score_grid, suite_name
from repro.studies.subramanian2023.population import check_files, network_files

FOLDER = "critical-band-masking/network_data"
SB_FILE = f"{FOLDER}/sb_scores.json"
ACCURACY_FILE = re.compile(
    r"(?P<stem>[bw]accs(?:_eps[0-9.]+(?:_all)?)?)(?P<remaining>_remaining)?\.json"
)
CATEGORIES = 16
TRIALS_PER_CATEGORY = (
    75  # 80 cue-conflict images per shape category, 5 with the same texture class dropped
)
ADVERSARIAL_IMAGES = 1000  # nn_whitebox.py: the first image of each ImageNet validation class
NAN = float("nan")


def pinned_files() -> list[str]:
    """The pinned paths of the study's network data, in pin order."""
    return [
        pin.path
        for pin in get_study("subramanian2023").published
        if pin.path.startswith(FOLDER + "/")
    ]


def load_table(data_dir: str | os.PathLike[str]) -> ModelTable:
    """The study's table (the ``[table] loader`` of its study.toml)."""
    root = str(Path(resolve(data_dir)).resolve())
    return _table(root, tuple(pinned_files()), START.get())


@lru_cache(maxsize=4)
def _table(root: str, files: tuple[str, ...], start: tuple[float, float, float]) -> ModelTable:
    """The table of ``files`` under ``root``, its fits started from ``start``.

    ``start`` is in the cache key: ``repro.scoring.fit_conditioning.moved_start`` builds another
    table."""
    by_network = network_files(Path(f).name for f in files)
    check_files(by_network)
    values: dict[str, dict[str, float]] = {}
    for network, name in by_network.items():
        values[network] = grid_columns(require_file(f"{FOLDER}/{name}", root))
    for network, row in shape_columns(require_file(SB_FILE, root)).items():
        if network in values:
            values[network].update(row)
    for column, table in accuracy_columns(
        {f: require_file(f, root) for f in files if ACCURACY_FILE.fullmatch(Path(f).name)}
    ).items():
        for network, acc in table.items():
            if network in values:
                values[network][column] = acc
    return ModelTable(values, origin=FOLDER, default_source="published")


COUNTS = "cbm"  # the count columns cbm/k/<condition>, cbm/n/<condition> (the replication's grid)


def _summaries(suffix: str, res) -> dict[str, float]:
    out = {
        f"{k}{suffix}": NAN if v is None else float(v)
        for k, v in (
            ("bw", res.bandwidth),
            ("cf", res.center_frequency),
            ("pns", res.peak_noise_sensitivity),
        )
    }
    out[f"sigma{suffix}"] = NAN if res.params is None else float(res.params[2])
    out[f"fit_defined{suffix}"] = 1.0 if res.defined else 0.0
    return out


def threshold_columns(thresholds, suffix: str = "") -> dict[str, float]:
    """The columns of one threshold vector under one criterion (``suffix`` "" absolute, "_norm").

    ``threshold<suffix>/f=<b>``, ``bw``, ``cf``, ``pns``, ``sigma``, ``fit_defined`` (with the
    suffix) and, for the absolute criterion, the authors' summaries (``authors_columns``). What the
    table holds for a network file and what the replication derives for a redrawn grid."""
    th = tuple(int(t) for t in thresholds)
    kind = "threshold" if not suffix else f"threshold{suffix}"
    row = {f"{kind}/f={b}": float(t) for b, t in enumerate(th)}
    row.update(_summaries(suffix, fit(th)))
    if not suffix:
        row.update(authors_columns(th))
    return row


def grid_columns(path: str | os.PathLike[str]) -> dict[str, float]:
    """The critical-band columns of one network file (see the module docstring)."""
    score = score_grid(read_grid(path))
    base = score.grid.baseline()
    row: dict[str, float] = {
        "trials": float(score.grid.trials),
        "sd0_correct": float(base.k),
        "sd0_trials": float(base.n),
    }
    row.update(threshold_columns(score.thresholds))
    if score.thresholds_norm is not None and score.fit_norm is not None:
        row.update(threshold_columns(score.thresholds_norm, "_norm"))
    for (sd, band), count in score.grid.cells.items():
        name = grid_name(sd, band) if band is not None else suite_name(sd, band)
        row[f"{COUNTS}/k/{name}"] = float(count.k)
        row[f"{COUNTS}/n/{name}"] = float(count.n)
    return row


def authors_columns(thresholds) -> dict[str, float]:
    """The authors' fit summaries: ``bw_authors``, ``cf_authors``, ``pns_authors``.

    The summaries as the authors' code computes them (``analysis.py`` ``fit_gaussian`` +
    ``channel_props``): the same least squares, no degeneracy check (a flat vector gives its flat
    fit, bandwidth 11295.35, Q4) and the bandwidth ``2 sqrt(ln 4) sigma`` with sigma's sign
    (negative for some networks, Q7). NaN if curve_fit fails."""
    params = fit_params(thresholds)
    if params is None:
        return {"bw_authors": NAN, "cf_authors": NAN, "pns_authors": NAN}
    _, cf, pns = summaries(params)
    return {"bw_authors": BANDWIDTH_FACTOR * params[2], "cf_authors": cf, "pns_authors": pns}


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None


def _count(v: object, n: int, where: str) -> int:
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or not math.isfinite(v)
        or not 0 <= v <= 1
    ):
        raise DataError(f"{where}: {v!r} is not a share in [0, 1]")
    k = round(v * n)
    if abs(v * n - k) > 1e-6:
        raise DataError(
            f"{where}: {v!r} is not a multiple of 1/{n} (expected a share of {n} trials)"
        )
    return int(k)


def shape_columns(path: Path) -> dict[str, dict[str, float]]:
    """{network: shape_decisions, shape_trials, shape_bias} from ``sb_scores.json``."""
    raw = _json(path)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected an object {{network: [16 per-category shares]}}")
    out = {}
    for network, scores in raw.items():
        if not isinstance(scores, list) or len(scores) != CATEGORIES:
            raise DataError(
                f"{path}: network {network!r}: expected {CATEGORIES} per-category shares, "
                f"got {len(scores) if isinstance(scores, list) else type(scores).__name__}"
            )
        k = sum(
            _count(v, TRIALS_PER_CATEGORY, f"{path}: network {network!r}, category {i}")
            for i, v in enumerate(scores)
        )
        n = CATEGORIES * TRIALS_PER_CATEGORY
        out[network] = {"shape_decisions": float(k), "shape_trials": float(n), "shape_bias": k / n}
    return out


def accuracy_columns(files: dict[str, Path]) -> dict[str, dict[str, float]]:
    """{``accuracy/<stem>``: {network: accuracy}} of the accuracy tables.

    A ``*_remaining`` table is merged into the column of its stem.
    """
    out: dict[str, dict[str, float]] = {}
    for rel in sorted(files, key=lambda f: ("_remaining" in f, f)):  # the base file first
        path = files[rel]
        m = ACCURACY_FILE.fullmatch(Path(rel).name)
        assert m is not None
        raw = _json(path)
        if not isinstance(raw, dict):
            raise DataError(f"{path}: expected an object {{network: accuracy}}")
        column = out.setdefault(f"accuracy/{m.group('stem')}", {})
        for network, v in raw.items():
            acc = _count(v, ADVERSARIAL_IMAGES, f"{path}: network {network!r}") / ADVERSARIAL_IMAGES
            if network in column and column[network] != acc:
                raise DataError(
                    f"{path}: network {network!r}: {acc} differs from {column[network]} in the "
                    "table it completes"
                )
            column[network] = acc
    return out

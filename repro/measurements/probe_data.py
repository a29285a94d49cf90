"""Measurements: from a probe and a local folder to its measurement, its dataset and ``measure``.

From a probe and a local folder to the registered measurement that reads it, that folder
opened as the measurement's dataset, and ``measure`` (one model x one measurement
-> ProbeResult), the call the ``probe`` command and a measuring session make.

Which measurement reads which dataset is the registry's (``repro.measurements.registry``); this
module picks among a probe's measurements: the one whose dataset is named (``--stimuli``),
else the one whose stimulus set the folder's layout shows (GraySplit / CBMSplit split folders,
``repro.datasets.critical_band_stimuli.detect``), else the probe's default (the study's
protocol); ``write_out`` writes what the measurement writes for ``probe --out``. No torch import
at module level.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from repro.base.errors import DataError
from repro.base.registry import resolve_lazy
from repro.datasets import open_dataset
from repro.datasets.critical_band_stimuli import detect
from repro.datasets.layout import require_root
from repro.datasets.roots import dataset_root
from repro.datasets.specs import describe_layout, get_spec
from repro.measurements.registry import Measurement, get, probe_measurement
from repro.zoo import load_model

AUTO = "auto"


def cli_name(m: Measurement) -> str:
    """The probe command's name of a probe measurement (its default's, for a variant)."""
    return (m.variant_of or m.name).replace("_", "-")


def select(probe: str, folder: str | os.PathLike[str], stimuli: str = AUTO) -> Measurement:
    """The measurement of ``probe`` for ``folder``.

    The one reading ``stimuli`` when named, else the one whose stimulus set the folder's layout
    shows, else the probe's default."""
    if stimuli != AUTO:
        return probe_measurement(probe, stimuli)

    found = detect(Path(folder))
    return probe_measurement(probe, found)


def open_data(
    measurement: Measurement,
    folder: str | os.PathLike[str],
    *,
    splits: Sequence[str] | None = None,
    cache: bool = False,
) -> Any:
    """``folder`` as the ImageSource of ``measurement``'s dataset, validated before decoding.

    Every problem is a one-line DataError naming the folder or file. ``splits``: splits of a
    GraySplit/CBMSplit folder (default 0-4); an error for other datasets."""
    probe = cli_name(measurement)
    layout = describe_layout(get_spec(measurement.dataset))
    path = Path(folder).expanduser()
    if not path.exists():
        raise DataError(
            f"{path}: data folder not found; check --data (probe {probe} expected {layout})"
        )
    if not path.is_dir():
        raise DataError(
            f"{path}: is a file, not a folder; check --data (probe {probe} expected {layout})"
        )
    try:
        return open_dataset(measurement.dataset, path, cache=cache, splits=splits)
    except DataError as exc:
        raise DataError(f"probe {probe} cannot use {path}: {exc}") from None


def write_out(measurement: Measurement, result: Any, path: str | os.PathLike[str]) -> Path:
    """Write what ``python -m repro probe --out`` writes to ``path``.

    The measurement's own file where it names one (``writes``: shape bias's per-trial decisions
    in model-vs-human's CSV schema), else the counts per condition (measurement, version, seed,
    condition, k, n, rate)."""
    path = Path(path)
    if measurement.writes:
        return resolve_lazy(measurement.writes)(result, path)  # type: ignore[operator, no-any-return]

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["measurement", "version", "seed", "condition", "k", "n", "rate"])
        for c in result.conditions:
            w.writerow(
                [
                    result.measurement,
                    result.version,
                    result.seed,
                    c.condition,
                    c.k,
                    c.n,
                    f"{c.rate:.6f}",
                ]
            )
    return path


def measure(
    model: Any,
    measurement: str | Measurement,
    *,
    root: str | os.PathLike[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    splits: Sequence[str] | None = None,
    device: str = "cpu",
    batch_size: int = 16,
    seed: int | None = None,
    progress: Callable[[int], None] | None = None,
    cache: bool = False,
    weights_dir: str | os.PathLike[str] | None = None,
) -> Any:
    """Measure one model with one registered measurement; returns the probe's ProbeResult.

    ``model``: a zoo name, or a loaded nn.Module that takes [0, 1] input and normalizes inside.
    ``root``: the dataset's folder; default its configured root, else (GraySplit, CBMSplit) its
    folder in ``data_dir``, the data directory the caller resolved. ``seed``: default the
    measurement's. ``batch_size``: default 16.
    """
    m = get(measurement) if isinstance(measurement, str) else measurement
    if root is None:
        root = dataset_root(m.dataset, data_dir)
        if root is None:
            root = require_root(
                get_spec(m.dataset), None
            )  # raises the one-line "no root configured" DataError
    source = open_data(m, root, splits=splits, cache=cache)
    if isinstance(model, str):
        model = load_model(model, device=device, weights_dir=weights_dir)
    from repro.measurements.loop import run

    return run(m, model, source, device=device, batch_size=batch_size, seed=seed, progress=progress)

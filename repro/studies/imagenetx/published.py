"""ImageNet-X, its published per-factor accuracy tables as the study's per-model table.

Every pinned ``imagenetx/factor_accuracies/<set>/<correctness>/accuracies_per_factor.csv``
(read and checked by ``read_factor_table``) becomes rows
``<set>/<model>`` with columns ``<correctness>/<factor>`` and ``<correctness>/average``
(accuracies as fractions; NaN where a factor has no images). The claim context is built from
this table, so the statistics read their inputs through the context like any study's.
"""

from __future__ import annotations

import os
import re

import numpy as np

from repro.base.errors import ConfigError, DataError, UnknownNameError
from repro.base.study import get_study
from repro.base.table import ModelTable
from repro.published.fetch import require_file
from repro.scoring.imagenet_x import CORRECTNESS, FACTORS

TABLE = re.compile(r"imagenetx/factor_accuracies/([^/]+)/([^/]+)/accuracies_per_factor\.csv")


def table_files() -> list[tuple[str, str]]:
    """(model set, correctness) of every pinned per-factor accuracy table, in pin order."""
    pins = [TABLE.fullmatch(pin.path) for pin in get_study("imagenetx").published]
    return [(m.group(1), m.group(2)) for m in pins if m]


def load_table(data_dir: str | os.PathLike[str]) -> ModelTable:
    """The study's table: every pinned per-factor accuracy table, sha256-verified."""
    return read_tables(data_dir, table_files())


def read_tables(
    data_dir: str | os.PathLike[str], files: list[tuple[str, str]], *, check_sha256: bool = True
) -> ModelTable:
    """The (model set, correctness) tables ``files`` of ``data_dir`` as one ModelTable."""
    values: dict[str, dict[str, float]] = {}
    for model_set, correctness in files:
        frame = read_factor_table(
            model_set, correctness, data_dir=data_dir, check_sha256=check_sha256
        )
        columns = [f"{correctness}/{column}" for column in frame.columns]
        # one array read per table (DataFrame.iterrows builds a Series per row)
        for model, row in zip(frame.index, frame.to_numpy(dtype=float).tolist(), strict=True):
            values.setdefault(f"{model_set}/{model}", {}).update(zip(columns, row, strict=True))
    return ModelTable(values, origin="imagenetx/factor_accuracies", default_source="published")


# the published factor tables (facebookresearch/imagenetx results/val/top_factor)
TABLE_SETS = (
    "base",
    "imagenet_testbed",
    "modelvshuman",
    "crop",
    "colorjitter",
    "colorjitter_crop",
    "adaptive_colorjitter",
    "gaussian_blur",
)


def published_table_relpath(
    model_set: str, correctness: str = "class", by_metaclass: bool = False
) -> str:
    if model_set not in TABLE_SETS:
        raise UnknownNameError(
            f"unknown ImageNet-X model set {model_set!r} (known: {', '.join(TABLE_SETS)})"
        )
    if correctness not in CORRECTNESS:
        raise ConfigError(
            f"unknown correctness {correctness!r} (expected one of {', '.join(CORRECTNESS)})"
        )
    suffix = "_metaclass" if by_metaclass else ""
    return (
        f"imagenetx/factor_accuracies/{model_set}/{correctness}/accuracies_per_factor{suffix}.csv"
    )


def read_factor_table(
    model_set: str,
    correctness: str = "class",
    *,
    by_metaclass: bool = False,
    data_dir: str | os.PathLike[str] | None = None,
    check_sha256: bool = True,
):
    """A published per-factor accuracy table as a DataFrame indexed by model (and metaclass).

    The file's sha256 is checked against its pin (``require_file``; ``check_sha256=False`` only
    for synthetic tables of tests), then its content (``parse_factor_table``).
    """
    rel = published_table_relpath(model_set, correctness, by_metaclass)
    return parse_factor_table(
        require_file(rel, data_dir, check_sha256=check_sha256), by_metaclass=by_metaclass
    )


def parse_factor_table(path: str | os.PathLike[str], *, by_metaclass: bool = False):
    """Parse and check any copy of a per-factor accuracy table.

    No checksum; see ``read_factor_table``.

    Checked: a ``model`` column, all 16 factor columns and ``average``, every cell a number
    (NaN allowed where a factor has no images) and an accuracy in [0, 1], no duplicate model;
    every failure is one DataError naming the file, row and column.
    """
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: cannot be read as CSV ({' '.join(str(exc).split())})") from None
    keys = ["model", "metaclass"] if by_metaclass else ["model"]
    missing = [c for c in [*keys, *FACTORS, "average"] if c not in frame.columns]
    if missing:
        raise DataError(
            f"{path}: missing column(s) {', '.join(missing)} (expected an ImageNet-X factor table)"
        )
    numeric = frame[[*FACTORS, "average"]].apply(pd.to_numeric, errors="coerce")
    text = numeric.isna().to_numpy() & frame[[*FACTORS, "average"]].notna().to_numpy()
    if text.any():
        i, j = map(int, np.argwhere(text)[0])
        col = [*FACTORS, "average"][j]
        raise DataError(
            f"{path}: row {i + 1} (line {i + 2}): {col} = {frame[col].iloc[i]!r} is not a number "
            "(expected an accuracy in [0, 1], or empty)"
        )
    values = numeric.to_numpy(dtype=float)
    bad = ~np.isnan(values) & ((values < 0) | (values > 1))
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise DataError(
            f"{path}: row {i + 1} (line {i + 2}): {[*FACTORS, 'average'][j]} = {values[i, j]} "
            "is not an accuracy in [0, 1]"
        )
    dup = frame.duplicated(keys)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(
            f"{path}: row {i + 1} (line {i + 2}): duplicate {'/'.join(keys)} "
            f"{tuple(frame.loc[i, keys])} (expected one row each)"
        )
    return frame.set_index(keys)

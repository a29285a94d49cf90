"""Published data reader: a per-model CSV table into a ``ModelTable``, validated.

The table has a first column ``model`` and one column per quantity (e.g. Gavrikov & Keuper's
benchmark.csv). It is validated so that a corrupt file gives one line naming file, row and column.
The one reader of such tables.

Empty cells (the published file has a few, for models outside the study) are kept as NaN;
a statistic that needs one of them raises a DataError naming the model and column.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from repro.base.errors import DataError
from repro.base.table import ModelTable
from repro.published.fetch import require_file, verify


def read_table_csv(path: str | os.PathLike[str], required: Iterable[str] = ()) -> ModelTable:
    """Parse ``path`` (any per-model CSV table) without checking its checksum.

    ``required``: columns that must exist (DataError naming the file and the column).
    """
    path = Path(path)
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(
            f"{path}: cannot be read as CSV ({exc}); check the path and that it is a UTF-8 CSV"
        ) from None
    if not rows:
        raise DataError(f"{path}: empty file (expected a header row starting with 'model')")
    header = rows[0]
    if not header or header[0] != "model":
        raise DataError(
            f"{path}: first column is {header[0] if header else ''!r}, expected 'model'"
        )
    seen: set[str] = set()
    for col in header:
        if col in seen:
            raise DataError(f"{path}: column {col!r} appears twice in the header")
        seen.add(col)
    for col in required:
        if col not in seen:
            raise DataError(f"{path}: column {col!r} missing (expected in the header)")
    values: dict[str, dict[str, float]] = {}
    for lineno, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise DataError(
                f"{path}: row {lineno} has {len(row)} fields, expected {len(header)} (as in the "
                "header)"
            )
        model = row[0].strip()
        if not model:
            raise DataError(f"{path}: row {lineno} has an empty model name")
        if model in values:
            raise DataError(f"{path}: row {lineno}: model {model!r} appears twice")
        parsed: dict[str, float] = {}
        for col, cell in zip(header[1:], row[1:], strict=True):
            cell = cell.strip()
            if cell == "":
                parsed[col] = math.nan
                continue
            try:
                parsed[col] = float(cell)
            except ValueError:
                raise DataError(
                    f"{path}: row {lineno} (model {model!r}), column {col!r}: {cell!r} is not a "
                    "number"
                ) from None
        values[model] = parsed
    return ModelTable(values, origin=str(path), default_source="published")


@lru_cache(maxsize=8)
def _load_cached(path: str, relpath: str, mtime_ns: int, size: int, check: bool) -> ModelTable:
    if check:
        verify(Path(path), relpath)
    return read_table_csv(path)


def load_table(
    relpath: str, data_dir: str | os.PathLike[str] | None = None, *, check_sha256: bool = True
) -> ModelTable:
    """The table ``relpath`` of the data directory, sha256-verified against its pin.

    Cached per (path, mtime, size): reading it again in one process costs nothing.
    """
    path = require_file(relpath, data_dir, check_sha256=False)  # verified (and cached) below
    st = path.stat()
    return _load_cached(str(path), relpath, st.st_mtime_ns, st.st_size, check_sha256)

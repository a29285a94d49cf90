"""Per-image prediction records: the one format every classification run is stored in.

Pipeline stage: the boundary between benchmarks (torch) and scoring (pure maths).

A predictions file is a CSV with one row per image and these columns (``PREDICTION_COLUMNS``,
written in this order; the first three are the ImageNet-X format and are required):

=========================  ======  =====================================================
column                     type    meaning
=========================  ======  =====================================================
``file_name``              str     image file name (basename, e.g. ``ILSVRC2012_val_00000001.JPEG``)
``predicted_class``        int     top-1 class index in ``0..num_classes-1`` (ImageNet-1k
                                   index even when the benchmark restricts the argmax to a
                                   class subset, as ImageNet-A/-R do)
``predicted_probability``  float   softmax probability of ``predicted_class``, in [0, 1]
``top5_class_1`` .. ``_5`` int     optional: the 5 most probable classes, most probable first
                                   (``top5_class_1 == predicted_class``)
``label``                  int     optional: the true class index, or -1 (``UNLABELLED``) for
                                   an item without a label (ImageNet val labels are also known
                                   from the ``imagenet-x`` annotations)
=========================  ======  =====================================================

The ImageNet-X base prediction files (``file_name,predicted_class,predicted_probability``)
are valid predictions files. Bad input raises ``DataError`` naming the file, the row (1-based
data row, and its line in the file) and what was expected: a missing column, a value that is
not an integer / not a probability, a class index out of range, a duplicate file name, or
(when the caller knows the image set) an unknown file name.

``predictions_from_probabilities`` builds records from a (N, C) probability array, so a
classification run only has to hand over file names, probabilities and labels.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from repro.base.errors import DataError

REQUIRED_COLUMNS: tuple[str, ...] = ("file_name", "predicted_class", "predicted_probability")
TOP5_COLUMNS: tuple[str, ...] = tuple(f"top5_class_{i}" for i in range(1, 6))
LABEL_COLUMN = "label"
PREDICTION_COLUMNS: tuple[str, ...] = REQUIRED_COLUMNS + TOP5_COLUMNS + (LABEL_COLUMN,)
NUM_CLASSES = 1000
UNLABELLED = -1


@dataclass(frozen=True)
class Predictions:
    """Validated per-image predictions (arrays aligned by row).

    top5: (N, 5) int64 or None; label: (N,) int64 or None; source: where they came from
    (file path or a description), used in error messages.
    """

    file_name: np.ndarray  # (N,) object (str)
    predicted_class: np.ndarray  # (N,) int64
    predicted_probability: np.ndarray  # (N,) float64
    top5: np.ndarray | None = None
    label: np.ndarray | None = None
    source: str = "<predictions>"

    def __len__(self) -> int:
        return int(self.file_name.shape[0])

    def to_frame(self):
        """The records as a pandas DataFrame in ``PREDICTION_COLUMNS`` order.

        Present columns only."""
        import pandas as pd

        data: dict[str, Any] = {
            "file_name": self.file_name,
            "predicted_class": self.predicted_class,
            "predicted_probability": self.predicted_probability,
        }
        if self.top5 is not None:
            for j, col in enumerate(TOP5_COLUMNS):
                data[col] = self.top5[:, j]
        if self.label is not None:
            data[LABEL_COLUMN] = self.label
        return pd.DataFrame(data)

    def to_records(self) -> list[dict[str, Any]]:
        """Plain dicts (the ``ProbeResult.records`` form)."""
        return self.to_frame().to_dict(orient="records")


def _where(source: str, row: int) -> str:
    """Location of 0-based data row ``row``: 1-based data row and its line in a CSV file."""
    return f"{source}: row {row + 1} (line {row + 2})"


def _show(value: Any) -> str:
    """A cell value as the user wrote it (strings quoted, numpy scalars as plain numbers)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value) if isinstance(value, str) else str(value)


def _int_column(
    values: Any, column: str, source: str, num_classes: int | None, lowest: int = 0
) -> np.ndarray:
    import pandas as pd

    series = pd.Series(values)
    numeric = pd.to_numeric(series, errors="coerce")
    arr = np.array(numeric.to_numpy(dtype=float, na_value=np.nan), dtype=float)
    bad = ~np.isfinite(arr)
    bad[~bad] = arr[~bad] != np.round(arr[~bad])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        span = f" 0..{num_classes - 1}" if num_classes is not None else ""
        raise DataError(
            f"{_where(source, i)}: {column} = {_show(series.iloc[i])} is not an integer class "
            f"index (expected an integer{span})"
        )
    if (
        num_classes is not None
    ):  # checked on the floats: a 40-digit index must not wrap around in the cast
        bad = (arr < lowest) | (arr >= num_classes)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            extra = f", or {UNLABELLED} for no label" if lowest < 0 else ""
            raise DataError(
                f"{_where(source, i)}: {column} = {_show(series.iloc[i])} out of range "
                f"(expected a class index in 0..{num_classes - 1}{extra})"
            )
    return arr.astype(np.int64)


def from_frame(
    frame,
    *,
    source: str = "<predictions>",
    num_classes: int = NUM_CLASSES,
    known_files: Iterable[str] | None = None,
    known_what: str = "the image set",
) -> Predictions:
    """Validate a DataFrame (or anything ``pandas.DataFrame`` accepts) into ``Predictions``.

    known_files: when given, every ``file_name`` must be one of them (``known_what`` names the
    set in the error message). Extra columns are ignored.
    """
    import pandas as pd

    frame = pd.DataFrame(frame)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(
            f"{source}: missing column(s) {', '.join(missing)} (expected at least "
            f"{', '.join(REQUIRED_COLUMNS)}; found {', '.join(map(str, frame.columns)) or 'none'})"
        )
    present_top5 = [c for c in TOP5_COLUMNS if c in frame.columns]
    if present_top5 and len(present_top5) != 5:
        absent = [c for c in TOP5_COLUMNS if c not in frame.columns]
        raise DataError(
            f"{source}: incomplete top-5 columns, missing {', '.join(absent)} "
            f"(expected all of {', '.join(TOP5_COLUMNS)} or none)"
        )
    if len(frame) == 0:
        raise DataError(f"{source}: no prediction rows (expected one row per image)")

    names = frame["file_name"]
    empty = names.isna().to_numpy() | (names.astype(str).str.strip() == "").to_numpy()
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise DataError(f"{_where(source, i)}: empty file_name (expected an image file name)")
    file_name = names.astype(str).to_numpy(dtype=object)
    dup = pd.Series(file_name).duplicated(keep="first").to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        first = int(np.flatnonzero(file_name == file_name[i])[0])
        raise DataError(
            f"{_where(source, i)}: duplicate file_name {file_name[i]!r} "
            f"(first at row {first + 1}; expected one row per image)"
        )
    if known_files is not None:
        known = (
            known_files if isinstance(known_files, (set, frozenset, Mapping)) else set(known_files)
        )
        unknown = ~np.fromiter((n in known for n in file_name), dtype=bool, count=len(file_name))
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise DataError(
                f"{_where(source, i)}: unknown file_name {file_name[i]!r} "
                f"(expected an image of {known_what})"
            )

    predicted_class = _int_column(frame["predicted_class"], "predicted_class", source, num_classes)
    prob = pd.to_numeric(frame["predicted_probability"], errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )
    bad = ~np.isfinite(prob) | (prob < 0) | (prob > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{_where(source, i)}: predicted_probability = "
            f"{_show(frame['predicted_probability'].iloc[i])} (expected a probability in [0, 1])"
        )

    top5 = None
    if present_top5:
        top5 = np.stack(
            [_int_column(frame[c], c, source, num_classes) for c in TOP5_COLUMNS], axis=1
        )
        mismatch = top5[:, 0] != predicted_class
        if mismatch.any():
            i = int(np.flatnonzero(mismatch)[0])
            raise DataError(
                f"{_where(source, i)}: top5_class_1 = {top5[i, 0]} differs from "
                f"predicted_class = {predicted_class[i]} (expected the same class)"
            )
        srt = np.sort(top5, axis=1)
        repeated = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
        if repeated.any():
            i = int(np.flatnonzero(repeated)[0])
            raise DataError(
                f"{_where(source, i)}: top-5 classes {top5[i].tolist()} repeat a class "
                "(expected 5 distinct classes)"
            )
    label = None
    if LABEL_COLUMN in frame.columns:
        label = _int_column(
            frame[LABEL_COLUMN], LABEL_COLUMN, source, num_classes, lowest=UNLABELLED
        )
    return Predictions(file_name, predicted_class, prob, top5, label, source)


def read_predictions(
    path: str | os.PathLike[str],
    *,
    num_classes: int = NUM_CLASSES,
    known_files: Iterable[str] | None = None,
    known_what: str = "the image set",
) -> Predictions:
    """Read and validate a predictions CSV (see the module docstring for the columns).

    Without ``known_files`` a file is parsed once per process for as long as its bytes stay the
    same (the cache is keyed by its path and the SHA-256 of its content, ``CACHE_SIZE`` files):
    ImageNet-X's 50,000-row file serves the independent rows, their pairing and the report in
    one command. The cached records are read-only arrays, shared by every caller."""
    path = Path(path)
    if not path.is_file():
        raise DataError(
            f"{path}: predictions file not found (expected a CSV with columns "
            f"{', '.join(REQUIRED_COLUMNS)}, ...)"
        )
    data = path.read_bytes()
    if known_files is not None:
        return _parse(data, path, num_classes, known_files, known_what)
    key = (str(path.resolve()), hashlib.sha256(data).hexdigest(), num_classes)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    parsed = _parse(data, path, num_classes, None, known_what)
    for arr in (parsed.file_name, parsed.predicted_class, parsed.predicted_probability,
                parsed.top5, parsed.label):  # fmt: skip
        if arr is not None:  # top5 and label are optional columns
            arr.setflags(write=False)
    _CACHE[key] = parsed
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return parsed


CACHE_SIZE = 8
_CACHE: OrderedDict[tuple[str, str, int], Predictions] = OrderedDict()


def _parse(
    data: bytes,
    path: Path,
    num_classes: int,
    known_files: Iterable[str] | None,
    known_what: str,
) -> Predictions:
    """The predictions in a file's bytes (``path`` names it in errors)."""
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(data), dtype={"file_name": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(
            f"{path}: not a readable CSV ({first}); expected a UTF-8 CSV with columns "
            f"{', '.join(REQUIRED_COLUMNS)}, ..."
        ) from None
    return from_frame(
        frame,
        source=str(path),
        num_classes=num_classes,
        known_files=known_files,
        known_what=known_what,
    )


def from_records(
    records: Sequence[Mapping[str, Any]],
    *,
    source: str = "<records>",
    num_classes: int = NUM_CLASSES,
) -> Predictions:
    """Validate a list of per-image dicts (e.g. ``ProbeResult.records``)."""
    import pandas as pd

    if not records:
        raise DataError(f"{source}: no prediction records (expected one per image)")
    return from_frame(
        pd.DataFrame.from_records(list(records)), source=source, num_classes=num_classes
    )


def write_predictions(predictions: Predictions, path: str | os.PathLike[str]) -> Path:
    """Write predictions as CSV (atomically: a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    predictions.to_frame().to_csv(tmp, index=False, float_format="%.17g")
    os.replace(tmp, path)
    return path


def predictions_from_probabilities(
    file_names: Sequence[str],
    probabilities: np.ndarray,
    labels: Sequence[int] | np.ndarray | None = None,
    *,
    class_subset: Sequence[int] | None = None,
    source: str = "<probabilities>",
) -> Predictions:
    """Records from a (N, C) array of class probabilities.

    Any scores whose order is the probabilities' order will do.

    class_subset: restrict the decision to these class indices (ImageNet-A/-R: argmax over the
    200 classes only); the stored classes stay ImageNet-1k indices and the stored probability
    is the full-softmax probability of the chosen class. Ties go to the lower class index.
    """
    p = np.asarray(probabilities, dtype=np.float64)
    if p.ndim != 2:
        raise DataError(f"{source}: probabilities have shape {p.shape}, expected (N, num_classes)")
    if len(file_names) != p.shape[0]:
        raise DataError(f"{source}: {len(file_names)} file names for {p.shape[0]} probability rows")
    candidates = (
        np.arange(p.shape[1])
        if class_subset is None
        else np.asarray(sorted(class_subset), dtype=np.int64)
    )
    sub = p[:, candidates]
    k = min(5, candidates.size)
    # stable sort on -p: ties keep the lower class index first
    order = np.argsort(-sub, axis=1, kind="stable")[:, :k]
    top = candidates[order]
    predicted = top[:, 0]
    prob = p[np.arange(p.shape[0]), predicted]
    frame: dict[str, Any] = {
        "file_name": list(file_names),
        "predicted_class": predicted,
        "predicted_probability": np.clip(prob, 0.0, 1.0),
    }
    if k == 5:
        for j, col in enumerate(TOP5_COLUMNS):
            frame[col] = top[:, j]
    if labels is not None:
        frame[LABEL_COLUMN] = np.asarray(labels)  # checked by from_frame: 1.7 is not cast to 1
    return from_frame(frame, source=source, num_classes=p.shape[1])

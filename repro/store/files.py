"""Measurement store, on disk: one JSON file and one lock file per (model x measurement) job.

The JSON file is written atomically; the lock file makes sure parallel workers never run or
write the same job.

Layout under the store directory::

    <model>/<measurement>.json             the job record (the commit point)
    <model>/<measurement>.records.csv.gz   per-item records (predictions, decisions), if any
    <model>/<measurement>.lock             held (flock) by the worker running the job

Every file is written to a temporary name in the same folder and moved into place with
``os.replace``, so a reader (or a killed writer) never sees a half-written file. The records
file is written before the JSON that names it; a job without its JSON is not finished.
Locks are advisory ``flock`` locks: the kernel drops them when the holder dies (even on
SIGKILL), so a killed sweep leaves no stale claim behind.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import gzip
import hashlib
import io
import json
import os
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from repro.base.atomic import clean_stale_temp, publish, temp_file
from repro.base.errors import DataError
from repro.store.record import JobRecord
from repro.store.validate import check_record, corrupt_message

RECORD_SUFFIX = ".json"
RECORDS_SUFFIX = ".records.csv.gz"
LOCK_SUFFIX = ".lock"


def _safe(name: str) -> str:
    """A file-name-safe form of a model or measurement name (``/`` and NUL are escaped)."""
    if not name or name in {".", ".."}:
        raise ValueError(f"invalid store name {name!r}")
    return name.replace("%", "%25").replace("/", "%2F").replace("\\", "%5C").replace("\0", "%00")


# errors a user can cause by where the store is (read-only, no space): one line, not a traceback
_USER_OS_ERRORS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT}


def _write_error(path: Path, exc: OSError) -> OSError | DataError:
    if exc.errno in _USER_OS_ERRORS:
        return DataError(
            f"cannot write {path}: {exc.strerror} (the measurement store must be writable: fix its "
            "permissions or choose another with --store / REPRO_STORE_DIR)"
        )
    return exc


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that ``path`` is either the old or the complete new file.

    The mode is as the umask allows (``repro.base.atomic.publish``).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = temp_file(path)
    except OSError as exc:
        raise _write_error(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            publish(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _write_error(path, exc) from None
        raise


def records_to_csv_gz(rows: Sequence[dict[str, Any]]) -> bytes:
    """Per-item records as gzipped CSV (columns: the union of keys, first-seen order)."""
    fields: list[str] = []
    for row in rows:
        for key in row:
            if key not in fields:
                fields.append(key)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    # mtime=0: the same records give the same bytes (and the same sha256)
    return gzip.compress(buf.getvalue().encode(), mtime=0)


class Store:
    """The measurement store rooted at ``root`` (created on first write)."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self.problems: list[
            tuple[Path, str]
        ] = []  # (path, message) of corrupt records skipped by the last iteration

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    # paths ----------------------------------------------------------------------------------
    def record_path(self, model: str, measurement: str) -> Path:
        return self.root / _safe(model) / f"{_safe(measurement)}{RECORD_SUFFIX}"

    def records_path(self, model: str, measurement: str) -> Path:
        return self.root / _safe(model) / f"{_safe(measurement)}{RECORDS_SUFFIX}"

    def lock_path(self, model: str, measurement: str) -> Path:
        return self.root / _safe(model) / f"{_safe(measurement)}{LOCK_SUFFIX}"

    # reading --------------------------------------------------------------------------------
    def read(self, model: str, measurement: str) -> JobRecord | None:
        """The stored record of a job, or None when the job has not finished.

        A corrupt record, or one of another job, is a DataError naming the file and how to remove
        it.
        """
        path = self.record_path(model, measurement)
        return self._read_path(path) if path.is_file() else None

    def _read_path(self, path: Path) -> JobRecord:
        try:
            with path.open() as fh:
                data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise DataError(
                corrupt_message(path, f"is not valid JSON ({exc.msg} at line {exc.lineno})")
            ) from None
        except RecursionError:
            raise DataError(
                corrupt_message(path, "is nested too deeply to be a job record")
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise DataError(
                corrupt_message(path, f"is not a readable UTF-8 file ({exc})")
            ) from None
        check_record(data, path)
        if (
            self.record_path(data["model"], data["measurement"]) != path
        ):  # copied from another job's place
            raise DataError(
                corrupt_message(
                    path,
                    f"is of {data['model']} x {data['measurement']}, whose place is "
                    f"{self.record_path(data['model'], data['measurement'])} (a record counts only "
                    "in its own folder)",
                )
            )
        return JobRecord.from_dict(data)

    def __iter__(self) -> Iterator[JobRecord]:
        """Every valid stored record, ordered by model then measurement.

        A corrupt or misplaced record is skipped and its message (path and how to remove it) added
        to ``problems``, so one bad file never stops a sweep, ``compare`` or ``reproduce``.
        """
        self.problems = []
        if not self.root.is_dir():
            return
        for model_dir in sorted(
            p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith(".")
        ):
            for path in sorted(model_dir.glob(f"*{RECORD_SUFFIX}")):
                if path.name.startswith("."):
                    continue
                try:
                    rec = self._read_path(path)
                except DataError as exc:
                    self.problems.append((path, str(exc)))
                    continue
                yield rec

    def clean_temp(self) -> list[Path]:
        """Remove our own stale temp files left in the store by killed writers.

        The temp files are those of ``repro.base.atomic``.
        """
        removed = clean_stale_temp(self.root) if self.root.is_dir() else []
        if self.root.is_dir():
            for model_dir in self.root.iterdir():
                if model_dir.is_dir():
                    removed += clean_stale_temp(model_dir)
        return removed

    def records(self) -> list[JobRecord]:
        return list(self)

    def read_items(self, record: JobRecord) -> list[dict[str, str]]:
        """The per-item rows of a record (strings, as in the CSV); checks their sha256."""
        if not record.records_file:
            return []
        path = self.root / _safe(record.model) / record.records_file
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise DataError(
                f"{path}: per-item records of {record.model}/{record.measurement} missing ({exc})"
            ) from None
        if record.records_sha256 and hashlib.sha256(raw).hexdigest() != record.records_sha256:
            raise DataError(
                f"{path}: sha256 differs from the one in its job record (file changed after the "
                "run)"
            )
        try:
            return list(csv.DictReader(io.StringIO(gzip.decompress(raw).decode("utf-8"))))
        except (
            OSError,
            EOFError,
            zlib.error,
            UnicodeDecodeError,
            csv.Error,
        ) as exc:  # BadGzipFile is an OSError
            raise DataError(
                corrupt_message(path, f"is not a gzipped UTF-8 CSV of per-item records ({exc})")
            ) from None

    # writing --------------------------------------------------------------------------------
    def write(self, record: JobRecord, items: Sequence[dict[str, Any]] = ()) -> Path:
        """Store a job record (and its per-item rows) atomically; returns the record's path."""
        path = self.record_path(record.model, record.measurement)
        if items:
            blob = records_to_csv_gz(items)
            rpath = self.records_path(record.model, record.measurement)
            atomic_write_bytes(rpath, blob)
            record.records_file = rpath.name
            record.n_records = len(items)
            record.records_sha256 = hashlib.sha256(blob).hexdigest()
        text = json.dumps(record.as_json(), indent=1, sort_keys=False, allow_nan=True)
        atomic_write_bytes(path, (text + "\n").encode())
        return path

    def lock(self, model: str, measurement: str) -> JobLock:
        return JobLock(self.lock_path(model, measurement))


class JobLock:
    """An exclusive, non-blocking claim on one job (``flock`` on its lock file).

    ``acquire()`` returns False when another live process holds the job. The kernel releases
    the lock when the holder exits for any reason, so no claim outlives a killed worker.
    """

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> bool:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise _write_error(self.path, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> JobLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

"""The decode-once crop cache: each dataset's uint8 crops, decoded once and read by every model.

Each dataset (each ImageNet-C condition) is decoded once by its preprocessing into uint8 crops
that every model and every measurement reads.

Pipeline stage: datasets. Layout under ``<user cache>/crops`` (``REPRO_CACHE_DIR`` moves the
user cache): one folder per (dataset, root, fingerprint)::

    <name>-<root hash>-<fingerprint>/
        images.u8     raw uint8, C order, shape (N, 3, 224, 224): a numpy memmap
        labels.npy    int64 (N,)
        meta.json     names, shape, preprocessing id, fingerprint, root, format; written last

The fingerprint hashes the preprocessing id and every source file's name, label, size and
content (not its mtime: a fresh copy of the same files keeps its cache and its measurements),
so a changed, added or removed file (or another preprocessing) selects a new folder,
and the old one is removed after the new one is complete. A cache is built in a private
``.build-*`` folder and renamed into place in one step (rename is atomic on one file system),
so a crash mid-build leaves nothing that is ever read; a lock file keeps concurrent workers
from building the same cache twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from repro.base.errors import DataError
from repro.base.settings import user_cache_dir
from repro.datasets.base import ImageBatch
from repro.datasets.decode import CROP, FileSource, decode_into

CACHE_FORMAT = "repro-crops/1"


def default_cache_dir() -> Path:
    return user_cache_dir() / "crops"


def _root_hash(root: str) -> str:
    return hashlib.sha256(os.path.abspath(root).encode()).hexdigest()[:8]


def cache_key(files: FileSource) -> str:
    safe = files.name.replace("/", "_")
    return f"{safe}-{_root_hash(files.root)}-{files.fingerprint()[:16]}"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: rely on the atomic rename alone
        yield
        return
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _load_meta(folder: Path, fingerprint: str) -> dict | None:
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        return None
    try:
        meta = json.loads(meta_path.read_text())
    except ValueError:
        return None
    n = int(meta.get("n", -1))
    ok = (
        meta.get("format") == CACHE_FORMAT
        and meta.get("fingerprint") == fingerprint
        and (folder / "images.u8").is_file()
        and (folder / "images.u8").stat().st_size == n * 3 * CROP * CROP
    )
    return meta if ok else None


def build(
    files: FileSource,
    cache_dir: Path | None = None,
    *,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """The cache folder of ``files``, decoding it first unless a valid one exists."""
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = cache_key(files)
    final = cache_dir / key
    if _load_meta(final, files.fingerprint()) is not None:
        return final
    with _locked(cache_dir / f".{key}.lock"):
        if _load_meta(final, files.fingerprint()) is not None:  # built by another worker meanwhile
            return final
        if final.exists():  # incomplete or stale (not produced by this code's atomic rename)
            shutil.rmtree(final, ignore_errors=True)
        for stale in cache_dir.glob(
            f".build-{key}-*"
        ):  # left by a killed builder (we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        tmp = cache_dir / f".build-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            n = len(files)
            if n:
                mm = np.memmap(
                    tmp / "images.u8", dtype=np.uint8, mode="w+", shape=(n, 3, CROP, CROP)
                )
                decode_into(
                    mm,
                    files.items,
                    files.preprocessing,
                    workers=workers if workers is not None else min(8, os.cpu_count() or 1),
                    progress=progress,
                )
                mm.flush()
                del mm
            else:
                (tmp / "images.u8").touch()
            np.save(tmp / "labels.npy", files.labels)
            meta = {
                "format": CACHE_FORMAT,
                "dataset": files.name,
                "n": n,
                "shape": [n, 3, CROP, CROP],
                "preprocessing": files.preprocessing,
                "fingerprint": files.fingerprint(),
                "root": os.path.abspath(files.root),
                "mini": files.mini,
                "label_space": files.label_space,
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "names": files.names,
            }
            with open(tmp / "meta.json", "w") as fh:
                json.dump(meta, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _prune(cache_dir, key)
    return final


def _prune(cache_dir: Path, key: str) -> None:
    """Remove caches of the same dataset and root with another fingerprint."""
    prefix = key[: key.rfind("-") + 1]
    for other in cache_dir.iterdir():
        if other.name.startswith(prefix) and other.name != key and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)


class CachedSource:
    """An ImageSource reading uint8 crops from the crop cache (built on first use)."""

    def __init__(
        self, files: FileSource, cache_dir: Path | None = None, *, workers: int | None = None
    ):
        self.files = files
        self.name = files.name
        self.mini = files.mini
        self.root = files.root
        self.preprocessing = files.preprocessing
        self.label_space = files.label_space
        self.cache_dir = cache_dir
        self.workers = workers
        self._images: np.ndarray | None = None
        self._labels: np.ndarray | None = None
        self._names: list[str] | None = None
        self.folder: Path | None = None

    def __len__(self) -> int:
        return len(self.files)

    def build(self, progress: Callable[[int], None] | None = None) -> Path:
        if self.folder is None:
            self.folder = build(self.files, self.cache_dir, workers=self.workers, progress=progress)
            meta = json.loads((self.folder / "meta.json").read_text())
            n = int(meta["n"])
            if n != len(self.files):
                raise DataError(
                    f"crop cache {self.folder}: holds {n} images, expected {len(self.files)}"
                )
            self._images = (
                np.memmap(
                    self.folder / "images.u8", dtype=np.uint8, mode="r", shape=(n, 3, CROP, CROP)
                )
                if n
                else np.empty((0, 3, CROP, CROP), np.uint8)
            )
            self._labels = np.load(self.folder / "labels.npy")
            self._names = list(meta["names"])
        return self.folder

    @property
    def images(self) -> np.ndarray:
        self.build()
        assert self._images is not None
        return self._images

    @property
    def labels(self) -> np.ndarray:
        return self.files.labels

    @property
    def names(self) -> list[str]:
        return self.files.names

    def batches(self, batch_size: int) -> Iterator[ImageBatch]:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.build()
        assert self._images is not None and self._labels is not None and self._names is not None
        for start in range(0, len(self), batch_size):
            stop = start + batch_size
            yield ImageBatch(
                np.array(self._images[start:stop]),
                self._labels[start:stop],
                self._names[start:stop],
            )

    def fingerprint(self) -> str:
        return self.files.fingerprint()

    def release(self) -> None:
        """Drop the in-memory names/labels/map (reopened on the next pass)."""
        self.files.release()
        self.folder = None
        self._images = self._labels = self._names = None

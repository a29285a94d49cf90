"""Pinned sources of the published data files, sha256 verification and download.

``manifest.json`` lists every file by its path inside the data directory, the public
repository and commit it comes from, and its sha256 (from shared/data/SHA256SUMS).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from repro.base.errors import DataError
from repro.base.settings import data_dir as resolve_data_dir

MANIFEST = Path(__file__).with_name("manifest.json")
FETCH_HINT = "python -m repro data fetch"


@dataclass(frozen=True)
class PinnedFile:
    path: str  # relative to the data directory
    url: str
    sha256: str
    repository: str
    commit: str
    source_path: str
    license: str


@lru_cache(maxsize=1)
def manifest() -> dict[str, PinnedFile]:
    raw = json.loads(MANIFEST.read_text())
    return {f["path"]: PinnedFile(**f) for f in raw["files"]}


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def require_file(relpath: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """Path of a published file, or a one-line DataError naming where it was looked for."""
    root = resolve_data_dir(data_dir)
    path = root / relpath
    if not path.is_file():
        raise DataError(
            f"published data file {relpath} not found in data directory {root} "
            f"(set --data-dir or REPRO_DATA_DIR, or run `{FETCH_HINT}`)"
        )
    return path


def verify(path: Path, relpath: str) -> None:
    """Raise DataError when ``path`` does not have the pinned checksum of ``relpath``."""
    pinned = manifest().get(relpath)
    if pinned is None:
        return
    actual = sha256_of(path)
    if actual != pinned.sha256:
        raise DataError(
            f"{path}: sha256 {actual} does not match the pinned {pinned.sha256} "
            f"({pinned.repository}@{pinned.commit[:7]}:{pinned.source_path}); "
            f"the file is corrupt or a different version; re-run `{FETCH_HINT}`"
        )


def fetch(
    relpaths: list[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    opener=urllib.request.urlopen,
) -> list[Path]:
    """Download pinned files into the data directory (skipping verified ones), atomically."""
    root = resolve_data_dir(data_dir)
    files = manifest()
    wanted = relpaths or list(files)
    written = []
    for rel in wanted:
        if rel not in files:
            raise DataError(f"{rel}: not a pinned file (see {MANIFEST})")
        pinned = files[rel]
        dest = root / rel
        if dest.is_file() and sha256_of(dest) == pinned.sha256:
            written.append(dest)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        with opener(pinned.url) as resp:
            payload = resp.read()
        digest = hashlib.sha256(payload).hexdigest()
        if digest != pinned.sha256:
            raise DataError(
                f"download of {pinned.url} has sha256 {digest}, expected {pinned.sha256}; not saved"
            )
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
        os.replace(tmp, dest)
        written.append(dest)
    return written

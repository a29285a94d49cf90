"""Pinned sources of the published data files, sha256 verification and download.

Each study pins its published files in its ``study.toml`` (``[[published]]``: the path inside
the data directory, the public repository and commit it comes from, and its sha256, from
shared/data/SHA256SUMS); ``manifest()`` gathers the pins of every discovered study.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from repro.base.errors import DataError
from repro.base.settings import data_dir as resolve_data_dir
from repro.base.study import discover

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


def manifest() -> dict[str, PinnedFile]:
    """Every pinned file of every discovered study, by its path inside the data directory
    (a path pinned twice with different checksums is a DataError naming both studies)."""
    out: dict[str, PinnedFile] = {}
    owner: dict[str, str] = {}
    for name, study in discover().items():
        for pin in study.published:
            pinned = PinnedFile(**pin)
            if pinned.path in out and out[pinned.path] != pinned:
                raise DataError(f"{study.origin}: {pinned.path} is pinned differently by study {owner[pinned.path]!r}")
            out[pinned.path] = pinned
            owner[pinned.path] = name
    return out


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
            raise DataError(f"{rel}: not a pinned file (the studies' study.toml [[published]] pins name the files)")
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

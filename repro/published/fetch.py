"""Pinned sources of the published data files, sha256 verification and download.

Each study pins its published files in its ``study.toml`` (``[[published]]``: the path inside
the data directory, the public repository and commit it comes from, and its sha256, from
shared/data/SHA256SUMS); ``manifest()`` gathers the pins of every discovered study.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request
from pathlib import Path

from repro.base.errors import DataError
from repro.base.filehash import sha256_of
from repro.base.settings import data_dir as resolve_data_dir
from repro.base.study import Pin as PinnedFile
from repro.base.study import discover

FETCH_HINT = "python -m repro data fetch"


def manifest() -> dict[str, PinnedFile]:
    """Every pinned file of every discovered study, by its path inside the data directory
    (a path pinned twice with different checksums is a DataError naming both studies)."""
    out: dict[str, PinnedFile] = {}
    owner: dict[str, str] = {}
    for name, study in discover().items():
        for pinned in study.published:
            if pinned.path in out and out[pinned.path] != pinned:
                raise DataError(f"{study.origin}: {pinned.path} is pinned differently by study {owner[pinned.path]!r}")
            out[pinned.path] = pinned
            owner[pinned.path] = name
    return out


def require_file(relpath: str, data_dir: str | os.PathLike[str] | None = None, *,
                 check_sha256: bool = True) -> Path:
    """Path of a published file, verified against its pinned sha256 (when the manifest pins it),
    or a one-line DataError naming where it was looked for / the pinned and the actual hash."""
    root = resolve_data_dir(data_dir)
    path = root / relpath
    if not path.is_file():
        raise DataError(
            f"published data file {relpath} not found in data directory {root} "
            f"(set --data-dir or REPRO_DATA_DIR, or run `{FETCH_HINT}`)"
        )
    if check_sha256:
        verify_cached(path, relpath)
    return path


_VERIFIED: dict[tuple[str, str, int, int], bool] = {}


def verify_cached(path: Path, relpath: str) -> None:
    """``verify``, once per (file, mtime, size) in a process (every reader of a published file checks it)."""
    st = path.stat()
    key = (str(path.resolve()), relpath, st.st_mtime_ns, st.st_size)
    if key not in _VERIFIED:
        verify(path, relpath)
        _VERIFIED[key] = True


def verify_if_pinned(path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None) -> None:
    """Verify ``path`` when it is a pinned file of the data directory (e.g. a model-vs-human
    decisions CSV given by its path); any other file is left alone."""
    root = resolve_data_dir(data_dir).resolve()
    try:
        rel = Path(path).resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return
    if rel in manifest():
        verify_cached(Path(path), rel)


def verify(path: Path, relpath: str) -> None:
    """Raise DataError when ``path`` does not have the pinned checksum of ``relpath``."""
    pinned = manifest().get(relpath)
    if pinned is None:
        return
    actual = sha256_of(path)
    if actual != pinned.sha256:
        raise DataError(
            f"{path}: sha256 {actual} does not match the pinned sha256 {pinned.sha256} "
            f"({pinned.repository}@{pinned.commit[:7]}:{pinned.source_path}); "
            f"the file is corrupt or a different version; re-run `{FETCH_HINT}`"
        )


FETCH_TIMEOUT_S = 60


def _urlopen(url: str):
    """urllib with a timeout: a dead network fails in FETCH_TIMEOUT_S, never hangs."""
    return urllib.request.urlopen(url, timeout=FETCH_TIMEOUT_S)


def _download(url: str, opener) -> bytes:
    """The bytes at ``url``; every network failure is one DataError line (offline, timeout, HTTP error)."""
    try:
        with opener(url) as resp:
            return resp.read()
    except (OSError, ValueError) as exc:  # URLError, HTTPError, socket.timeout are OSErrors
        reason = getattr(exc, "reason", None) or exc
        raise DataError(f"could not download {url}: {reason} (offline? nothing was written; run `{FETCH_HINT}` "
                        "again when the network is back, or put the files into the data directory by hand)") from None


def fetch(
    relpaths: list[str] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    opener=_urlopen,
) -> list[Path]:
    """Download pinned files into the data directory (skipping verified ones), atomically.

    A file is downloaded and verified before its folder is created, so a failed download
    leaves no empty folder behind; the file gets the umask's mode (a shared data directory)."""
    from repro.base.atomic import clean_stale_temp, publish, temp_file

    root = resolve_data_dir(data_dir)
    files = manifest()
    wanted = relpaths or list(files)
    written = []
    for rel in wanted:
        if rel not in files:
            import difflib

            close = difflib.get_close_matches(rel, list(files), n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise DataError(f"{rel}: not a pinned file ({hint}expected a path inside the data directory as pinned by "
                            "a study.toml [[published]] entry; `python -m repro data verify -v` lists them)")
        pinned = files[rel]
        dest = root / rel
        if dest.is_file() and sha256_of(dest) == pinned.sha256:
            written.append(dest)
            continue
        payload = _download(pinned.url, opener)
        digest = hashlib.sha256(payload).hexdigest()
        if digest != pinned.sha256:
            raise DataError(
                f"download of {pinned.url} has sha256 {digest}, expected {pinned.sha256}; not saved"
            )
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            clean_stale_temp(dest.parent)  # left by an earlier, killed fetch
            fd, tmp = temp_file(dest)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(payload)
                    publish(fh.fileno())
                os.replace(tmp, dest)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
        except OSError as exc:
            raise DataError(f"cannot write {dest}: {exc.strerror or exc} (the data directory must be writable; "
                            "set --data-dir or REPRO_DATA_DIR)") from None
        written.append(dest)
    return written

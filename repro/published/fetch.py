"""Pinned sources of the published data files, sha256 verification and download.

Each study pins its published files in its ``study.toml`` (``[[published]]``: the path inside
the data directory, the public repository and commit it comes from, and its sha256, from
shared/data/SHA256SUMS); ``manifest()`` gathers the pins of every discovered study.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import shutil
import urllib.error
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from repro.base.errors import DataError
from repro.base.filehash import sha256_of
from repro.base.settings import data_dir as resolve_data_dir
from repro.base.study import Pin as PinnedFile
from repro.base.study import discover

FETCH_HINT = "python -m repro data fetch"
RETRIES = 2  # a transfer that failed on the network is tried this many more times (pooch)


def manifest() -> dict[str, PinnedFile]:
    """Every pinned file of every discovered study, by its path inside the data directory.

    A path pinned twice with different checksums is a DataError naming both studies.
    """
    out: dict[str, PinnedFile] = {}
    owner: dict[str, str] = {}
    from repro.published.independent import pins

    for name, study in discover().items():
        for pinned in (*study.published, *pins(study)):
            if pinned.path in out and out[pinned.path] != pinned:
                raise DataError(
                    f"{study.origin}: {pinned.path} is pinned differently by study "
                    f"{owner[pinned.path]!r}"
                )
            out[pinned.path] = pinned
            owner[pinned.path] = name
    return out


def require_file(
    relpath: str, data_dir: str | os.PathLike[str] | None = None, *, check_sha256: bool = True
) -> Path:
    """Path of a published file, verified against its pinned sha256 (when the manifest pins it).

    Otherwise a one-line DataError naming where it was looked for / the pinned and the actual hash.
    """
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
    """``verify``, once per (file, mtime, size) in a process.

    Every reader of a published file checks it, hence the cache.
    """
    st = path.stat()
    key = (str(path.resolve()), relpath, st.st_mtime_ns, st.st_size)
    if key not in _VERIFIED:
        verify(path, relpath)
        _VERIFIED[key] = True


def verify_if_pinned(
    path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None
) -> None:
    """Verify ``path`` when it is a pinned file of the data directory; leave any other file alone.

    An example of such a path is a model-vs-human decisions CSV given by its path.
    """
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


def _transfer(url: str, output_file: str, fetcher: Any = None) -> None:
    """The bytes at ``url`` into ``output_file``: an HTTP download, or a copy for a local mirror.

    The download is pooch's HTTP downloader (requests) with a timeout, so a dead network fails in
    FETCH_TIMEOUT_S, never hangs; a ``file://`` URL (a mirror) is copied.
    """
    if urlparse(url).scheme == "file":
        try:
            with (
                open(url2pathname(urlparse(url).path), "rb") as src,
                open(output_file, "wb") as out,
            ):
                shutil.copyfileobj(src, out)
        except OSError as exc:
            raise urllib.error.URLError(exc) from None
        return
    import pooch

    pooch.HTTPDownloader(progressbar=False, timeout=FETCH_TIMEOUT_S)(url, output_file, fetcher)


def _offline(url: str, exc: BaseException) -> DataError:
    """Every network failure is one DataError line (offline, timeout, HTTP error)."""
    reason = getattr(exc, "reason", None) or exc
    return DataError(
        f"could not download {url}: {reason} (offline? nothing was written; run `{FETCH_HINT}` "
        "again when the network is back, or put the files into the data directory by hand)"
    )


def fetch(
    relpaths: list[str] | None = None, data_dir: str | os.PathLike[str] | None = None
) -> list[Path]:
    """Download pinned files into the data directory (skipping verified ones), through pooch.

    Each file is written beside its destination, checked against its pinned sha256 and only then
    moved into place; a failed transfer is retried (``RETRIES``). A failed download leaves no file
    and no empty folder behind; a file gets the umask's mode (a shared data directory).
    """
    import pooch
    import requests

    from repro.base.atomic import publish

    pooch.get_logger().setLevel("WARNING")
    root = resolve_data_dir(data_dir)
    files = manifest()
    wanted = relpaths or list(files)
    written = []
    for rel in wanted:
        if rel not in files:
            close = difflib.get_close_matches(rel, list(files), n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            raise DataError(
                f"{rel}: not a pinned file ({hint}expected a path inside the data directory as "
                "pinned by a study.toml [[published]] entry; `python -m repro data verify -v` "
                "lists them)"
            )
        pinned = files[rel]
        dest = root / rel
        if dest.is_file() and sha256_of(dest) == pinned.sha256:
            written.append(dest)
            continue

        def download(url: str, output_file: str, fetcher: Any, pinned: PinnedFile = pinned) -> None:
            _transfer(url, output_file, fetcher)
            digest = sha256_of(output_file)
            if digest != pinned.sha256:
                raise DataError(
                    f"download of {pinned.url} has sha256 {digest}, expected {pinned.sha256}; not "
                    "saved"
                )
            publish(output_file)

        created = [d for d in (dest.parent, *dest.parent.parents) if not d.exists()]
        # the pinned hash: a file there that is not the pinned one is downloaded again, and replaced
        fetcher = pooch.create(
            path=dest.parent,
            base_url="",
            registry={dest.name: f"sha256:{pinned.sha256}"},
            urls={dest.name: pinned.url},
            retry_if_failed=RETRIES,
        )
        try:
            written.append(Path(fetcher.fetch(dest.name, downloader=download, progressbar=False)))
        except (requests.RequestException, OSError, ValueError) as exc:
            for folder in created:  # the folders made for it, when still empty
                with contextlib.suppress(OSError):
                    folder.rmdir()
            if (
                isinstance(exc, OSError)
                and exc.filename is not None
                and not isinstance(exc, urllib.error.URLError)
            ):
                raise DataError(
                    f"cannot write {dest}: {exc.strerror or exc} (the data directory must be "
                    "writable; set --data-dir or REPRO_DATA_DIR)"
                ) from None
            raise _offline(pinned.url, exc) from None
        except DataError:
            for folder in created:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            raise
    return written

"""Datasets stage: the sha256 of each image file, remembered across runs.

A dataset's fingerprint hashes its files' bytes (``repro.datasets.decode.files_fingerprint``),
so that a fresh copy or a re-mounted folder of the same files keeps every stored measurement.
Reading ImageNet-C's millions of files at every run would cost minutes, so each file's digest is
remembered in ``<user cache>/digests/<folder hash>.json`` (``REPRO_CACHE_DIR`` moves the user
cache) under its name, with the (size, mtime, ctime, inode) it had: an unchanged file is only
``stat``-ed; a changed, copied or re-mounted file is read again. The ctime is what makes this
safe: every write (and every ``touch`` that puts an old mtime back) sets it to now, and no user
call can set it back. The memo is a cache, never a source of truth: an entry counts only when
all four stat fields match, and
a missing, unreadable or corrupt memo file is ignored and rewritten. Writes replace the memo file
in one step (concurrent writers: the last one wins, nothing is ever half-written).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from repro.base.errors import DataError
from repro.base.filehash import sha256_of
from repro.base.settings import user_cache_dir

MEMO_FORMAT = "repro-digests/1"  # files: {name: [size, mtime_ns, ctime_ns, inode, sha256]}


def memo_dir() -> Path:
    return user_cache_dir() / "digests"


def sha256_file(path: str) -> str:
    """sha256 of one file's bytes; an unreadable file is a DataError naming it."""
    try:
        return sha256_of(path)
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None


def _memo_path(folder: str, root: Path) -> Path:
    return root / (hashlib.sha256(folder.encode()).hexdigest()[:24] + ".json")


def _load(path: Path, folder: str) -> dict[str, list]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("format") != MEMO_FORMAT
        or data.get("folder") != folder
    ):
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def _save(path: Path, folder: str, files: dict[str, list]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"format": MEMO_FORMAT, "folder": folder, "files": files}))
        os.replace(tmp, path)
    except OSError:  # a read-only cache costs speed only
        pass


def digests(
    files: Sequence[tuple[str, os.stat_result]], memo_root: Path | None = None
) -> list[str]:
    """The sha256 of each (path, its stat) in ``files``, in order.

    A digest comes from the memo where the file's size, mtime, ctime and inode are those
    remembered, else the file is read (and its digest remembered)."""
    root = memo_dir() if memo_root is None else memo_root
    by_folder: dict[str, list[int]] = defaultdict(list)
    for i, (path, _) in enumerate(files):
        by_folder[os.path.dirname(os.path.abspath(path))].append(i)
    out = [""] * len(files)
    for folder, indices in by_folder.items():
        memo_path = _memo_path(folder, root)
        memo = _load(memo_path, folder)
        changed = False
        for i in indices:
            path, st = files[i]
            name = os.path.basename(path)
            stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
            entry = memo.get(name)
            if (
                isinstance(entry, list)
                and len(entry) == 5
                and entry[:4] == stamp
                and isinstance(entry[4], str)
            ):
                out[i] = entry[4]
                continue
            out[i] = sha256_file(path)
            memo[name] = [*stamp, out[i]]
            changed = True
        if changed:
            _save(memo_path, folder, memo)
    return out

"""Model zoo: trust-on-first-use hashes of downloaded weights that have no published hash.

Most study models publish no sha256 (gdrive, madrylab, MoCo v3, DINO, SwAV, timm files). The
first time such a file is loaded, its sha256 is written to ``<weights_dir>/<model>/weights.lock.json``
(beside the file); every later load hashes the file again and compares. A changed file (a
re-download of another version, a silently corrupted disk, a replaced file) is then a
CheckpointError naming the file, the locked and the actual hash, and how to re-pin it
deliberately (remove its entry from the lock file). Files with a published sha256 in the
spec are checked against that instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repro.base.atomic import publish, temp_file
from repro.base.errors import CheckpointError
from repro.zoo.fetch import sha256_of

LOCK_NAME = "weights.lock.json"
FORMAT = "repro-weights-lock/1"


def lock_path(folder: Path) -> Path:
    return Path(folder) / LOCK_NAME


def read_lock(folder: Path) -> dict[str, dict[str, Any]]:
    """file name -> {"sha256", "size", "pinned_utc"} (empty when there is no lock file)."""
    path = lock_path(folder)
    if not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text())
        files = raw["files"]
        if raw.get("format") != FORMAT or not isinstance(files, dict):
            raise ValueError("unknown format")
        for name, entry in files.items():
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("sha256"), str)
                and len(entry["sha256"]) == 64
            ):
                raise ValueError(f"entry {name!r} has no sha256")
        return files
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(
            f"{path}: not a readable weights lock file ({exc}); remove it to re-pin the weights "
            "in this folder on their next load"
        ) from None


@contextlib.contextmanager
def _exclusive(folder: Path) -> Iterator[None]:
    with open(folder / f".{LOCK_NAME}.flock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _write(folder: Path, files: dict[str, dict[str, Any]], model: str) -> None:
    path = lock_path(folder)
    fd, tmp = temp_file(path)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(
                {"format": FORMAT, "model": model, "files": files}, fh, indent=1, sort_keys=True
            )
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
            publish(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def verify_or_pin(path: Path, model: str, digest: str | None = None) -> str:
    """The sha256 of ``path``: checked against its lock entry, or pinned there on first use."""
    path = Path(path)
    folder = path.parent
    actual = digest or sha256_of(path)
    locked = read_lock(folder).get(path.name)
    if locked is None:
        with _exclusive(folder):
            files = read_lock(folder)  # another process may have pinned it meanwhile
            locked = files.get(path.name)
            if locked is None:
                files[path.name] = {
                    "sha256": actual,
                    "size": path.stat().st_size,
                    "pinned_utc": datetime.now(UTC).isoformat(timespec="seconds"),
                }
                _write(folder, files, model)
                return actual
    if locked["sha256"] != actual:
        raise CheckpointError(
            f"{path}: sha256 {actual} differs from {locked['sha256']} locked in {lock_path(folder)} when the file "
            f"was first loaded ({locked.get('pinned_utc', 'unknown time')}): the weights changed since. If you "
            f"replaced them deliberately, remove the entry {path.name!r} from that lock file (or the file) to pin "
            "the new ones on the next load; otherwise delete the weights file to download it again"
        )
    return actual

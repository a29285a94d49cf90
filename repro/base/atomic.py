"""Files we write: readable by the group as the umask allows, and no temp files left behind.

``tempfile.mkstemp`` creates its file 0600 whatever the umask, so a store, weights folder or
data directory shared by a group would hold files only their writer can read. ``publish``
gives a finished temp file the mode an ordinary ``open()`` would have (0o666 & ~umask) before
it is renamed into place.

Our atomic writes use two temp-name patterns (``TEMP_PATTERNS``): ``.<name>.<8 chars>.tmp``
(store records, published files) and ``.<name>.part-<8 chars>`` (weight downloads), the
8 characters being ``mkstemp``'s. A writer killed mid-write leaves one behind;
``clean_stale_temp`` removes, in one folder, the files matching these patterns that have not
been written to for ``STALE_AFTER_S`` (so a concurrent writer, whose file is fresh, is never
harmed) and nothing else.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

STALE_AFTER_S = 30 * 60
TEMP_PATTERNS = (re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$"), re.compile(r"^\..+\.part-[a-z0-9_]{8}$"))


def current_umask() -> int:
    """The process umask, read without changing it where Linux tells it (``/proc/self/status``)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # fallback: read by setting (not thread-safe), restored at once
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode ``open()`` gives a new file: 0o666 & ~umask."""
    return 0o666 & ~current_umask()


def publish(fd_or_path: int | str | os.PathLike[str]) -> None:
    """Give a temp file the umask's mode before it is renamed into place.

    ``fd_or_path``: the temp file as an open descriptor or as a path."""
    if isinstance(fd_or_path, int):
        os.fchmod(fd_or_path, file_mode())
    else:
        os.chmod(fd_or_path, file_mode())


def temp_file(dest: Path, suffix: str = ".tmp") -> tuple[int, str]:
    """``mkstemp`` beside ``dest`` with our pattern: ``.<name>.<8 chars><suffix>``."""
    return tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=suffix)


def is_our_temp(name: str) -> bool:
    return any(p.match(name) for p in TEMP_PATTERNS)


def clean_stale_temp(
    folder: str | os.PathLike[str], older_than_s: float = STALE_AFTER_S
) -> list[Path]:
    """Remove our temp files in ``folder`` untouched for ``older_than_s``.

    Returns what was removed."""
    removed: list[Path] = []
    cutoff = time.time() - older_than_s
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not is_our_temp(entry.name):
            continue
        try:
            if (
                entry.is_file(follow_symlinks=False)
                and entry.stat(follow_symlinks=False).st_mtime < cutoff
            ):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:  # gone meanwhile, or not ours to remove
            continue
    return removed

"""A command's result kept on disk, reused when the command is asked again about the same inputs.

An interactive command asked again about the same inputs answers from the disk instead of
recomputing (``python -m repro claims``: its fits and bootstraps). The key is the rule of every
cache (``repro.base.result_cache``): the command's declared inputs (its options, the terminal width,
every ``REPRO_*`` variable, the config file in use and its content), the package's source, the
numerical environment, plus the versions of every declared dependency (read from their metadata,
nothing imported). What the command reads from disk is not declared by hand but recorded while it
runs (``sys.addaudithook``'s ``open`` events):

- every file it opened outside the package, the Python installation and the user cache (whose
  entries are keyed themselves), and every file it tried to open and did not find, with the
  sha256 of its content (or its absence);
- the folders the caller names (the data directory, the measurement store) by a signature of
  every file under them (relative path, size, modification time): a file added, removed or
  rewritten anywhere below them, read or only looked for, counts.

A kept result is returned only when all of that is as it was; it is stored only when the
folders' signatures did not change while the command ran. ``REPRO_RESULT_CACHE=off`` computes
every time; a corrupt entry is recomputed, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repro.base.atomic import publish, temp_file
from repro.base.result_cache import cache_dir, digest, source_digest, use_cache

FORMAT = "command-1"  # bump when an entry's meaning changes
ABSENT = "absent"

_recording: list[dict[str, bool]] = []  # the open recorders: {path: opened for writing}
_hooked = False


def _on_audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _recording:
        return
    path, mode, flags = (tuple(args) + (None, None))[:3]
    if not isinstance(path, (str, bytes, os.PathLike)):
        return  # a file descriptor
    if isinstance(mode, str):
        writes = any(c in mode for c in "wax+")
    else:
        writes = isinstance(flags, int) and bool(flags & (os.O_WRONLY | os.O_RDWR))
    name = os.path.abspath(os.fsdecode(path))
    for opened in _recording:
        opened[name] = opened.get(name, False) or writes


@contextmanager
def recording() -> Iterator[dict[str, bool]]:
    """The files opened while the block runs, each with whether it was opened for writing."""
    global _hooked
    if not _hooked:  # one hook per process (an audit hook cannot be removed)
        sys.addaudithook(_on_audit)
        _hooked = True
    opened: dict[str, bool] = {}
    _recording.append(opened)
    try:
        yield opened
    finally:
        _recording.remove(opened)


def _excluded_roots() -> tuple[str, ...]:
    """The folders where a read is not an input of its own.

    The package (its source is in the key), the Python installation and its libraries
    (their versions are), the user cache (keyed entries), and the system's pseudo-files."""
    import repro
    from repro.base.settings import user_cache_dir

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(repro.__file__).parent)}
    roots |= {p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)}
    roots |= {str(user_cache_dir()), "/proc", "/sys", "/dev", "/usr/share/zoneinfo"}
    return tuple(os.path.join(os.path.abspath(r), "") for r in roots)


def file_state(path: str) -> str:
    """The sha256 of a file's content, or ``absent``."""
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return ABSENT
    except OSError as exc:  # a link loop, no permission: never equal to a content digest
        return f"unreadable (errno {exc.errno})"


def tree_signature(root: Path) -> str:
    """A digest of every file under ``root`` (relative path, size, modification time in ns).

    ``absent`` for a folder that does not exist."""
    if not root.is_dir():
        return ABSENT
    h = hashlib.sha256()
    seen: set[str] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):  # a linked folder counts too
        real = os.path.realpath(folder)
        if real in seen:  # a link loop: walked once
            dirs[:] = []
            continue
        seen.add(real)
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            rel = os.path.relpath(path, root)
            h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def dependency_versions() -> dict[str, str]:
    """The installed version of every dependency the package declares (from their metadata)."""
    import platform
    import re
    from importlib import metadata

    out = {"python": platform.python_version(), "machine": platform.machine()}
    try:
        requires = metadata.requires("repro") or []
    except metadata.PackageNotFoundError:
        requires = []
    for req in requires:
        if "extra ==" in req:
            continue
        name = re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0]
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = ABSENT
    return out


def _config_state() -> dict[str, str]:
    from repro.base.config_check import find_config

    try:
        path, how = find_config()
    except Exception as exc:  # the command reports it; the key only needs to differ
        return {"error": str(exc)}
    return {"path": str(path), "how": how, "content": file_state(str(path)) if path else ABSENT}


def command_key(kind: str, inputs: Any) -> str:
    """The key of a command's result (see the module docstring): no numerical library imported."""
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("REPRO_")}
    return digest(
        {
            "format": FORMAT,
            "kind": kind,
            "inputs": inputs,
            "env": env,
            "cwd": os.getcwd(),
            "config": _config_state(),
            "versions": dependency_versions(),
            "source": source_digest(),
        }
    )


def _valid(entry: dict[str, Any], key: str, trees: Sequence[Path]) -> bool:
    if entry.get("key") != key or "result" not in entry:
        return False
    if entry.get("trees") != {str(t): tree_signature(t) for t in trees}:
        return False
    return all(file_state(p) == state for p, state in entry.get("files", {}).items())


def cached_command(
    kind: str, inputs: Any, trees: Sequence[Path], compute: Callable[[], Any]
) -> tuple[Any, bool]:
    """``compute()``'s JSON result, from the cache when it is valid, else computed and stored.

    Returns ``(result, True)`` from the cache, else ``(result, False)`` once computed, recorded
    and stored."""
    if not use_cache():
        return compute(), False
    key = command_key(kind, inputs)
    path = cache_dir() / f"{kind}-{key}.json"
    if path.is_file():
        try:
            entry = json.loads(path.read_text())
            if _valid(entry, key, trees):
                return entry["result"], True
        except (OSError, ValueError, AttributeError, TypeError):
            pass
    before = {str(t): tree_signature(t) for t in trees}
    with recording() as opened:
        result = compute()
    after = {str(t): tree_signature(t) for t in trees}
    if before != after:  # the folders changed under the command: nothing to keep
        return result, False
    excluded = _excluded_roots()
    written = {p for p, w in opened.items() if w}
    files = {
        p: file_state(p)
        for p in sorted(opened)
        if p not in written and not p.startswith(excluded) and not os.path.isdir(p)
    }
    entry = {"key": key, "kind": kind, "trees": after, "files": files, "result": result}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = temp_file(path)
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(entry) + "\n")
        publish(tmp)
        os.replace(tmp, path)
    except OSError:  # a read-only cache only costs the recomputation
        pass
    return result, False

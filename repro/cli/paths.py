"""Paths a command writes or reads, checked before it does any work.

A bad ``--out`` of a command that computes for a minute fails in milliseconds, with one line naming
the part of the path that is wrong (a folder given as a file, a file where a folder must be, a
symlink loop, no permission)."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

from repro.base.atomic import publish, temp_file
from repro.base.errors import ConfigError


def _loops(path: Path) -> bool:
    try:
        path.stat()
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _nearest_existing(path: Path, option: str) -> Path:
    """The deepest part of ``path`` that exists (the folder a missing output will be made in).

    A ConfigError when a part of it is a file or a symlink loop."""
    for part in [path, *path.parents]:
        try:
            st = part.stat()
        except FileNotFoundError:
            if part.is_symlink():
                raise ConfigError(
                    f"{option} {path}: {part} is a symlink to nothing; remove the link or choose "
                    "another path"
                ) from None
            continue
        except NotADirectoryError:
            continue  # a part below a file: the file is found further up and named there
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                loop = next(q for q in [*reversed(part.parents), part] if _loops(q))
                raise ConfigError(
                    f"{option} {path}: {loop} is a symlink loop; remove the link or choose another "
                    "path"
                ) from None
            raise ConfigError(
                f"{option} {path}: {part}: {exc.strerror or exc}; choose another path or check "
                "its permissions"
            ) from None
        if part != path and not stat.S_ISDIR(st.st_mode):
            raise ConfigError(
                f"{option} {path}: {part} is a file, not a folder; choose a path whose folders are "
                "folders"
            )
        return part
    return Path(path.anchor or ".")  # pragma: no cover - the root always exists


def _writable(folder: Path, path: Path, option: str) -> None:
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{option} {path}: no permission to write in {folder}; choose another path or check "
            "its permissions"
        )


def output_file(path: str | os.PathLike[str], option: str) -> Path:
    """``path`` checked as an output file before any work is done.

    It must not be a folder nor a symlink loop, its folders must be folders (the missing ones are
    made later), and the folder it goes in must be writable, so that a bad output path of a command
    that computes for a minute fails in milliseconds. ``option`` (``--out``) names it in the
    error."""
    p = Path(path)
    if not str(path).strip():
        raise ConfigError(f"{option}: no path given; expected a file name, or leave the option out")
    found = _nearest_existing(p, option)
    if found == p:
        if p.is_dir():
            raise ConfigError(
                f"{option} {p}: is a folder; expected a file path (e.g. a file name inside that "
                "folder)"
            )
        _writable(p.parent, p, option)
        if not os.access(p, os.W_OK):
            raise ConfigError(
                f"{option} {p}: no permission to overwrite it; choose another path or check its "
                "permissions"
            )
    else:
        _writable(found, p, option)
    return p


def output_dir(path: str | os.PathLike[str], option: str) -> Path:
    """``path`` checked as an output folder before any work is done.

    A folder or missing (made later), not a file nor a symlink loop, its parents folders, and
    writable."""
    p = Path(path)
    if not str(path).strip():
        raise ConfigError(f"{option}: no path given; expected a folder, or leave the option out")
    found = _nearest_existing(p, option)
    if found == p and not p.is_dir():
        raise ConfigError(
            f"{option} {p}: is a file, not a folder; expected a folder (existing or new), or "
            "remove the file"
        )
    _writable(found, p, option)
    return p


def input_dir(path: str | os.PathLike[str], option: str, *, must_exist: bool = False) -> Path:
    """``path`` checked as a folder that is read.

    A folder, or missing (unless ``must_exist``; else the caller says what missing means); not a
    file nor a symlink loop."""
    p = Path(path)
    found = _nearest_existing(p, option)
    if found == p and not p.is_dir():
        raise ConfigError(f"{option} {p}: is a file, not a folder; expected a folder")
    if must_exist and found != p:
        raise ConfigError(f"{option} {p}: no such folder; check the path")
    return p


def write_json(path: str | os.PathLike[str], doc: object) -> Path:
    """Write a command's ``--json`` document whole or not at all; returns the path.

    Indented, a newline at the end; written to a temp file beside it and renamed into place, with
    the mode the umask gives."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temp_file(out)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(doc, indent=1) + "\n")
            publish(fh.fileno())
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out

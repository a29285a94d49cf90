"""Reading the text files a user hands us (TOML, JSON, CSV) with one-line errors.

A file given on the command line or named in a config can be anything: missing, a folder, a
symlink loop, a device, unreadable, latin-1 or UTF-16 instead of UTF-8, binary, nested deeper
than the parser's recursion allows. Each of these raises ``OSError``, ``UnicodeDecodeError`` or
``RecursionError`` from deep inside a parser, which the CLI would show as a traceback. The
readers here turn every one into the caller's ``ReproError`` subclass naming the file, what is
wrong and what was expected (one line, with a hint, for every failure a user can cause).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tomllib
from typing import Any

from repro.base.errors import ConfigError, DataError, ReproError


def os_error_message(path: str | os.PathLike[str], exc: OSError, what: str) -> str:
    """One line for an ``OSError`` met opening ``path`` (``what``: the kind of file expected)."""
    if isinstance(exc, FileNotFoundError):
        return f"{path}: not found (expected {what}; check the path)"
    if isinstance(exc, IsADirectoryError):
        return f"{path}: is a folder (expected {what})"
    if isinstance(exc, NotADirectoryError):
        return (
            f"{path}: a part of the path is a file, not a folder (expected {what}; check the path)"
        )
    if isinstance(exc, PermissionError):
        return f"{path}: permission denied (expected {what} you can read; check its permissions)"
    if exc.errno == errno.ELOOP:
        return f"{path}: a symbolic link loop (expected {what}; point the link at a real file)"
    if exc.errno == errno.ENAMETOOLONG:
        return f"{str(path)[:200]}...: the path is too long (expected {what})"
    return f"{path}: cannot be read ({exc.strerror or exc}; expected {what})"


def read_bytes(
    path: str | os.PathLike[str], what: str, error: type[ReproError] = DataError
) -> bytes:
    """The bytes of a regular file (a FIFO too), else ``error`` naming the file.

    Devices and sockets are refused: reading ``/dev/zero`` would never end."""
    try:
        with open(path, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
                raise error(f"{path}: not a regular file (expected {what})")
            return fh.read()
    except OSError as exc:
        raise error(os_error_message(path, exc, what)) from None


def decode_utf8(
    data: bytes, path: str | os.PathLike[str], what: str, error: type[ReproError] = DataError
) -> str:
    """``data`` as UTF-8 (a UTF-8 byte-order mark dropped), else ``error`` naming the byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        kind = "UTF-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "not UTF-8"
        raise error(
            f"{path}: {kind} text (byte {exc.start}: {exc.reason}; expected {what} saved as UTF-8)"
        ) from None


def read_text(path: str | os.PathLike[str], what: str, error: type[ReproError] = DataError) -> str:
    """The UTF-8 text of a file (``read_bytes`` and ``decode_utf8``)."""
    return decode_utf8(read_bytes(path, what, error), path, what, error)


def read_toml(
    path: str | os.PathLike[str], what: str, error: type[ReproError] = ConfigError
) -> dict[str, Any]:
    """A TOML file as a dict, every failure raised as ``error``.

    The failures: ``read_text``'s, bad TOML, nesting too deep."""
    return parse_toml(read_text(path, what, error), path, what, error)


def parse_toml(
    text: str, path: str | os.PathLike[str], what: str, error: type[ReproError] = ConfigError
) -> dict[str, Any]:
    """TOML text read from ``path`` as a dict.

    Bad TOML or nesting too deep raise ``error`` naming the file."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML ({exc}; expected {what})") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to read (expected {what})") from None


def parse_json(
    text: str,
    path: str | os.PathLike[str],
    what: str,
    error: type[ReproError] = DataError,
    *,
    finite: bool = False,
) -> Any:
    """JSON text read from ``path``.

    ``finite``: ``NaN``/``Infinity`` (Python's extension, not JSON) are refused too, for files
    whose numbers are never undefined."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(text, parse_constant=constant) if finite else json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}; "
            f"expected {what})"
        ) from None
    except ValueError as exc:
        raise error(f"{path}: not valid JSON ({exc}; expected {what})") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to read (expected {what})") from None

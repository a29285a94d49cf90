"""The inputs of a docs capture too slow to rerun in the check (``docs/gen_cli_output.py``): the
repository files it read (the modules every Python process of the command imported, the files
they opened), the published data it read, and ``requirements.lock``, each with its digest. They
are recorded in ``docs/captures.lock.json`` when the example is captured, together with the
digest of the captured text; ``--check`` recomputes them and names the capture and the inputs
that changed since.

Published data is digested by its lines of the data directory's ``SHA256SUMS`` (what ``python -m
repro data verify`` checks the files against), one entry per dataset folder (the first two parts
of the path: ``texture-vs-shape/cue-conflict``); files outside the checkout and the data
directory (the scratch folder's mini data, downloaded weights, temporary files) are derived or
fetched and are not inputs.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable
from pathlib import Path

LOCK = "docs/captures.lock.json"
DATA = "data:"  # the key prefix of a dataset folder
ALWAYS = ("requirements.lock",)  # the third-party versions: an input of every capture
# never inputs: caches, build outputs, this machinery's own files
SKIP_PARTS = {
    ".git",
    ".venv",
    "__pycache__",
    "runs",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".pytest_cache",
    "mutants",
}
# the capture machinery itself: pytest imports it while collecting (docs tests) and mkdocs copies
# it, but it does not shape what a command prints (nox -s lint, which checks it, declares it)
SKIP_FILES = {
    LOCK,
    "docs/capture_hook/sitecustomize.py",
    "docs/capture_inputs.py",
    "docs/gen_cli_output.py",
}


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def text_digest(text: str) -> str:
    """The digest of a captured block's text (the lock's ``output``)."""
    return digest_bytes(text.encode())


def recorded(folder: Path) -> set[Path]:
    """The paths the example's processes wrote into ``folder`` (``docs/capture_hook``)."""
    return {
        Path(line)
        for record in sorted(folder.glob("*.txt"))
        for line in record.read_text().splitlines()
        if line
    }


def _inside(path: Path, folder: Path) -> Path | None:
    try:
        return path.resolve().relative_to(folder.resolve())
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (a test's input)
        return None


def versioned(root: Path) -> set[str] | None:
    """The files of the checkout that git does not ignore (tracked or new), or None outside a git
    checkout (then only the caches of ``SKIP_PARTS`` are left out)."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return set(out.splitlines()) if (root / ".git").exists() else None


def keys_of(
    paths: Iterable[Path], root: Path, data: Path | None, files: set[str] | None = None
) -> set[str]:
    """The input keys of the paths an example read: a checkout file as its path in the checkout
    (``repro/cli/measure.py``; only those of ``files`` when given: what git does not ignore), a
    published file as ``data:`` and its dataset folder; anything else is left out (see the module
    docstring). ``requirements.lock`` is always one."""
    keys = set(ALWAYS)
    for path in paths:
        rel = _inside(path, data) if data is not None else None
        if rel is not None and rel.parts:
            keys.add(DATA + "/".join(rel.parts[:2]))
            continue
        rel = _inside(path, root)
        if rel is None or not rel.parts or SKIP_PARTS.intersection(rel.parts):
            continue
        if rel.suffix == ".pyc" or rel.as_posix() in SKIP_FILES:
            continue
        if rel.parts[0] == "docs" and rel.suffix == ".md":
            continue  # the pages: what the captures are written into
        if (root / rel).is_file() and (files is None or rel.as_posix() in files):
            keys.add(rel.as_posix())
    return keys


class Digests:
    """The digests of input keys today, for one checkout and data directory (``SHA256SUMS`` read
    once)."""

    def __init__(self, root: Path, data: Path | None):
        self.root, self.data = root, data
        self._sums: list[tuple[str, str]] | None = None

    def sums(self) -> list[tuple[str, str]]:
        if self._sums is None:
            self._sums = []
            manifest = self.data / "SHA256SUMS" if self.data is not None else None
            if manifest is not None and manifest.is_file():
                for line in manifest.read_text().splitlines():
                    digest, _, name = line.partition("  ")
                    self._sums.append((name.removeprefix("./"), digest))
        return self._sums

    def __call__(self, key: str) -> str:
        """The digest of ``key`` today; ``missing`` for a file or folder that is not there."""
        if key.startswith(DATA):
            return self._data(key[len(DATA) :])
        path = self.root / key
        if path.is_file():
            return digest_bytes(path.read_bytes())
        if path.is_dir():
            return self._folder(path)
        return "missing"

    def _data(self, group: str) -> str:
        lines = [f"{d}  {n}" for n, d in self.sums() if n == group or n.startswith(group + "/")]
        if lines:
            return digest_bytes("\n".join(sorted(lines)).encode())
        path = self.data / group if self.data is not None else None
        if path is not None and path.is_file():
            return digest_bytes(path.read_bytes())
        if path is not None and path.is_dir():
            return self._folder(path)
        return "missing"

    def _folder(self, folder: Path) -> str:
        """A declared folder input: its files' paths and contents (caches left out)."""
        h = hashlib.sha256()
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = path.relative_to(folder)
            if SKIP_PARTS.intersection(rel.parts) or path.suffix == ".pyc":
                continue
            h.update(f"{rel.as_posix()}\0".encode() + path.read_bytes() + b"\0")
        return h.hexdigest()[:16]


def entry(text: str, keys: Iterable[str], digests: Digests) -> dict:
    """The lock entry of a capture: its text's digest and its inputs' digests."""
    return {"output": text_digest(text), "inputs": {k: digests(k) for k in sorted(keys)}}


def changed(recorded_entry: dict, digests: Digests) -> list[str]:
    """The inputs of a lock entry whose digest differs today, in order."""
    return [k for k, d in recorded_entry.get("inputs", {}).items() if digests(k) != d]


def load(root: Path) -> dict[str, dict]:
    path = root / LOCK
    return json.loads(path.read_text()) if path.is_file() else {}


def save(root: Path, lock: dict[str, dict]) -> bool:
    """Write the lock (one input a line, sorted, for readable diffs); True when it changed."""
    path = root / LOCK
    text = json.dumps(dict(sorted(lock.items())), indent=1, sort_keys=True) + "\n"
    if path.is_file() and path.read_text() == text:
        return False
    path.write_text(text)
    return True

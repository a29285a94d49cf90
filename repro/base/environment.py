"""Base, the software that computes and draws the numbers: its installed and locked versions.

Its installed versions, and the versions that ``requirements.lock`` (the hash-locked environment the
README installs) pins.

REPORT.md lists these libraries, not the test tools: a new release of pytest or syrupy changes
no number, so it must not change the report. Installed from the lock, a fresh clone's report
is byte for byte the committed one until the lock moves; installed otherwise (``pip install .``
with the ranges of pyproject.toml), a library at another version than the lock's is marked in
the report, since its numbers may differ.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

#: what computes (numpy, scipy, pandas, numba for the noise generator, torch and its models,
#: pillow for decoding) and what draws (matplotlib) the report's numbers and figures
NUMERIC_LIBRARIES = (
    "numpy",
    "scipy",
    "pandas",
    "numba",
    "torch",
    "torchvision",
    "timm",
    "pillow",
    "matplotlib",
)
LOCK_NAME = "requirements.lock"
#: the checkout's lock, where the package runs from a checkout (absent in an installed wheel)
CHECKOUT_LOCK = Path(__file__).resolve().parents[2] / LOCK_NAME
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_version(name: str) -> str | None:
    """The installed distribution's version, without a local label; None if not installed.

    The local label is dropped (torch's ``+cu130``: the build of the same release, which computes
    the same on the CPU)."""
    try:
        return metadata.version(name).split("+", 1)[0]
    except metadata.PackageNotFoundError:
        return None


def locked_versions(lock: Path = CHECKOUT_LOCK) -> dict[str, str]:
    """``{normalised name: version}`` of every ``name==version`` line of a pip-compile lock.

    {} where the file does not exist. A line that pins nothing (a comment, a hash) is skipped."""
    try:
        text = lock.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _PIN.match(line)
        if m:
            out[_normal(m.group(1))] = m.group(2)
    return out


def library_rows(lock: Path = CHECKOUT_LOCK) -> list[tuple[str, str]]:
    """(library, version as the report prints it) for each of NUMERIC_LIBRARIES.

    The installed version, followed by the lock's where the lock pins another one."""
    locked = locked_versions(lock)
    rows = []
    for name in NUMERIC_LIBRARIES:
        have = installed_version(name)
        pinned = locked.get(_normal(name))
        text = have or "not installed"
        if pinned and pinned != have:
            text += f" (differs from {LOCK_NAME}: {pinned})"
        rows.append((name, text))
    return rows


def dependencies_digest(pyproject: Path) -> str:
    """sha256 of what the lock is resolved from (pyproject.toml's dependencies).

    pyproject.toml's dependencies and optional dependencies (their text, in order), so that the
    lock is known stale when they change and not when anything else in pyproject.toml does."""
    import hashlib
    import json
    import tomllib

    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    wanted = {
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
    }
    return hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()


DIGEST_LINE = "# pyproject dependencies sha256: "
_SELF = re.compile(
    r"# WARNING: pip install will require the following package to be hashed\.\n"
    r"# Consider using .*\n"
    r"repro @ \S+\n(?:    # via.*\n)*"
)


def finish_lock(text: str, digest: str) -> str:
    """pip-compile's output made the lock: the project's own line dropped, the digest added.

    The project's own line is dropped (the extra ``dev`` names ``repro[test]``, which pip-compile
    writes as an unhashable ``repro @ file://`` line that ``--require-hashes`` would refuse; the
    project is installed from the checkout), and the digest of the dependencies it was resolved
    from is written under the header."""
    text = _SELF.sub("", text)
    lines = [line for line in text.splitlines() if not line.startswith(DIGEST_LINE)]
    end = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    lines.insert(end, DIGEST_LINE + digest)
    return "\n".join(lines) + "\n"


def lock_digest(lock: Path = CHECKOUT_LOCK) -> str | None:
    """The dependencies digest a lock was made from (None if the lock has none)."""
    for line in lock.read_text(encoding="utf-8").splitlines():
        if line.startswith(DIGEST_LINE):
            return line[len(DIGEST_LINE) :].strip()
    return None

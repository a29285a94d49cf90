"""Claims: results of slow recomputations (the gate's power, the subset plan, each claim's
replication) kept as JSON in the user cache (``<user cache>/results/<kind>-<digest>.json``),
under the sha256 of everything they are computed from: the values they read, the claim
definitions, the study's count model and margins, their parameters, and the source code of the
modules that compute them, and the numerical environment (``repro.base.numerics``: NumPy's
and SciPy's versions, the machine's architecture; not the kernel family, whose rounding stays
below every compared digit). Any change of input, code or libraries gives another digest, so a
cached result is never stale; a corrupt or unreadable entry is
recomputed (and rewritten), never trusted.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from repro.base.atomic import publish, temp_file
from repro.base.settings import user_cache_dir


def cache_dir() -> Path:
    return user_cache_dir() / "results"


def _plain(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return _plain(asdict(obj))
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    return obj


def code_digest(modules: Iterable[str]) -> str:
    """sha256 over the source files of ``modules`` (dotted names), in the order given."""
    h = hashlib.sha256()
    for name in modules:
        path = getattr(importlib.import_module(name), "__file__", None)
        h.update(name.encode())
        if path:
            h.update(Path(path).read_bytes())
    return h.hexdigest()


@functools.lru_cache(maxsize=16)
def tree_digest(packages: tuple[str, ...]) -> str:
    """sha256 over every file of the package folders ``packages`` (dotted names: their modules,
    subpackages and data files such as a study's TOML), by relative path: for a result whose
    code reaches further than a fixed list of modules (a claim's statistic and what it calls).
    Read once per process (the files do not change under a running command)."""
    h = hashlib.sha256()
    for name in packages:
        root = Path(importlib.import_module(name).__file__).parent  # type: ignore[arg-type]
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(f"{name}/{path.relative_to(root).as_posix()}".encode() + b"\0")
                h.update(path.read_bytes())
    return h.hexdigest()


def digest(inputs: Any) -> str:
    """sha256 of ``inputs`` as canonical JSON (dataclasses, tuples and paths made plain)."""
    text = json.dumps(
        _plain(inputs), sort_keys=True, separators=(",", ":"), allow_nan=True, default=repr
    )
    return hashlib.sha256(text.encode()).hexdigest()


def cached(kind: str, inputs: Any, compute: Callable[[], Any]) -> tuple[Any, bool]:
    """``compute()``'s JSON result, from the cache when an entry of the same inputs exists
    (``(result, True)``), else computed and stored (``(result, False)``). Set
    ``REPRO_RESULT_CACHE=off`` to recompute every time."""
    from repro.base.numerics import numerics

    key = digest({"inputs": inputs, "numerics": numerics()})  # other libraries: another result
    path = cache_dir() / f"{kind}-{key}.json"
    use = os.environ.get("REPRO_RESULT_CACHE", "on") != "off"
    if use and path.is_file():
        try:
            entry = json.loads(path.read_text())
            if entry.get("digest") == key and "result" in entry:
                return entry["result"], True
        except (OSError, ValueError):
            pass
    result = compute()
    if use:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = temp_file(path)
            with os.fdopen(fd, "w") as fh:
                fh.write(json.dumps({"digest": key, "kind": kind, "result": result}) + "\n")
            publish(tmp)
            os.replace(tmp, path)
        except OSError:  # a read-only cache only costs the recomputation
            pass
    return result, False

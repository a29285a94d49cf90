"""The one cache-key rule of every result kept on disk.

The results: the gate's power, the subset plan, each claim's replication, the count grids'
derivations, a command's printed result. A result is kept under the sha256 of

- its inputs, as the caller declares them (the values it reads, the claim definitions, the
  count model, its parameters; ``digest``),
- the source of the whole ``repro`` package (``source_digest``: every file under it, its studies'
  TOML included, read once per process), never a hand-kept list of modules, which goes stale the day
  a computation calls one more,
- the numerical environment (``repro.base.numerics``: NumPy's and SciPy's versions, the
  machine's architecture; not the kernel family, whose rounding stays below every compared
  digit).

Any change of input, code or libraries gives another digest, so a cached result is never stale;
a corrupt or unreadable entry is recomputed (and rewritten), never trusted. ``kind`` names the
file (``<user cache>/results/<kind>-<digest>.json``); ``REPRO_RESULT_CACHE=off`` recomputes
everything.

One cache keeps another rule on purpose: the decoded crops (``repro.datasets.cache``), keyed by
the source files' content and a preprocessing id that is changed with the decoding code, not by
the package source: rebuilding ImageNet's crops after every edit of an unrelated module would cost
hours of decoding.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
from collections.abc import Callable
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


@functools.lru_cache(maxsize=16)
def tree_digest(packages: tuple[str, ...]) -> str:
    """sha256 over every file of the package folders ``packages``, by relative path.

    ``packages`` are dotted names: their modules, subpackages and data files such as a study's
    TOML. For a result whose code reaches further than a fixed list of modules (a claim's
    statistic and what it calls). Read once per process (the files do not change under a running
    command)."""
    h = hashlib.sha256()
    for name in packages:
        root = Path(importlib.import_module(name).__file__).parent  # type: ignore[arg-type]
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(f"{name}/{path.relative_to(root).as_posix()}".encode() + b"\0")
                h.update(path.read_bytes())
    return h.hexdigest()


def source_digest() -> str:
    """The digest of the whole ``repro`` package: part of every key.

    It covers the package's modules, its studies' files and its data files."""
    return tree_digest(("repro",))


def use_cache() -> bool:
    """False when ``REPRO_RESULT_CACHE=off``: every result computed anew, nothing written."""
    return os.environ.get("REPRO_RESULT_CACHE", "on") != "off"


def key_of(kind: str, inputs: Any) -> str:
    """The rule: sha256 of (kind, declared inputs, numerical environment, package source)."""
    from repro.base.numerics import numerics

    return digest(
        {"kind": kind, "inputs": inputs, "numerics": numerics(), "source": source_digest()}
    )


def digest(inputs: Any) -> str:
    """sha256 of ``inputs`` as canonical JSON (dataclasses, tuples and paths made plain)."""
    text = json.dumps(
        _plain(inputs), sort_keys=True, separators=(",", ":"), allow_nan=True, default=repr
    )
    return hashlib.sha256(text.encode()).hexdigest()


def cached(kind: str, inputs: Any, compute: Callable[[], Any]) -> tuple[Any, bool]:
    """``compute()``'s JSON result, from the cache when an entry of the same inputs exists.

    Returns ``(result, True)`` from the cache, else ``(result, False)`` once computed and stored.
    Set ``REPRO_RESULT_CACHE=off`` to recompute every time."""
    key = key_of(kind, inputs)
    path = cache_dir() / f"{kind}-{key}.json"
    use = use_cache()
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

"""One small registry type, shared by every named collection.

Used for models, datasets, measurements, claims, studies, benchmarks, category mappings and
tolerance policies.

Entries may be objects or lazy ``"module:attr"`` strings, so that listing a registry
(``python -m repro models``) never imports torch. Duplicate names are rejected; an unknown
name is answered with the closest matches.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from typing import Generic, TypeVar

from repro.base.errors import ConfigError, UnknownNameError

T = TypeVar("T")


def resolve_lazy(ref: str) -> object:
    """Import ``"package.module:attribute"`` and return the attribute."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise ValueError(f"lazy reference {ref!r} is not of the form 'module:attribute'")
    obj: object = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_lazy(ref: str, what: str) -> object:
    """``resolve_lazy(ref)``; a reference that cannot be loaded is a ConfigError.

    The message reads ``{what} {ref!r} cannot be loaded ({why})``: ``what`` names the file and the
    field that give the reference."""
    try:
        return resolve_lazy(ref)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"{what} {ref!r} cannot be loaded ({exc})") from None


class Registry(Generic[T]):
    """Named entries of one kind, in insertion order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}

    def register(self, name: str, entry: T | str) -> T | str:
        if name in self._entries:
            raise ValueError(f"duplicate {self.kind} name {name!r}")
        self._entries[name] = entry
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def names(self) -> list[str]:
        return list(self._entries)

    def get(self, name: str) -> T:
        try:
            entry = self._entries[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._entries, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}{hint} (known: {len(self._entries)} entries, "
                f"list them with `python -m repro` help)"
            ) from None
        if isinstance(entry, str):
            entry = resolve_lazy(entry)  # type: ignore[assignment]
            self._entries[name] = entry
        return entry  # type: ignore[return-value]

    def __getitem__(self, name: str) -> T:
        """``registry[name]``: the same as ``get``.

        An unknown name raises ``UnknownNameError``, a ``KeyError``, with the closest matches."""
        return self.get(name)

    def items(self) -> Iterator[tuple[str, T]]:
        for name in self._entries:
            yield name, self.get(name)

    def values(self) -> Iterator[T]:
        for name in self._entries:
            yield self.get(name)

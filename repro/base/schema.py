"""Schemas: every file a user writes is declared once, as pydantic types, and checked by pydantic.

The files: ``repro.toml``, ``models.toml``, ``study.toml``, a claim file, an analysis definition.
One adapter (:func:`check`) turns pydantic's ``ValidationError`` into the one-line ``ConfigError``
that names the file, the field and what was expected.

Declaring a table::

    @table
    class Session:
        WHERE: ClassVar[str] = "{parent}: [sessions.{key}]"     # how a message names this table
        description: Annotated[str, Expect("{where}: field {key!r} must be a non-empty string")]
        batch_size: PositiveInt = 16

- ``@table`` makes a frozen pydantic dataclass that rejects unknown keys (``Table`` is the same
  as a ``BaseModel``); a field is one annotated attribute, and adding a field to a file is adding
  one attribute (and a test of it).
- ``Expect(text)`` in a field's annotation is the message for any error at or below that field.
  The text is a ``str.format`` template of: ``where`` (the table, by the ``WHERE`` templates of
  the tables on the way: ``{parent}``, ``{key}`` the table's key or field name, ``{n}`` its
  1-based position in an array of tables), ``key`` (the field), ``value`` (what the file holds
  there), ``origin`` (the file).
- a table's ``UNKNOWN`` template names an unknown key (``{key}``, ``{dym}`` a did-you-mean,
  ``{known}`` the known keys, ``{unknown}`` every unknown key of that table, sorted) and its
  ``INVALID`` template a value that is not a table at all.
- a check that types cannot state (a regular expression that compiles, a file that exists) is a
  validator that raises :func:`invalid` with its own template.

Errors are reported first in the order of the file (the first wrong key as written), so that the
message is the one a reader of the file expects.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, TypeVar, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Strict,
    TypeAdapter,
    ValidationError,
)
from pydantic.dataclasses import dataclass as _pydantic_dataclass
from pydantic_core import PydanticCustomError

from repro.base.errors import ConfigError

T = TypeVar("T")

CONFIG = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

#: strict scalars (TOML has no other way to say 1, 1.5 or true): 1.0 is not an integer, true is
#: not a number, "1" is not a number
Int = Annotated[int, Strict()]
Float = Annotated[float, Strict()]
Bool = Annotated[bool, Strict()]

MISSING: Any = object()


class Internal:
    """Marks a field that is not a key of the file, e.g. the file a claim was read from.

    Set by the reader; left out of the known keys that messages list."""


INTERNAL = Internal()


@dataclasses.dataclass(frozen=True)
class Expect:
    """The message of an error at or below a field.

    ``missing``: when the field is absent, and ``top``: when the field's value itself is of the
    wrong kind, where those differ. A field that holds a table gives only these two (errors
    inside the table are the table's)."""

    text: str | None = None
    missing: str | None = None
    top: str | None = None
    where: str | None = (
        None  # for a field that holds a table: how messages name it (else the table's WHERE)
    )


def rule(test: Callable[[Any], bool], template: str) -> Any:
    """A check a type cannot state (``rule(lambda n: n > 0, "...")``), as an ``AfterValidator``.

    Its failure is ``template`` (formatted like an ``Expect`` text, with ``value`` the checked
    value)."""

    def check_value(value: Any) -> Any:
        if not test(value):
            raise invalid(template, value=value)
        return value

    return AfterValidator(check_value)


def table(cls: type[T] | None = None, **options: Any) -> Any:
    """A frozen pydantic dataclass that rejects unknown keys: one table of a file."""

    def wrap(c: type[T]) -> type[T]:
        return _pydantic_dataclass(frozen=True, config=CONFIG, **options)(c)

    return wrap(cls) if cls is not None else wrap


class Table(BaseModel):
    """A table as a pydantic model (unknown keys rejected, frozen)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


def invalid(template: str, *, of_field: bool = False, **values: Any) -> PydanticCustomError:
    """The error a validator raises.

    ``template`` is formatted by the adapter with ``where``, ``key``, ``value``, ``origin`` and
    ``values``. ``of_field``: raised by the validator of a field that holds a table (its
    ``where`` is the enclosing table's, not the held one's)."""
    return PydanticCustomError(
        "repro", "{template}", {"template": template, "of_field": of_field, **values}
    )


def did_you_mean(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


# --------------------------------------------------------------------------- checking
_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(cls: Any) -> TypeAdapter[Any]:
    if cls not in _ADAPTERS:
        _ADAPTERS[cls] = TypeAdapter(cls)
    return _ADAPTERS[cls]


def check(
    cls: type[T],
    data: Any,
    origin: str,
    *,
    context: Mapping[str, Any] | None = None,
    where: str | None = None,
    inject: Mapping[str, Any] | None = None,
) -> T:
    """``data`` (a parsed file, or a table of one) as a ``cls``, else its first error's ConfigError.

    The ConfigError is the adapter's. ``where``: how the messages name ``data`` (default:
    ``cls.WHERE`` with the file as parent); ``context``: what validators and templates may read;
    ``inject``: the values of fields that are not keys of the file (``INTERNAL``: the file's own
    path, its folder), which the file may not set."""
    context = {"origin": origin, **(context or {})}
    if inject:
        if isinstance(data, Mapping):
            for key in data:
                if key in inject:
                    name = (
                        where
                        if where is not None
                        else _where(cls, origin, None, data, origin=origin)
                    )
                    known = known_keys(cls)
                    raise ConfigError(
                        getattr(cls, "UNKNOWN", UNKNOWN).format(
                            where=name,
                            key=key,
                            dym=did_you_mean(key, known),
                            known=", ".join(known),
                            unknown=key,
                            unknown_list=[key],
                            known_list=sorted(known),
                        )
                    )
            data = {**data, **inject}
    try:
        return _adapter(cls).validate_python(data, context=context)
    except ValidationError as exc:
        raise config_error(exc, cls, data, origin, where, context) from None


def config_error(
    exc: ValidationError,
    cls: Any,
    data: Any,
    origin: str,
    where: str | None = None,
    context: Mapping[str, Any] | None = None,
) -> ConfigError:
    """The one adapter: the first error of ``exc``, in the order of the file, as a ConfigError.

    The one-line ConfigError its field or table declares (``context``: more values its templates
    may name)."""
    errors = [e for e in exc.errors(include_url=False) if not _consequence(e)]
    priority = list(getattr(cls, "FIRST", ()))  # the keys reported first when several are absent

    def rank(i: int) -> tuple[Any, ...]:
        loc = errors[i]["loc"]
        top = priority.index(loc[0]) if loc and loc[0] in priority else len(priority)
        return _position(data, loc), top, i

    order = sorted(range(len(errors)), key=rank)
    first = errors[order[0]]
    site = _locate(
        cls, data, first["loc"], origin, where, bool((first.get("ctx") or {}).get("of_field"))
    )
    return ConfigError(
        _render(first, site, [errors[i] for i in order], {**(context or {}), "origin": origin})
    )


def _consequence(error: dict[str, Any]) -> bool:
    """An error that only follows from others.

    A list "too short after validation" because some of its entries failed
    (their own errors say why)."""
    ctx, given = error.get("ctx") or {}, error.get("input")
    return (
        error["type"] in ("too_short", "too_long")
        and isinstance(given, Sequence)
        and ctx.get("actual_length") not in (None, len(given))
    )


# --------------------------------------------------------------------------- where an error is
@dataclasses.dataclass
class _Site:
    table: Any  # the table class holding the field (or the table that is invalid)
    where: str  # that table's name in messages
    key: Any = None  # the field name (None: the table itself is wrong)
    value: Any = MISSING  # what the file holds at the field (or the table)
    expect: Expect | None = None
    loc: tuple[Any, ...] = ()  # the table's loc
    data: Any = MISSING  # the table's contents
    parent: str = ""  # the name of the table that holds this one


def _fields(cls: Any) -> dict[str, Any]:
    return dict(getattr(cls, "__pydantic_fields__", {}) or {})


def is_table(cls: Any) -> bool:
    return (
        isinstance(cls, type)
        and bool(_fields(cls))
        and (dataclasses.is_dataclass(cls) or issubclass(cls, BaseModel))
    )


def _strip(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _strip(members[0])
    return annotation


def _inner(annotation: Any) -> tuple[str, Any] | None:
    """How a field holds tables: ("table", C), ("dict", C) (a table of C tables), ("list", C)."""
    annotation = _strip(annotation)
    if is_table(annotation):
        return "table", annotation
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (dict, Mapping, typing.Mapping) and len(args) == 2 and is_table(_strip(args[1])):
        return "dict", _strip(args[1])
    if origin in (list, tuple, Sequence) and args and is_table(_strip(args[0])):
        return "list", _strip(args[0])
    return None


def _annotated_metadata(annotation: Any) -> list[Any]:
    """The ``Annotated`` metadata of a type and of its optional form.

    The optional form is ``Annotated[str, ...] | None``."""
    out: list[Any] = []
    while get_origin(annotation) is Annotated:
        out = list(annotation.__metadata__) + out
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            out = _annotated_metadata(members[0]) + out
    return out


def _expect(info: Any) -> Expect | None:
    """The field's ``Expect``: those of its type and its own merged, the later ones' texts first."""
    found = [
        m
        for m in [*_annotated_metadata(info.annotation), *getattr(info, "metadata", ())]
        if isinstance(m, Expect)
    ]
    if not found:
        return None
    merged = found[0]
    for later in found[1:]:
        merged = Expect(
            *(getattr(later, f) or getattr(merged, f) for f in ("text", "missing", "top", "where"))
        )
    return merged


def _where(
    named: Any,
    parent: str,
    key: Any,
    data: Any,
    n: int | None = None,
    field: str | None = None,
    origin: str = "",
) -> str:
    """How messages name a table.

    Its ``WHERE`` template (or function) of ``parent`` (the enclosing table's name), ``key`` (its
    key, or its field's name), ``n`` (its 1-based position in an array of tables), ``field`` (the
    field of the enclosing table that holds it), ``origin`` (the file). ``named``: the table, or
    a field's ``Expect(where=...)`` template."""
    template = named if isinstance(named, str) else getattr(named, "WHERE", "{parent}")
    if callable(template):
        return str(template(parent, key, data, n))
    return template.format(
        parent=parent, key=key, n=n, field=field if field is not None else key, origin=origin
    )


def _locate(
    cls: Any,
    data: Any,
    loc: tuple[Any, ...],
    origin: str,
    where: str | None,
    of_field: bool = False,
) -> _Site:
    here = where if where is not None else _where(cls, origin, None, data, origin=origin)
    parent, i = origin, 0
    while True:
        if i >= len(loc):
            return _Site(cls, here, None, data, None, loc, data, parent)
        name = loc[i]
        info = _fields(cls).get(name) if isinstance(name, str) else None
        value = data.get(name, MISSING) if isinstance(data, Mapping) else MISSING
        site = _Site(cls, here, name, value, None, loc[:i], data, parent)
        if info is None:  # an unknown key
            return site
        site.expect, inner = _expect(info), _inner(info.annotation)
        if inner is None or value is MISSING or (inner[0] != "table" and i == len(loc) - 1):
            return site
        kind, sub = inner
        named = site.expect.where if site.expect is not None and site.expect.where else sub
        if kind == "table":  # errors at the field itself are the table's (INVALID)
            if i == len(loc) - 1 and (
                of_field or (site.expect is not None and site.expect.top is not None)
            ):
                return site
            parent, here = here, _where(named, here, name, value, origin=origin)
            cls, data, i = sub, value, i + 1
            continue
        key = loc[i + 1]
        if kind == "dict" and isinstance(value, Mapping) and key in value:
            entry, n = value[key], None
        elif (
            kind == "list"
            and isinstance(value, list)
            and isinstance(key, int)
            and 0 <= key < len(value)
        ):
            entry, n = value[key], key + 1
        else:
            return site
        parent, here = here, _where(named, here, key, entry, n, name, origin=origin)
        cls, data, i = sub, entry, i + 2


def _position(data: Any, loc: tuple[Any, ...]) -> tuple[int, ...]:
    """Where ``loc`` is in the file: the index of each key among its table's keys.

    Absent keys come last."""
    out = []
    for part in loc:
        if isinstance(data, Mapping):
            keys = list(data)
            if part not in data:
                out.append(len(keys))
                break
            out.append(keys.index(part))
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            out.append(part)
            data = data[part]
        else:
            break
    return tuple(out)


# --------------------------------------------------------------------------- the message
UNKNOWN = "{where}: unknown key {key!r}{dym} (known: {known})"
INVALID = "{where}: expected a table, got {value!r:.80}"
DEFAULT = "{where}: {key} = {value!r:.80}: {problem} (check the field's type)"
EXTRA_TYPES = ("unexpected_keyword_argument", "extra_forbidden")


def known_keys(cls: Any) -> list[str]:
    """The keys a table may hold, in declaration order (``KNOWN`` when the table states them)."""
    known = getattr(cls, "KNOWN", None)
    if known:
        return list(known)
    return [
        name
        for name, info in _fields(cls).items()
        if not any(isinstance(m, Internal) for m in getattr(info, "metadata", ()))
    ]


def _keys_of(kinds: tuple[str, ...], site: _Site, errors: list[dict[str, Any]]) -> list[str]:
    """The keys of the errors of these kinds in the site's table (unknown keys, missing fields)."""
    n = len(site.loc)
    return [
        str(e["loc"][n])
        for e in errors
        if e["type"] in kinds and len(e["loc"]) == n + 1 and tuple(e["loc"][:n]) == site.loc
    ]


def _render(
    error: dict[str, Any], site: _Site, errors: list[dict[str, Any]], context: Mapping[str, Any]
) -> str:
    kind = error["type"]
    values: dict[str, Any] = {
        **context,
        "where": site.where,
        "parent": site.parent,
        "key": site.key,
        "value": None if site.value is MISSING else site.value,
        "input": error.get("input"),
        "table": None if site.data is MISSING else site.data,
    }
    rest = tuple(
        error["loc"][len(site.loc) + 1 :]
    )  # below the field: the entry of a list or a table
    if rest and isinstance(site.value, Mapping | list):
        values["entry"] = rest[0]
        try:
            values["item"] = site.value[rest[0]]
        except (KeyError, IndexError, TypeError):
            values["item"] = None
    known = known_keys(site.table)
    values["known_list"] = sorted(known)
    values["known_sorted"] = ", ".join(sorted(known))
    values["keys"] = sorted(map(str, site.data)) if isinstance(site.data, Mapping) else []
    missing = _keys_of(("missing",), site, errors)
    failed = _keys_of(tuple({e["type"] for e in errors}), site, errors)
    values["missing"] = ", ".join(k for k in known if k in missing)
    values["failed"] = ", ".join(k for k in known if k in failed)
    if kind == "repro":
        ctx = dict(error.get("ctx") or {})
        ctx.pop("of_field", None)
        return str(ctx.pop("template")).format(**{**values, **ctx})
    if kind in EXTRA_TYPES:
        unknown = sorted(_keys_of(EXTRA_TYPES, site, errors))
        template = getattr(site.table, "UNKNOWN", UNKNOWN)
        return template.format(
            **values,
            dym=did_you_mean(site.key, known),
            known=", ".join(known),
            unknown=", ".join(unknown),
            unknown_list=unknown,
        )
    if site.key is None:
        return getattr(site.table, "INVALID", INVALID).format(**values)
    expect = site.expect or Expect()
    at_field = len(error["loc"]) == len(site.loc) + 1
    template = (
        (expect.missing if kind == "missing" else None)
        or (expect.top if at_field else None)
        or expect.text
    )
    if template is not None:
        return template.format(**values)
    problem = "missing" if kind == "missing" else str(error.get("msg", kind)).lower()
    return DEFAULT.format(**values, problem=problem)


def keyed(key_field: str = "name") -> Any:
    """A ``BeforeValidator`` for a table of tables that gives each entry its key as ``key_field``.

    ``[sessions.real]`` -> a Session named ``real``; an entry that sets it itself is refused."""

    def inject(value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        out = {}
        for k, entry in value.items():
            if isinstance(entry, Mapping):
                if key_field in entry:
                    raise invalid(
                        "{where}: [{key}.{entry}]: unknown key {name!r} (a table's name is its "
                        "key)",
                        entry=k,
                        name=key_field,
                    )
                entry = {key_field: k, **entry}
            out[k] = entry
        return out

    return BeforeValidator(inject)


__all__ = [
    "Bool",
    "ClassVar",
    "CONFIG",
    "Expect",
    "INTERNAL",
    "Float",
    "Int",
    "Table",
    "check",
    "config_error",
    "did_you_mean",
    "invalid",
    "is_table",
    "keyed",
    "known_keys",
    "rule",
    "table",
]

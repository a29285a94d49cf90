"""The zoo's files as schemas: ``models.toml`` and the ``[models]`` table of a ``repro.toml``.

``models.toml`` is package data, the ``repro.toml`` a user's. Every table and key is declared here
(``repro.base.schema``); an unknown key, a wrong type or a name that is not defined is a ConfigError
naming the file, the entry and the field. ``repro.zoo.specs`` turns the checked entries into
``ModelSpec`` objects.

A ``[[model]]`` entry (the fields listed at the top of models.toml) is checked with the
``[normalizations]``, ``[remaps]`` and ``[defaults]`` of models.toml as its context, so that a
name it uses must be defined there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlparse

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator, model_validator

from repro.base.errors import ConfigError
from repro.base.schema import (
    INTERNAL,
    Bool,
    Expect,
    Float,
    Int,
    Table,
    did_you_mean,
    invalid,
    keyed,
    known_keys,
    table,
)
from repro.zoo.safe_load import check_pickle_globals

SOURCE_KINDS = ("timm", "torchvision", "url", "huggingface", "gdrive", "local", "random", "package")
# torch.hub convention: ``name-<sha256 prefix>.ext``
HASH_PREFIX_RE = re.compile(r"-([a-f0-9]{6,})\.")
STRINGS = "{where} {key}: expected a list of strings, got {value!r:.80}"


def url_basename(url: str) -> str:
    return Path(urlparse(url).path).name


def _regex(pattern: str) -> str | None:
    """Why ``pattern`` is not a regular expression (None: it is one)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return str(exc)
    return None


# ----------------------------------------------------------------------- [normalizations], [remaps]
TRIPLE = Annotated[
    tuple[Float, Float, Float], Expect("{where} {key}: expected a list of 3 numbers, got {value!r}")
]


@table
class Normalization:
    """Per-channel mean/std applied inside the model to its [0, 1] input."""

    WHERE: ClassVar[str] = "{parent} [normalizations.{key}]"
    name: Annotated[str, INTERNAL]
    mean: TRIPLE
    std: TRIPLE


def _regexes(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in patterns:
        if (problem := _regex(pattern)) is not None:
            raise invalid(
                "{where} {key}: {pattern!r} is not a valid regular expression ({problem})",
                pattern=pattern,
                problem=problem,
            )
    return patterns


def _rename_regexes(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    _regexes(tuple(p[0] for p in pairs))
    return pairs


PAIRS = "{where} rename: expected [regex, replacement] pairs, got "


@table
class Remap:
    """How a checkpoint's keys become the architecture's (see models.toml, [remaps])."""

    WHERE: ClassVar[str] = "{parent} [remaps.{key}]"
    UNKNOWN: ClassVar[str] = "{where}: unknown field(s) {unknown_list}; expected {known_list}"
    name: Annotated[str, INTERNAL]
    select: Annotated[tuple[str, ...], Expect(STRINGS)] = ()
    drop: Annotated[tuple[str, ...], Expect(STRINGS)] = ()
    strip_prefixes: Annotated[tuple[str, ...], Expect(STRINGS)] = ()
    rename: Annotated[
        tuple[tuple[str, str], ...], Expect(PAIRS + "{item!r}", top=PAIRS + "{value!r}")
    ] = ()
    # pair the file's tensors with the architecture's by position (same count, order, shapes
    # and leaf names: repro.zoo.remap.positional_map), after select/drop/strip/rename
    positional: Annotated[
        Bool, Expect("{where} positional: expected true or false, got {value!r}")
    ] = False

    _drop = field_validator("drop")(classmethod(lambda cls, v: _regexes(v)))
    _rename = field_validator("rename")(classmethod(lambda cls, v: _rename_regexes(v)))


# --------------------------------------------------------------------------- a [[model]] entry
NATIVE = (
    "{where}: expected a table with exactly ['crop_pct', 'input_size', 'interpolation'], got "
    "{table!r}"
)


@table
class NativePreprocessing:
    """The eval transform the weights were released with (timm's pretrained config).

    Resize the shorter side to ``floor(input_size / crop_pct)`` with ``interpolation``, centre-crop
    ``input_size``. Recorded for independent checks of the weights; the study's probes do not use it
    (they feed 224 px stimuli as they are, METHODS.md section 3)."""

    WHERE: ClassVar[str] = "{parent} native"
    INVALID: ClassVar[str] = NATIVE
    UNKNOWN: ClassVar[str] = NATIVE
    input_size: Annotated[
        Int,
        Field(gt=0),
        Expect("{where}.input_size: expected a positive integer, got {value!r}", missing=NATIVE),
    ]
    interpolation: Annotated[
        Literal["bicubic", "bilinear"],
        Expect(
            "{where}.interpolation: expected 'bicubic' or 'bilinear', got {value!r}", missing=NATIVE
        ),
    ]
    crop_pct: Annotated[
        Float,
        Field(gt=0, le=1),
        Expect("{where}.crop_pct: expected a number in (0, 1], got {value!r}", missing=NATIVE),
    ]

    @property
    def resize(self) -> int:
        return int(math.floor(self.input_size / self.crop_pct))


def _named(table_name: str, default_key: str | None, inline: str | None = None) -> Any:
    """A ``BeforeValidator``: a name of the models.toml table ``table_name`` as its object.

    The name is looked up in the check's context (left out: the ``[defaults]`` one); ``inline``: a
    table given in place is that table, named after the entry (``<where>:inline``)."""
    field = table_name.rstrip("s")  # normalizations -> normalization

    def lookup(value: Any, info: ValidationInfo) -> Any:
        ctx = info.context or {}
        known = ctx.get(table_name)
        if known is None:  # not in a file
            return value
        if value is None and default_key is not None:
            value = ctx.get("defaults", {}).get(default_key)
        if isinstance(value, Mapping) and inline is not None:
            if "name" in value:
                raise invalid(
                    "{origin} [remaps.{at}]: unknown field(s) ['name']; expected {fields}",
                    of_field=True,
                    at=ctx.get("where", "") + inline,
                    fields=sorted(known_keys(Remap)),
                )
            return {**value, "name": ctx.get("where", "") + inline}
        if isinstance(value, str) and value in known:
            return known[value]
        problem = "is not defined; known:" if field == "remap" else "not in"
        raise invalid(
            "{where}: " + field + " {given!r} " + problem + " {names}",
            of_field=True,
            given=value,
            names=sorted(known),
        )

    return BeforeValidator(lookup)


REMAP_WHERE = "{origin} [remaps.{parent}:inline]"


@table
class Head:
    """A separate classifier-head file of a url model.

    Its fields: ``{ reference, remap, file, sha256, hash_prefix }``."""

    WHERE: ClassVar[str] = "{parent} head"
    INVALID: ClassVar[str] = "{parent}: 'head' needs a 'reference' URL (url sources only)"
    reference: Annotated[
        str,
        Expect(
            "{where} reference: expected a URL (a string), got {value!r}",
            missing="{parent}: 'head' needs a 'reference' URL (url sources only)",
        ),
    ]
    remap: Annotated[
        Remap,
        _named("remaps", None, " head:inline"),
        Field(validate_default=True),
        Expect(where=REMAP_WHERE),
    ] = "none"  # type: ignore[assignment]
    file: Annotated[str, Expect("{where} file: expected a file name, got {value!r}")] | None = None
    sha256: (
        Annotated[str, Expect("{where} sha256: expected 64 hex digits, got {value!r}")] | None
    ) = None
    hash_prefix: (
        Annotated[str, Expect("{where} hash_prefix: expected hex digits, got {value!r}")] | None
    ) = None

    def filename(self) -> str:
        return self.file or url_basename(self.reference)


STRING = "{where}: field {key!r} = {value!r}, expected a string"
REQUIRED = "{where}: missing required field {key!r}"


def _present(value: Any) -> Any:
    if not value and value != 0:  # "" or an empty list: as if left out
        raise invalid(REQUIRED)
    return value


Required = Annotated[str, BeforeValidator(_present), Expect(STRING, missing=REQUIRED)]
Text = Annotated[str, Expect(STRING)]


def _pickle_globals(value: Any, info: ValidationInfo) -> Any:
    try:
        return check_pickle_globals(value, "")
    except ConfigError as exc:  # its message starts with the ``where`` given (here: none)
        raise invalid("{where}{rest}", rest=str(exc)) from None


class ModelEntry(Table):
    """One model of models.toml (``[[model]]``), or one a user adds in repro.toml.

    A user adds one as ``[models.<name>]`` with a ``source``; the fields are listed at the top of
    models.toml."""

    WHERE: ClassVar[str] = "{parent}"
    name: Required
    study: Bool = True
    source: Annotated[Required, Expect(STRING, REQUIRED)]
    reference: Required
    file: Text | None = None
    sha256: Text | None = None
    hash_prefix: Text | None = None
    revision: Any = None
    arch: Text | None = None
    normalization: Annotated[
        Normalization, _named("normalizations", "normalization"), Field(validate_default=True)
    ] = None  # type: ignore[assignment]
    remap: Annotated[
        Remap,
        _named("remaps", "remap", ":inline"),
        Field(validate_default=True),
        Expect(where=REMAP_WHERE),
    ] = None  # type: ignore[assignment]
    head: Head | None = None
    citation: Required
    note: Text = ""
    pickle_globals: Annotated[tuple[str, ...], BeforeValidator(_pickle_globals)] = ()
    seed: (
        Annotated[Int, Expect("{where}: field 'seed' = {value!r}, expected an integer")] | None
    ) = None
    url: Text | None = None
    category: Required
    extra: Text = ""  # the project's pip extra that installs the weights (package sources)
    native: NativePreprocessing | None = None  # the weights' own eval transform, where known

    @model_validator(mode="before")
    @classmethod
    def _added(cls, data: Any, info: ValidationInfo) -> Any:
        """A model a user adds in repro.toml (``[models.<name>]``, context ``added``).

        Only the keys of ``MODEL_FIELDS``; its name is the table's, it is no study model, category
        ``custom``."""
        added = (info.context or {}).get("added")
        if added is None or not isinstance(data, Mapping):
            return data
        for key in data:
            if key not in MODEL_FIELDS:
                raise invalid(
                    "{added}: unknown key {bad!r}{dym} (known: {fields})",
                    bad=key,
                    dym=did_you_mean(key, MODEL_FIELDS),
                    fields=", ".join(MODEL_FIELDS),
                )
        return {
            "name": info.context["name"],
            "category": "custom",
            "study": False,
            "citation": "unpublished",
            **data,
        }

    @field_validator("source")
    @classmethod
    def _kind(cls, source: str) -> str:
        if source not in SOURCE_KINDS:
            raise invalid("{where}: source {value!r} is not one of " + ", ".join(SOURCE_KINDS))
        return source

    @model_validator(mode="after")
    def _consistent(self) -> ModelEntry:
        """What one field needs of another.

        A source kind's own fields, the hash prefix in the file name."""
        source, ref = self.source, self.reference
        needs = {
            "huggingface": (
                not self.file,
                f"a huggingface model needs 'file' (the file inside {ref})",
            ),
            "torchvision": (
                not self.url,
                "a torchvision model needs 'url' (the weights enum's url)",
            ),
            "package": (
                not self.file or not self.sha256,
                f"a package model needs 'file' (its path inside distribution {ref!r}) and 'sha256'",
            ),
            "random": (self.seed is None, "a random model needs an integer 'seed'"),
        }
        missing, what = needs.get(source, (False, ""))
        if missing:
            raise invalid("{where}: {what}", what=what)
        if source == "random":
            return self
        if self.revision is not None and (
            source not in ("huggingface", "timm")
            or not re.fullmatch(r"[0-9a-f]{40}", str(self.revision))
        ):
            raise invalid(
                "{where}: revision {revision!r}: expected the full 40-hex commit id of a "
                "huggingface or timm source",
                revision=self.revision,
            )
        if self.head is not None and source != "url":
            raise invalid("{where}: 'head' needs a 'reference' URL (url sources only)")
        files = [(self.filename(), self.hash_prefix)]
        if self.head is not None:
            files.append((self.head.filename(), self.head.hash_prefix))
        for filename, prefix in files:
            declared = HASH_PREFIX_RE.search(Path(filename).name)
            if prefix and (not declared or declared.group(1) != prefix):
                raise invalid(
                    "{where}: hash_prefix {prefix!r} does not match file name {filename!r}",
                    prefix=prefix,
                    filename=filename,
                )
        return self

    def filename(self) -> str:
        """The checkpoint's file name.

        Under ``weights_dir()/<name>/``, inside the Hugging Face repository (huggingface, timm) or
        the installed distribution (package)."""
        source, ref = self.source, self.reference
        if source == "timm":
            return self.file or "model.safetensors"
        if source in ("huggingface", "package"):
            return self.file or ""
        if source == "torchvision":
            return url_basename(self.url or "")
        if source == "url":
            return self.file or url_basename(ref)
        if source == "gdrive":
            return self.file or f"{self.name}.pth"
        return Path(ref).name  # local


#: the keys a ``[models.<name>]`` table of repro.toml may set to add a model (name and study are not
#: among them: the name is the table's, and an added model is never a study model)
MODEL_FIELDS = tuple(f for f in ModelEntry.model_fields if f not in ("name", "study"))


# --------------------------------------------------------------------------- the files
NAME = "{where} {key}: expected a name (a string), got {value!r:.80}"
TABLES = "{where}: [{key}] must be a table of [{key}.<name>] tables, got {value!r:.80}"


@table
class Defaults:
    """``[defaults]``: what an entry that leaves these out gets."""

    WHERE: ClassVar[str] = "{parent} [defaults]"
    arch: Annotated[str, Expect(NAME)] = "timm:resnet50"
    normalization: Annotated[str, Expect(NAME)] = "imagenet"
    remap: Annotated[str, Expect(NAME)] = "none"


def _strings(table: str, expected: str) -> Any:
    """A ``[table]`` of strings: each entry checked, ``expected`` saying what one is."""
    return Annotated[
        dict[str, str],
        Expect(
            f"{{where}} [{table}] {{entry}}: expected {expected}, got {{item!r:.80}}",
            top=f"{{where}}: [{table}] must be a table",
        ),
    ]


CITATIONS = _strings("citations", "a citation (a string)")
ALIASES = _strings("aliases", "a model name (a string)")


class ZooFile(Table):
    """models.toml: the models and the tables they name.

    The entries are checked one by one, against the others (``repro.zoo.specs``)."""

    WHERE: ClassVar[str] = "{parent}"
    defaults: Annotated[
        Defaults, Expect(top="{where}: [defaults] must be a table, got {value!r:.80}")
    ] = Field(default_factory=Defaults)
    normalizations: Annotated[dict[str, Normalization], keyed("name"), Expect(top=TABLES)] = Field(
        default_factory=dict
    )
    remaps: Annotated[dict[str, Remap], keyed("name"), Expect(top=TABLES)] = Field(
        default_factory=dict
    )
    citations: CITATIONS = Field(default_factory=dict)
    aliases: ALIASES = Field(default_factory=dict)
    model: Annotated[
        tuple[dict[str, Any], ...],
        Expect(
            "{where}: a [[model]] entry is not a table: {item!r:.80}",
            top="{where}: [[model]] must be an array of tables",
        ),
    ] = ()

    def context(self, where: str) -> dict[str, Any]:
        """What an entry at ``where`` is checked against."""
        return {
            "where": where,
            "defaults": {
                "normalization": self.defaults.normalization,
                "remap": self.defaults.remap,
            },
            "normalizations": self.normalizations,
            "remaps": self.remaps,
            "normalization_names": sorted(self.normalizations),
            "remap_names": sorted(self.remaps),
        }


OVERRIDE = (
    "{where}: expected 'checkpoint' (and optional 'head') paths, or a new model with 'source' and "
    "'reference', or an [external] table of known values; got {keys}"
)


@table
class Override:
    """``[models.<name>]`` of repro.toml for a built-in model: the local files it is loaded from."""

    WHERE: ClassVar[str] = "{parent} [models.{key}]"
    UNKNOWN: ClassVar[str] = OVERRIDE
    checkpoint: Annotated[
        str,
        Expect("{where} checkpoint: expected a path (a string), got {value!r}", missing=OVERRIDE),
    ]
    head: (
        Annotated[str, Expect("{where} head: expected a path (a string), got {value!r}")] | None
    ) = None

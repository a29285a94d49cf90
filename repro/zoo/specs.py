"""Model zoo, stage 0 of the pipeline: the models as data.

``models.toml`` (package data) is parsed into frozen :class:`ModelSpec` objects; a user's
``repro.toml`` may add models (``[models.<name>]`` with a ``source``) or point a model at a
local file (``[models] <name> = "path"``). Nothing here imports torch, so listing the zoo
(``python -m repro models``) stays fast.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from repro.base.errors import ConfigError, UnknownNameError
from repro.base.registry import Registry
from repro.zoo.safe_load import check_pickle_globals

SPEC_FILE = Path(__file__).with_name("models.toml")
SOURCE_KINDS = ("timm", "torchvision", "url", "huggingface", "gdrive", "local", "random", "package")
# sources whose files are downloaded into ``weights_dir()/<model name>/``
DOWNLOADED_KINDS = ("timm", "torchvision", "url", "huggingface", "gdrive")
# torch.hub convention: ``name-<sha256 prefix>.ext``
HASH_PREFIX_RE = re.compile(r"-([a-f0-9]{6,})\.")


@dataclass(frozen=True)
class Normalization:
    """Per-channel mean/std applied inside the model to its [0, 1] input."""

    name: str
    mean: tuple[float, float, float]
    std: tuple[float, float, float]


@dataclass(frozen=True)
class Remap:
    """How a checkpoint's keys become the architecture's (see models.toml, [remaps])."""

    name: str
    select: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    strip_prefixes: tuple[str, ...] = ()
    rename: tuple[tuple[str, str], ...] = ()
    # pair the file's tensors with the architecture's by position (same count, order, shapes
    # and leaf names: repro.zoo.remap.positional_map), after select/drop/strip/rename
    positional: bool = False


@dataclass(frozen=True)
class NativePreprocessing:
    """The eval transform the weights were released with (timm's pretrained config): resize
    the shorter side to ``floor(input_size / crop_pct)`` with ``interpolation``, centre-crop
    ``input_size``. Recorded for independent checks of the weights; the study's probes do not
    use it (they feed 224 px stimuli as they are, METHODS.md section 3)."""

    input_size: int
    interpolation: str  # "bicubic" | "bilinear"
    crop_pct: float

    @property
    def resize(self) -> int:
        import math

        return int(math.floor(self.input_size / self.crop_pct))


@dataclass(frozen=True)
class CheckpointFile:
    """One weights file of a model: where it comes from and how its keys are remapped."""

    role: str  # "checkpoint" or "head"
    reference: str  # URL, "org/repo", Drive id, timm tag, path (meaning depends on the source)
    filename: str  # name under weights_dir()/<model>/ (or inside the HF repository)
    remap: Remap
    sha256: str | None = None
    hash_prefix: str | None = None
    url: str | None = None  # direct URL where the source has one (torchvision, url)
    revision: str | None = None  # Hugging Face commit the file is downloaded from (huggingface, timm); None: main


@dataclass(frozen=True)
class ModelSpec:
    name: str
    category: str
    study: bool
    source: str
    reference: str
    arch: str
    normalization: Normalization
    citation: str
    files: tuple[CheckpointFile, ...] = ()
    seed: int | None = None
    note: str = ""
    pickle_globals: tuple[str, ...] = ()
    aliases: tuple[str, ...] = field(default=(), compare=False)
    extra: str = ""  # the project's pip extra that installs the weights (package sources)
    native: NativePreprocessing | None = None  # the weights' own eval transform, where known

    @property
    def checkpoint(self) -> CheckpointFile | None:
        return next((f for f in self.files if f.role == "checkpoint"), None)

    @property
    def head(self) -> CheckpointFile | None:
        return next((f for f in self.files if f.role == "head"), None)


def _url_basename(url: str) -> str:
    return Path(urlparse(url).path).name


def _tuple3(value: Any, where: str) -> tuple[float, float, float]:
    if not (isinstance(value, list) and len(value) == 3):
        raise ConfigError(f"{where}: expected a list of 3 numbers, got {value!r}")
    return (float(value[0]), float(value[1]), float(value[2]))


class _Parser:
    """Turns the TOML tables into specs; every error names the file and the entry."""

    def __init__(self, doc: dict[str, Any], origin: str) -> None:
        self.origin = origin
        self.defaults = doc.get("defaults", {})
        self.normalizations = {
            n: Normalization(n, _tuple3(t.get("mean"), f"{origin} [normalizations.{n}] mean"),
                             _tuple3(t.get("std"), f"{origin} [normalizations.{n}] std"))
            for n, t in doc.get("normalizations", {}).items()
        }
        self.remaps = {n: self._remap(n, t) for n, t in doc.get("remaps", {}).items()}
        self.citations: dict[str, str] = doc.get("citations", {})

    def _remap(self, name: str, table: dict[str, Any]) -> Remap:
        where = f"{self.origin} [remaps.{name}]"
        known = {"select", "drop", "strip_prefixes", "rename", "positional"}
        extra = set(table) - known
        if extra:
            raise ConfigError(f"{where}: unknown field(s) {sorted(extra)}; expected {sorted(known)}")
        for pattern in table.get("drop", ()):
            self._check_regex(pattern, f"{where} drop")
        rename = []
        for pair in table.get("rename", ()):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ConfigError(f"{where} rename: expected [regex, replacement] pairs, got {pair!r}")
            self._check_regex(pair[0], f"{where} rename")
            rename.append((str(pair[0]), str(pair[1])))
        return Remap(
            name=name,
            select=tuple(table.get("select", ())),
            drop=tuple(table.get("drop", ())),
            strip_prefixes=tuple(table.get("strip_prefixes", ())),
            rename=tuple(rename),
            positional=self._flag(table.get("positional", False), f"{where} positional"),
        )

    @staticmethod
    def _flag(value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value

    @staticmethod
    def _check_regex(pattern: str, where: str) -> None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"{where}: {pattern!r} is not a valid regular expression ({exc})") from None

    def remap(self, value: Any, where: str) -> Remap:
        if isinstance(value, dict):
            return self._remap(f"{where}:inline", value)
        if value not in self.remaps:
            raise ConfigError(f"{where}: remap {value!r} is not defined; known: {sorted(self.remaps)}")
        return self.remaps[value]

    def model(self, entry: dict[str, Any]) -> ModelSpec:
        name = entry.get("name")
        where = f"{self.origin} model {name!r}"
        for required in ("name", "category", "source", "reference", "citation"):
            if not entry.get(required) and entry.get(required) != 0:
                raise ConfigError(f"{where}: missing required field {required!r}")
        for key in ("category", "source", "reference", "citation"):
            if not isinstance(entry[key], str):
                raise ConfigError(f"{where}: field {key!r} = {entry[key]!r}, expected a string")
        if "seed" in entry and (isinstance(entry["seed"], bool) or not isinstance(entry["seed"], int)):
            raise ConfigError(f"{where}: field 'seed' = {entry['seed']!r}, expected an integer")
        source = entry["source"]
        if source not in SOURCE_KINDS:
            raise ConfigError(f"{where}: source {source!r} is not one of {', '.join(SOURCE_KINDS)}")
        norm_name = entry.get("normalization", self.defaults.get("normalization", "imagenet"))
        if norm_name not in self.normalizations:
            raise ConfigError(f"{where}: normalization {norm_name!r} not in {sorted(self.normalizations)}")
        citation = self.citations.get(entry["citation"], entry["citation"])
        files = self._files(entry, where) if source != "random" else ()
        seed = entry.get("seed")
        if source == "random" and not isinstance(seed, int):
            raise ConfigError(f"{where}: a random model needs an integer 'seed'")
        return ModelSpec(
            name=str(name),
            category=entry["category"],
            study=bool(entry.get("study", True)),
            source=source,
            reference=entry["reference"],
            arch=entry.get("arch", self.defaults.get("arch", "timm:resnet50")),
            normalization=self.normalizations[norm_name],
            citation=citation,
            files=files,
            seed=seed,
            note=" ".join(entry.get("note", "").split()),
            pickle_globals=check_pickle_globals(entry.get("pickle_globals", ()), where),
            extra=str(entry.get("extra", "")),
            native=self._native(entry.get("native"), where),
        )

    @staticmethod
    def _native(value: Any, where: str) -> NativePreprocessing | None:
        if value is None:
            return None
        known = {"input_size", "interpolation", "crop_pct"}
        if not isinstance(value, dict) or set(value) != known:
            raise ConfigError(f"{where} native: expected a table with exactly {sorted(known)}, got {value!r}")
        size, interp, crop = value["input_size"], value["interpolation"], value["crop_pct"]
        if not (isinstance(size, int) and size > 0):
            raise ConfigError(f"{where} native.input_size: expected a positive integer, got {size!r}")
        if interp not in ("bicubic", "bilinear"):
            raise ConfigError(f"{where} native.interpolation: expected 'bicubic' or 'bilinear', got {interp!r}")
        if not (isinstance(crop, (int, float)) and 0 < crop <= 1):
            raise ConfigError(f"{where} native.crop_pct: expected a number in (0, 1], got {crop!r}")
        return NativePreprocessing(size, interp, float(crop))

    def _files(self, entry: dict[str, Any], where: str) -> tuple[CheckpointFile, ...]:
        source, ref = entry["source"], entry["reference"]
        remap = self.remap(entry.get("remap", self.defaults.get("remap", "none")), where)
        url = None
        if source == "timm":
            filename = entry.get("file", "model.safetensors")
        elif source == "huggingface":
            if "file" not in entry:
                raise ConfigError(f"{where}: a huggingface model needs 'file' (the file inside {ref})")
            filename = entry["file"]
        elif source == "torchvision":
            url = entry.get("url")
            if not url:
                raise ConfigError(f"{where}: a torchvision model needs 'url' (the weights enum's url)")
            filename = _url_basename(url)
        elif source == "url":
            url = ref
            filename = entry.get("file", _url_basename(ref))
        elif source == "gdrive":
            filename = entry.get("file", f"{entry['name']}.pth")
        elif source == "package":
            # reference = distribution name; file = the file's path inside the installed
            # distribution (as importlib.metadata lists it); the sha256 pins its content
            if not entry.get("file") or not entry.get("sha256"):
                raise ConfigError(f"{where}: a package model needs 'file' (its path inside distribution "
                                  f"{ref!r}) and 'sha256'")
            filename = entry["file"]
        else:  # local
            filename = Path(ref).name
        revision = entry.get("revision")
        if revision is not None and (source not in ("huggingface", "timm")
                                     or not re.fullmatch(r"[0-9a-f]{40}", str(revision))):
            raise ConfigError(f"{where}: revision {revision!r}: expected the full 40-hex commit id of a "
                              "huggingface or timm source")
        files = [CheckpointFile("checkpoint", ref, filename, remap, entry.get("sha256"),
                                entry.get("hash_prefix"), url, revision)]
        head = entry.get("head")
        if head:
            if source != "url" or "reference" not in head:
                raise ConfigError(f"{where}: 'head' needs a 'reference' URL (url sources only)")
            files.append(CheckpointFile(
                "head", head["reference"], head.get("file", _url_basename(head["reference"])),
                self.remap(head.get("remap", "none"), f"{where} head"), head.get("sha256"),
                head.get("hash_prefix"), head["reference"],
            ))
        for f in files:
            declared = HASH_PREFIX_RE.search(Path(f.filename).name)
            if f.hash_prefix and (not declared or declared.group(1) != f.hash_prefix):
                raise ConfigError(f"{where}: hash_prefix {f.hash_prefix!r} does not match file name {f.filename!r}")
        return tuple(files)


@lru_cache(maxsize=1)
def _builtin() -> tuple[dict[str, ModelSpec], dict[str, str], _Parser]:
    with SPEC_FILE.open("rb") as fh:
        doc = tomllib.load(fh)
    parser = _Parser(doc, str(SPEC_FILE))
    aliases: dict[str, str] = dict(doc.get("aliases", {}))
    models: dict[str, ModelSpec] = {}
    for entry in doc.get("model", []):
        spec = parser.model(entry)
        if spec.name in models:
            raise ConfigError(f"{SPEC_FILE}: duplicate model name {spec.name!r}")
        models[spec.name] = spec
    for alias, target in aliases.items():
        if target not in models:
            raise ConfigError(f"{SPEC_FILE} [aliases]: {alias!r} points to unknown model {target!r}")
    models = {
        n: _with_aliases(s, tuple(a for a, t in aliases.items() if t == n)) for n, s in models.items()
    }
    return models, aliases, parser


def _with_aliases(spec: ModelSpec, aliases: tuple[str, ...]) -> ModelSpec:
    from dataclasses import replace

    return replace(spec, aliases=aliases)


def _config_models() -> tuple[dict[str, ModelSpec], dict[str, dict[str, Path]]]:
    """User additions and local-file overrides from repro.toml ``[models]``."""
    from repro.base.settings import config_path, load_config

    table = load_config().get("models", {})
    builtin, _, parser = _builtin()
    added: dict[str, ModelSpec] = {}
    overrides: dict[str, dict[str, Path]] = {}
    origin = str(config_path())
    user_parser = _Parser({}, origin)
    user_parser.normalizations, user_parser.remaps = parser.normalizations, parser.remaps
    user_parser.citations, user_parser.defaults = parser.citations, parser.defaults
    for name, value in table.items():
        if isinstance(value, dict) and "external" in value:  # externally known values (repro.zoo.external)
            value = {k: v for k, v in value.items() if k != "external"}
            if not value:
                if name not in builtin:
                    from repro.base.config_check import did_you_mean

                    raise ConfigError(f"{origin} [models.{name}.external]: no built-in model of that name"
                                      f"{did_you_mean(name, builtin)} (external values are for a zoo model, or for "
                                      "a model this file adds with 'source' and 'reference')")
                continue
        if not (isinstance(value, dict) and "source" in value) and name not in builtin:
            # an override of a model that does not exist
            from repro.base.config_check import did_you_mean

            raise ConfigError(f"{origin} [models] {name}: no built-in model of that name{did_you_mean(name, builtin)} "
                              "(a path points a built-in model at a local file; a new model needs a table with "
                              "'source' and 'reference')")
        if isinstance(value, str):
            overrides[name] = {"checkpoint": Path(value).expanduser()}
        elif isinstance(value, dict) and "source" in value:
            if name in builtin:
                raise ConfigError(f"{origin} [models.{name}]: {name!r} is a built-in model; "
                                  "give only 'checkpoint' (and 'head') to point it at local files")
            from repro.base.config_check import MODEL_FIELDS, unknown_key_error

            for key in value:
                if key not in MODEL_FIELDS:
                    raise unknown_key_error(f"{origin} [models.{name}]", key, MODEL_FIELDS)
            entry = {"name": name, "category": "custom", "study": False, "citation": "unpublished", **value}
            added[name] = user_parser.model(entry)
        elif isinstance(value, dict):
            extra = set(value) - {"checkpoint", "head"}
            if extra or "checkpoint" not in value:
                raise ConfigError(f"{origin} [models.{name}]: expected 'checkpoint' (and optional 'head') "
                                  f"paths, or a new model with 'source' and 'reference', or an [external] table "
                                  f"of known values; got {sorted(value)}")
            overrides[name] = {k: Path(v).expanduser() for k, v in value.items()}
        else:
            raise ConfigError(f"{origin} [models] {name}: expected a path or a table, got {value!r}")
    return added, overrides


def registry(include_config: bool = True) -> Registry[ModelSpec]:
    reg: Registry[ModelSpec] = Registry("model")
    builtin = _builtin()[0]
    for name, spec in builtin.items():
        reg.register(name, spec)
    if include_config:
        for name, spec in _config_models()[0].items():
            reg.register(name, spec)
    return reg


def specs(include_config: bool = True) -> list[ModelSpec]:
    """Every model: the built-in zoo in file order, then repro.toml additions."""
    reg = registry(include_config)
    return [reg.get(n) for n in reg]


def study_specs() -> list[ModelSpec]:
    """The 48 models of the study."""
    return [s for s in specs(include_config=False) if s.study]


def aliases() -> dict[str, str]:
    return dict(_builtin()[1])


def canonical_name(name: str) -> str:
    return _builtin()[1].get(name, name)


def get_spec(name: str) -> ModelSpec:
    """The spec of ``name`` (or of an alias of it); UnknownNameError with close matches."""
    if name.startswith("file://"):
        return local_spec(name[len("file://"):])
    reg = registry()
    try:
        return reg.get(canonical_name(name))
    except UnknownNameError as exc:
        raise UnknownNameError(str(exc).replace("`python -m repro` help", "`python -m repro models`")) from None


def local_spec(path: str | Path, name: str | None = None) -> ModelSpec:
    """An ad-hoc ResNet-50 checkpoint on disk (``file://PATH``), remapped like the study's
    local-file branch: optional state_dict/model_state_dict/online_backbone, ``module.`` stripped."""
    _, _, parser = _builtin()
    path = Path(path).expanduser()
    return ModelSpec(
        name=name or f"file://{path}", category="custom", study=False, source="local",
        reference=str(path), arch="timm:resnet50", normalization=parser.normalizations["imagenet"],
        citation="unpublished", files=(CheckpointFile("checkpoint", str(path), path.name, parser.remaps["drive"]),),
    )


def config_overrides() -> dict[str, dict[str, Path]]:
    """Local files configured in repro.toml for built-in models: name -> {role: path}."""
    return _config_models()[1]


def expected_path(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    """Where the file of a downloaded source lives (or a user may put it by hand)."""
    if spec.source == "local":
        return Path(file.reference).expanduser()
    if spec.source == "package":
        from repro.zoo.package import installed_path

        return installed_path(file.reference, file.filename) or Path(file.reference) / file.filename
    return Path(weights_dir) / spec.name / file.filename


def cache_status(spec: ModelSpec, weights_dir: Path) -> str:
    """'yes', 'no', 'local' (configured local file present), 'local-missing', or '-' (random)."""
    if spec.source == "random":
        return "-"
    override = config_overrides().get(spec.name)
    if override:
        return "local" if all(p.is_file() for p in override.values()) else "local-missing"
    if spec.source == "local":
        return "local" if all(expected_path(spec, f, weights_dir).is_file() for f in spec.files) else "local-missing"
    if spec.source == "package":
        from repro.zoo.package import installed_path

        return "yes" if all(installed_path(f.reference, f.filename) for f in spec.files) else "no"
    return "yes" if all(expected_path(spec, f, weights_dir).is_file() for f in spec.files) else "no"


def local_overrides(spec: ModelSpec, checkpoint: Any) -> dict[str, Path]:
    """role -> local file the model is pointed at: ``checkpoint`` (a path, or ``{role: path}``)
    when given, else its ``[models]`` entry of repro.toml (empty: download)."""
    if checkpoint is None:
        return config_overrides().get(spec.name, {})
    if isinstance(checkpoint, Mapping):
        paths = {str(k): Path(v).expanduser() for k, v in checkpoint.items()}
    else:
        paths = {"checkpoint": Path(checkpoint).expanduser()}
    roles = {f.role for f in spec.files}
    unknown = set(paths) - roles
    if unknown:
        raise ConfigError(f"model {spec.name!r}: checkpoint roles {sorted(unknown)} unknown; it has {sorted(roles)}")
    return paths

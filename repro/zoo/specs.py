"""Model zoo, stage 0 of the pipeline: the models as data.

``models.toml`` (package data) is parsed into frozen :class:`ModelSpec` objects; a user's
``repro.toml`` may add models (``[models.<name>]`` with a ``source``) or point a model at a
local file (``[models] <name> = "path"``). Nothing here imports torch, so listing the zoo
(``python -m repro models``) stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro.base.errors import ConfigError, UnknownNameError
from repro.base.registry import Registry
from repro.base.schema import check, did_you_mean
from repro.base.settings import current
from repro.base.textfile import read_toml
from repro.zoo.entries import (
    HASH_PREFIX_RE,
    SOURCE_KINDS,
    ModelEntry,
    NativePreprocessing,
    Normalization,
    Override,
    Remap,
    ZooFile,
)
from repro.zoo.package import installed_path

if TYPE_CHECKING:
    from repro.base.config_check import Settings

__all__ = [
    "DOWNLOADED_KINDS",
    "HASH_PREFIX_RE",
    "SOURCE_KINDS",
    "SPEC_FILE",
    "CheckpointFile",
    "ModelSpec",
    "NativePreprocessing",
    "Normalization",
    "Remap",
    "aliases",
    "builtin_zoo",
    "cache_status",
    "canonical_name",
    "config_overrides",
    "expected_path",
    "get_spec",
    "local_overrides",
    "local_spec",
    "model_spec",
    "read_zoo",
    "registry",
    "specs",
    "study_specs",
]

SPEC_FILE = Path(__file__).with_name("models.toml")
# sources whose files are downloaded into ``weights_dir()/<model name>/``
DOWNLOADED_KINDS = ("timm", "torchvision", "url", "huggingface", "gdrive")


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
    revision: str | None = (
        None  # Hugging Face commit the file is downloaded from (huggingface, timm); None: main
    )


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


def _spec(entry: ModelEntry, zoo: ZooFile) -> ModelSpec:
    """The model an entry describes (its files by its source kind: ``ModelEntry.filename``)."""
    files: list[CheckpointFile] = []
    if entry.source != "random":
        url = (
            entry.url
            if entry.source == "torchvision"
            else entry.reference
            if entry.source == "url"
            else None
        )
        files.append(
            CheckpointFile(
                "checkpoint",
                entry.reference,
                entry.filename(),
                entry.remap,
                entry.sha256,
                entry.hash_prefix,
                url,
                entry.revision,
            )
        )
    if entry.head is not None and files:
        head = entry.head
        files.append(
            CheckpointFile(
                "head",
                head.reference,
                head.filename(),
                head.remap,
                head.sha256,
                head.hash_prefix,
                head.reference,
            )
        )
    return ModelSpec(
        name=entry.name,
        category=entry.category,
        study=entry.study,
        source=entry.source,
        reference=entry.reference,
        arch=entry.arch if entry.arch is not None else zoo.defaults.arch,
        normalization=entry.normalization,
        citation=zoo.citations.get(entry.citation, entry.citation),
        files=tuple(files),
        seed=entry.seed,
        note=" ".join(entry.note.split()),
        pickle_globals=entry.pickle_globals,
        extra=entry.extra,
        native=entry.native,
    )


def _model(
    raw: Mapping[str, Any], zoo: ZooFile, origin: str, label: Any, **context: Any
) -> ModelSpec:
    where = f"{origin} model {label!r}"
    return _spec(
        check(ModelEntry, raw, origin, where=where, context={**zoo.context(where), **context}), zoo
    )


def read_zoo(doc: Mapping[str, Any], origin: str) -> ZooFile:
    """A models.toml document checked (its entries are checked one by one: ``model_spec``)."""
    return check(ZooFile, doc, origin)


def model_spec(entry: Mapping[str, Any], zoo: ZooFile, origin: str) -> ModelSpec:
    """One ``[[model]]`` entry of ``origin``, checked against ``zoo``'s tables, as a spec."""
    return _model(entry, zoo, origin, entry.get("name"))


def builtin_zoo() -> ZooFile:
    """The checked models.toml of the package."""
    return _builtin()[2]


@lru_cache(maxsize=1)
def _builtin() -> tuple[dict[str, ModelSpec], dict[str, str], ZooFile]:
    """models.toml, checked and turned into specs once per process."""
    origin = str(SPEC_FILE)
    zoo = read_zoo(read_toml(SPEC_FILE, "the zoo's models.toml"), origin)
    models: dict[str, ModelSpec] = {}
    for entry in zoo.model:
        spec = model_spec(entry, zoo, origin)
        if spec.name in models:
            raise ConfigError(f"{SPEC_FILE}: duplicate model name {spec.name!r}")
        models[spec.name] = spec
    for alias, target in zoo.aliases.items():
        if target not in models:
            raise ConfigError(
                f"{SPEC_FILE} [aliases]: {alias!r} points to unknown model {target!r}"
            )
    models = {
        n: replace(s, aliases=tuple(a for a, t in zoo.aliases.items() if t == n))
        for n, s in models.items()
    }
    return models, dict(zoo.aliases), zoo


NOT_BUILTIN = (
    "{origin} [models] {name}: no built-in model of that name{dym} (a path points a built-in model "
    "at a local file; a new model needs a table with 'source' and 'reference')"
)


@dataclass(frozen=True)
class _Configured:
    """What repro.toml's ``[models]`` adds (new models) and points elsewhere (local files)."""

    added: dict[str, ModelSpec]
    overrides: dict[str, dict[str, Path]]
    registry: Registry[ModelSpec]


_CONFIGURED: dict[int, tuple[Any, _Configured]] = {}


def _configured(settings: Settings | None = None) -> _Configured:
    """The ``[models]`` of ``settings`` (default: the command's), parsed once per settings."""
    settings = settings if settings is not None else current()
    hit = _CONFIGURED.get(id(settings))
    if hit is not None and hit[0] is settings:
        return hit[1]
    builtin, _, zoo = _builtin()
    origin = settings.origin
    added: dict[str, ModelSpec] = {}
    overrides: dict[str, dict[str, Path]] = {}
    for name, value in settings.models.items():
        if (
            isinstance(value, dict) and "external" in value
        ):  # externally known values (repro.zoo.external)
            value = {k: v for k, v in value.items() if k != "external"}
            if not value:
                if name not in builtin:
                    raise ConfigError(
                        f"{origin} [models.{name}.external]: no built-in model of that "
                        f"name{did_you_mean(name, builtin)} (external values are for a zoo model, "
                        "or for a model this file adds with 'source' and 'reference')"
                    )
                continue
        new = isinstance(value, dict) and "source" in value
        if not new and name not in builtin:
            raise ConfigError(
                NOT_BUILTIN.format(origin=origin, name=name, dym=did_you_mean(name, builtin))
            )
        if isinstance(value, str):
            overrides[name] = {"checkpoint": Path(value).expanduser()}
        elif new and name in builtin:
            raise ConfigError(
                f"{origin} [models.{name}]: {name!r} is a built-in model; "
                "give only 'checkpoint' (and 'head') to point it at local files"
            )
        elif new:
            added[name] = _model(
                value, zoo, origin, name, added=f"{origin} [models.{name}]", name=name
            )
        elif isinstance(value, dict):
            local = check(Override, value, origin, where=f"{origin} [models.{name}]")
            overrides[name] = {
                role: Path(path).expanduser()
                for role, path in (("checkpoint", local.checkpoint), ("head", local.head))
                if path is not None
            }
        else:
            raise ConfigError(
                f"{origin} [models] {name}: expected a path or a table, got {value!r}"
            )
    reg: Registry[ModelSpec] = Registry("model")
    for name, spec in [*builtin.items(), *added.items()]:
        reg.register(name, spec)
    out = _Configured(added, overrides, reg)
    while len(_CONFIGURED) >= 8:
        _CONFIGURED.pop(next(iter(_CONFIGURED)))
    _CONFIGURED[id(settings)] = (settings, out)
    return out


@lru_cache(maxsize=1)
def _builtin_registry() -> Registry[ModelSpec]:
    reg: Registry[ModelSpec] = Registry("model")
    for name, spec in _builtin()[0].items():
        reg.register(name, spec)
    return reg


def registry(include_config: bool = True, settings: Settings | None = None) -> Registry[ModelSpec]:
    """Every model by name: the built-in zoo, then (``include_config``) the models repro.toml adds.

    Built once (per settings): callers share it, and must not register into it."""
    return _configured(settings).registry if include_config else _builtin_registry()


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
        return local_spec(name[len("file://") :])
    try:
        return registry().get(canonical_name(name))
    except UnknownNameError as exc:
        raise UnknownNameError(
            str(exc).replace("`python -m repro` help", "`python -m repro models`")
        ) from None


def local_spec(path: str | Path, name: str | None = None) -> ModelSpec:
    """An ad-hoc ResNet-50 checkpoint on disk (``file://PATH``) as a spec.

    Remapped like the study's local-file branch: optional
    state_dict/model_state_dict/online_backbone, ``module.`` stripped."""
    zoo = _builtin()[2]
    path = Path(path).expanduser()
    return ModelSpec(
        name=name or f"file://{path}",
        category="custom",
        study=False,
        source="local",
        reference=str(path),
        arch="timm:resnet50",
        normalization=zoo.normalizations["imagenet"],
        citation="unpublished",
        files=(CheckpointFile("checkpoint", str(path), path.name, zoo.remaps["drive"]),),
    )


def config_overrides(settings: Settings | None = None) -> dict[str, dict[str, Path]]:
    """Local files configured in repro.toml for built-in models: name -> {role: path}."""
    return _configured(settings).overrides


def expected_path(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    """Where the file of a downloaded source lives (or a user may put it by hand)."""
    if spec.source == "local":
        return Path(file.reference).expanduser()
    if spec.source == "package":
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
        return (
            "local"
            if all(expected_path(spec, f, weights_dir).is_file() for f in spec.files)
            else "local-missing"
        )
    if spec.source == "package":
        return "yes" if all(installed_path(f.reference, f.filename) for f in spec.files) else "no"
    return "yes" if all(expected_path(spec, f, weights_dir).is_file() for f in spec.files) else "no"


def local_overrides(spec: ModelSpec, checkpoint: Any) -> dict[str, Path]:
    """role -> local file the model is pointed at.

    ``checkpoint`` (a path, or ``{role: path}``) when given, else its ``[models]`` entry of
    repro.toml (empty: download)."""
    if checkpoint is None:
        return config_overrides().get(spec.name, {})
    if isinstance(checkpoint, Mapping):
        paths = {str(k): Path(v).expanduser() for k, v in checkpoint.items()}
    else:
        paths = {"checkpoint": Path(checkpoint).expanduser()}
    roles = {f.role for f in spec.files}
    unknown = set(paths) - roles
    if unknown:
        raise ConfigError(
            f"model {spec.name!r}: checkpoint roles {sorted(unknown)} unknown; it has "
            f"{sorted(roles)}"
        )
    return paths

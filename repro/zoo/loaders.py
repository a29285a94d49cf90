"""Model zoo: one loader per source kind, and ``load_model`` (spec -> normalized nn.Module).

A source loader only finds or downloads the weights file(s) of a spec into
``weights_dir()/<model>/`` and verifies them. Everything after that is shared: build the
architecture, read each file, apply the declared remap, check the keys STRICTLY (METHODS
Q6: missing or unexpected keys are an error listing them), load, and wrap the network so
that it takes [0, 1] input and normalizes inside.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from repro.base.atomic import clean_stale_temp
from repro.base.errors import CheckpointError, ConfigError
from repro.base.settings import weights_dir as default_weights_dir
from repro.zoo import arch_match, fetch
from repro.zoo.package import locate
from repro.zoo.remap import apply_remap, check_keys, positional_map, select_state
from repro.zoo.safe_load import load_weights
from repro.zoo.specs import (
    DOWNLOADED_KINDS,
    CheckpointFile,
    ModelSpec,
    builtin_zoo,
    expected_path,
    get_spec,
    local_overrides,
    specs,
)
from repro.zoo.tiny import tiny_for
from repro.zoo.weights_identity import files_identity, loaded_hashes, state_dict_sha256

# Which pickled globals a checkpoint may hold: repro.zoo.safe_load (ALLOWED_PICKLE_GLOBALS).


class NormalizedModel(nn.Module):
    """``model((x - mean) / std)`` for input ``x`` in [0, 1]; mean/std are buffers."""

    mean: torch.Tensor
    std: torch.Tensor

    def __init__(self, model: nn.Module, mean: tuple[float, ...], std: tuple[float, ...]) -> None:
        super().__init__()
        self.model = model
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model((x - self.mean) / self.std)


# --------------------------------------------------------------------------- architectures
def build_arch(spec: ModelSpec, device: str | torch.device = "cpu") -> nn.Module:
    """The network the spec's weights are loaded into.

    Built on the ``meta`` device by ``load_model`` (no random initialisation of 25M
    parameters that the checkpoint overwrites anyway); random test models are built for real.
    """
    kind, _, name = spec.arch.partition(":")
    if spec.source == "random" or kind == "tiny":
        return tiny_for(spec)
    with torch.device(device):
        return _build(spec, kind, name)


def _build(spec: ModelSpec, kind: str, name: str) -> nn.Module:
    if kind == "timm":
        import timm

        # a timm source builds its tag (architecture + pretrained config), never downloading
        return timm.create_model(
            spec.reference if spec.source == "timm" else name, pretrained=False
        )
    if kind == "torchvision":
        import torchvision

        return getattr(torchvision.models, name)(weights=None)
    raise ConfigError(
        f"model {spec.name!r}: unknown arch {spec.arch!r} (timm:<name>, torchvision:<name>, "
        "tiny:<width>)"
    )


# --------------------------------------------------------------------------- source loaders
@dataclass(frozen=True)
class SourceLoader:
    """Finds (downloading when needed) one weights file of a spec; returns a verified path."""

    kind: str
    fetch: Callable[[ModelSpec, CheckpointFile, Path], Path]
    describe: str


def _cached(path: Path, file: CheckpointFile) -> bool:
    if path.is_file():
        fetch.verify_file(path, file.sha256, file.hash_prefix)
        return True
    return False


def _fetch_timm(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    dest = expected_path(spec, file, weights_dir)
    if _cached(dest, file):
        return dest
    import timm

    cfg = timm.models.get_pretrained_cfg(spec.reference)
    repo = cfg.hf_hub_id if cfg is not None and cfg.hf_hub_id else f"timm/{spec.reference}"
    return fetch.hf_download(
        repo, file.filename, dest.parent, revision=file.revision, sha256=file.sha256
    )


def _fetch_url(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    dest = expected_path(spec, file, weights_dir)
    if _cached(dest, file):
        return dest
    return fetch.download(
        file.url or file.reference, dest, sha256=file.sha256, hash_prefix=file.hash_prefix
    )


def _fetch_hf(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    dest = expected_path(spec, file, weights_dir)
    if _cached(dest, file):
        return dest
    return fetch.hf_download(
        file.reference, file.filename, dest.parent, revision=file.revision, sha256=file.sha256
    )


def _fetch_gdrive(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    dest = expected_path(spec, file, weights_dir)
    if _cached(dest, file):
        return dest
    return fetch.gdrive_download(file.reference, dest, sha256=file.sha256)


def _fetch_local(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    path = expected_path(spec, file, weights_dir)
    if not path.is_file():
        raise CheckpointError(f"model {spec.name!r}: local checkpoint {path} does not exist")
    fetch.verify_file(path, file.sha256, file.hash_prefix)
    return path


def _fetch_package(spec: ModelSpec, file: CheckpointFile, weights_dir: Path) -> Path:
    return locate(
        file.reference, file.filename, model=spec.name, extra=spec.extra, sha256=file.sha256
    )


LOADERS: dict[str, SourceLoader] = {
    "timm": SourceLoader(
        "timm", _fetch_timm, "timm tag; weights from the Hugging Face hub (timm/<tag>)"
    ),
    "torchvision": SourceLoader(
        "torchvision", _fetch_url, "torchvision weights enum; file from download.pytorch.org"
    ),
    "url": SourceLoader("url", _fetch_url, "direct URL (plus an optional separate head file)"),
    "huggingface": SourceLoader("huggingface", _fetch_hf, "Hugging Face repository + file"),
    "gdrive": SourceLoader("gdrive", _fetch_gdrive, "Google Drive file id"),
    "local": SourceLoader("local", _fetch_local, "a file on this machine"),
    "random": SourceLoader("random", lambda *a: Path(), "seeded random initialisation (no file)"),
    "package": SourceLoader(
        "package",
        _fetch_package,
        "a file inside an installed Python distribution (importlib.metadata)",
    ),
}


# --------------------------------------------------------------------------- reading files
def read_checkpoint(path: Path, spec: ModelSpec, file: CheckpointFile | None = None) -> Any:
    """The object stored in a weights file (safetensors or torch.save), read as data only.

    See ``repro.zoo.safe_load``: weights_only=True, allowlisted globals, no TorchScript."""
    expected = "no published hash"
    if file is not None and (file.sha256 or file.hash_prefix):
        expected = f"expected {fetch.expected_hash_text(file.sha256, file.hash_prefix)}"
    hint = (
        f"the file is truncated, corrupt or not a weights file ({expected}); delete it and load "
        "again to re-download, or point the model at a good copy"
    )
    if path.suffix == ".safetensors":
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            return load_file(str(path))
        except (SafetensorError, OSError, ValueError) as exc:
            raise CheckpointError(
                f"{path}: cannot be read as safetensors ({exc}); {hint}"
            ) from None

    return load_weights(path, spec.pickle_globals, where=f"model {spec.name!r}", hint=hint)


def weight_files(spec: ModelSpec, weights_dir: Path, checkpoint: Any = None) -> dict[str, Path]:
    """role -> verified local path of every weights file (downloading what is missing)."""
    overrides = local_overrides(spec, checkpoint)
    if spec.source in DOWNLOADED_KINDS:  # downloads a killed run left half-written
        clean_stale_temp(Path(weights_dir) / spec.name)
    paths = {}
    for file in spec.files:
        if file.role in overrides:
            path = overrides[file.role]
            if not path.is_file():
                raise CheckpointError(
                    f"model {spec.name!r}: local {file.role} file {path} does not exist"
                )
            paths[file.role] = path
        else:
            paths[file.role] = LOADERS[spec.source].fetch(spec, file, weights_dir)
    return paths


def state_dict_for(
    spec: ModelSpec, paths: Mapping[str, Path], target: Mapping[str, Any]
) -> dict[str, Any]:
    """Read, remap and merge the spec's files; strict key/shape check against ``target``.

    A file that mostly does not fit is blamed on the architecture, with the zoo's that would fit
    (``wrong_architecture``)."""
    try:
        return _merged_state(spec, paths, target)
    except CheckpointError:
        error = wrong_architecture(spec, paths, target)
        if error is None:
            raise
        raise error from None


@functools.cache
def architecture_keys(arch: str) -> dict[str, Any]:
    """The state dict of architecture ``arch`` (``timm:<name>``, ``torchvision:<name>``).

    Built on the ``meta`` device (shapes only, no memory, no initialisation)."""
    kind, _, name = arch.partition(":")
    with torch.device("meta"):
        if kind == "timm":
            import timm

            return dict(timm.create_model(name, pretrained=False).state_dict())
        import torchvision

        return dict(getattr(torchvision.models, name)(weights=None).state_dict())


def zoo_architectures() -> list[str]:
    """The ``arch`` values of the zoo's entries that a checkpoint can be loaded into."""
    return sorted(
        {
            s.arch
            for s in specs()
            if s.source != "random" and s.arch.startswith(("timm:", "torchvision:"))
        }
    )


def wrong_architecture(
    spec: ModelSpec, paths: Mapping[str, Path], target: Mapping[str, Any]
) -> CheckpointError | None:
    """The error naming the architecture as the cause of a misfit, or None.

    The error when the spec's one file mostly does not fit ``target`` (``repro.zoo.arch_match``);
    None when a remap is the likelier fix (most keys fit) or the spec has several files."""
    if len(spec.files) != 1:
        return None
    file = spec.files[0]
    path = paths[file.role]
    obj = read_checkpoint(path, spec, file)
    try:
        state = apply_remap(select_state(obj, file.remap, path), file.remap)
    except CheckpointError:
        return None  # not a state dict where the remap looks: its own error says so
    if file.remap.positional:
        if _pairs_by_position(state, target):
            return None  # the file's own pairing error (a swapped or reshaped tensor) says more
    elif not arch_match.mostly_mismatched(state, target):
        return None
    known = zoo_architectures()
    candidates = {a: architecture_keys(a) for a in known if a != spec.arch}
    return arch_match.architecture_error(
        path,
        model=spec.name,
        arch=spec.arch,
        remap=file.remap.name,
        state=state,
        target=target,
        matches=arch_match.matching(obj, candidates, builtin_zoo().remaps),
        known=known,
    )


def _pairs_by_position(state: Mapping[str, Any], target: Mapping[str, Any]) -> bool:
    """Whether the file's tensors pair with the architecture's by position.

    The file has the architecture's number of tensors and most of them pair by position in shape:
    then a positional remap's failure is the file's own (one swapped or reshaped tensor, which
    ``positional_map`` names), not another architecture."""
    if len(state) != len(target):
        return False
    same = sum(
        tuple(getattr(a, "shape", ())) == tuple(getattr(b, "shape", ()))
        for a, b in zip(state.values(), target.values(), strict=True)
    )
    return 2 * same >= len(target)


def _merged_state(
    spec: ModelSpec, paths: Mapping[str, Path], target: Mapping[str, Any]
) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for file in spec.files:
        path = paths[file.role]
        state = apply_remap(
            select_state(read_checkpoint(path, spec, file), file.remap, path), file.remap
        )
        if file.remap.positional:
            state = positional_map(state, target, file.remap.name, path)
        overlap = set(state) & set(merged)
        if overlap:
            raise CheckpointError(
                f"{path}: keys also present in another file of {spec.name!r}: {sorted(overlap)[:5]}"
            )
        merged.update(state)
    names = " + ".join(f"{f.remap.name!r} ({paths[f.role].name})" for f in spec.files)
    where = ", ".join(str(paths[f.role]) for f in spec.files)
    check_keys(merged, target, names, where)
    return merged


def _assign(
    net: nn.Module, state: dict[str, Any], target: Mapping[str, Any], spec: ModelSpec
) -> None:
    """Load the checked state into a meta-device network.

    Float tensors are cast to float32, as ``load_state_dict`` copying into a float32 model would;
    tolerated missing counters = 0."""
    full = {}
    for key, ref in target.items():
        value = state.get(key)
        if value is None:  # only tolerated keys reach here (check_keys): BN step counters
            value = torch.zeros(ref.shape, dtype=ref.dtype)
        elif not isinstance(value, torch.Tensor):
            raise CheckpointError(
                f"model {spec.name!r}: {key} is a {type(value).__name__} in the checkpoint, "
                "expected a tensor"
            )
        elif ref.is_floating_point() and not value.is_floating_point():
            raise CheckpointError(
                f"model {spec.name!r}: {key} is a {value.dtype} tensor in the checkpoint, expected "
                f"a floating-point tensor (the model's is {ref.dtype}); the file holds other data "
                "under this key"
            )
        elif value.is_floating_point():
            value = value.to(torch.float32)
        full[key] = value
    net.load_state_dict(full, strict=True, assign=True)
    left = [n for n, t in (*net.named_parameters(), *net.named_buffers()) if t.is_meta]
    if left:
        raise CheckpointError(f"model {spec.name!r}: tensors not provided by any file: {left[:10]}")


def load_model(
    name: str | ModelSpec,
    *,
    weights_dir: str | os.PathLike[str] | None = None,
    device: str | torch.device = "cpu",
    checkpoint: str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]] | None = None,
) -> NormalizedModel:
    """The model ``name`` (study name, alias, or ``file://PATH``), normalizing, in eval mode.

    ``checkpoint`` points the model at local file(s) instead of downloading: a path (the
    main file) or ``{"checkpoint": PATH, "head": PATH}``; ``[models]`` in repro.toml does
    the same persistently. Raises CheckpointError for missing, truncated, wrongly hashed or
    mismatching files.
    """
    spec = get_spec(name) if isinstance(name, str) else name
    wdir = Path(weights_dir).expanduser() if weights_dir is not None else default_weights_dir()

    files: dict[str, Path] = {}
    if spec.source == "random":
        if checkpoint is not None:
            raise ConfigError(
                f"model {spec.name!r} is a seeded random test model; it takes no checkpoint"
            )
        net = build_arch(spec)
        identity = state_dict_sha256(net)
    else:
        files = weight_files(spec, wdir, checkpoint)
        identity = files_identity(loaded_hashes(spec, files, local_overrides(spec, checkpoint)))
        net = build_arch(spec, device="meta")
        target = net.state_dict()
        state = state_dict_for(spec, files, target)
        _assign(net, state, target, spec)
    model = NormalizedModel(net, spec.normalization.mean, spec.normalization.std)
    model.spec = spec  # type: ignore[assignment]
    model.weight_files = files  # type: ignore[assignment]
    model.weights_sha256 = identity  # type: ignore[assignment]  # which weights: part of a job's identity
    # inference only: no parameter gradients (input gradients, e.g. for PGD, still work)
    return model.requires_grad_(False).eval().to(device)

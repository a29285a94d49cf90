"""Model zoo: which weights a model is, as one sha256 (part of a measurement job's identity).

A model with weights files is identified by the sha256 of each file (``files_identity``: a
hash over ``role:sha256`` lines); a seeded random test model, which has no file, by the
sha256 of its state dict (``state_dict_sha256``). ``loaded_hashes`` gives the verified hash
of each file while a model is loaded (the published sha256, the trust-on-first-use lock, or
the hash of a user's local file); ``expected_identity`` tells the identity a load would give
WITHOUT loading or downloading anything (None when that cannot be known yet), so the runner
can decide whether a stored record still matches its job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from repro.zoo.fetch import sha256_of
from repro.zoo.lockfile import read_lock, verify_or_pin
from repro.zoo.specs import (
    DOWNLOADED_KINDS,
    CheckpointFile,
    ModelSpec,
    expected_path,
    local_overrides,
)


def files_identity(hashes: Mapping[str, str]) -> str:
    """One sha256 over the per-role file hashes (order-independent)."""
    text = "".join(f"{role}:{digest}\n" for role, digest in sorted(hashes.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def state_dict_sha256(module: Any) -> str:
    """sha256 over every tensor of a module's state dict (name, dtype, shape, bytes)."""
    import torch

    h = hashlib.sha256()
    for name, tensor in module.state_dict().items():
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}\t{t.dtype}\t{tuple(t.shape)}\n".encode())
        if t.numel():
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def model_weights_sha256(model: Any) -> str | None:
    """The identity a loaded model carries, else the hash of its state dict.

    The identity is ``weights_sha256``, set by ``load_model``; None for an object that is not a
    torch module."""
    value = getattr(model, "weights_sha256", None)
    if isinstance(value, str):
        return value
    if hasattr(model, "state_dict"):
        return state_dict_sha256(model)
    return None


def _user_file(spec: ModelSpec, role: str, overrides: Mapping[str, Path]) -> bool:
    return role in overrides or spec.source == "local"


def _hashed_now(spec: ModelSpec, file: CheckpointFile, overrides: Mapping[str, Path]) -> bool:
    """Whether ``file`` is identified by its hash at load time, never pinned in a lock file.

    Such files are a user's own file, and a file inside an installed package that (unlike the
    built-in ``package`` entries, whose sha256 is required and checked by
    ``repro.zoo.package.locate``) pins no sha256 -- a lock file never goes into an installed
    distribution."""
    return _user_file(spec, file.role, overrides) or (spec.source == "package" and not file.sha256)


def loaded_hashes(
    spec: ModelSpec, paths: Mapping[str, Path], overrides: Mapping[str, Path]
) -> dict[str, str]:
    """role -> sha256 of each verified weights file.

    Downloaded files without a published hash are checked against (or pinned in) their lock file
    here (``repro.zoo.lockfile``)."""
    out: dict[str, str] = {}
    for file in spec.files:
        path = paths[file.role]
        if _hashed_now(spec, file, overrides):
            out[file.role] = sha256_of(path)  # a user's own file: its hash now, no lock
        elif file.sha256:
            # verified against the published (or, for a package source, the spec's pinned) hash by
            # the source loader
            out[file.role] = file.sha256.lower()
        else:
            out[file.role] = verify_or_pin(path, spec.name)
    return out


def expected_identity(spec: ModelSpec, weights_dir: Path, checkpoint: Any = None) -> str | None:
    """The identity ``load_model`` would give now, or None.

    None when it needs a download (or a first load) to be known."""
    if spec.source == "random":
        from repro.zoo.tiny import tiny_for

        return state_dict_sha256(tiny_for(spec))

    overrides = local_overrides(spec, checkpoint)
    hashes: dict[str, str] = {}
    for file in spec.files:
        if _hashed_now(spec, file, overrides):
            path = overrides.get(file.role) or expected_path(spec, file, weights_dir)
            if not Path(path).is_file():
                return None
            hashes[file.role] = sha256_of(Path(path))
        elif file.sha256:
            hashes[file.role] = file.sha256.lower()
        elif spec.source in DOWNLOADED_KINDS:
            path = expected_path(spec, file, weights_dir)
            entry = read_lock(path.parent).get(path.name) if path.is_file() else None
            if entry is None:
                return None
            hashes[file.role] = entry["sha256"]
        else:
            return None
    return files_identity(hashes)

"""Model zoo: the study's models as data (one frozen spec each) and one loader per source kind.

The source kinds: timm, torchvision, url, hugging face, google drive, local file. Strict loading
after declared key remaps.

Listing (``specs``, ``get_spec``) never imports torch; ``load_model`` does, lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from repro.zoo.specs import (
    SOURCE_KINDS,
    CheckpointFile,
    ModelSpec,
    Normalization,
    Remap,
    aliases,
    cache_status,
    get_spec,
    specs,
    study_specs,
)

if TYPE_CHECKING:
    from repro.zoo.loaders import NormalizedModel

__all__ = [
    "SOURCE_KINDS",
    "CheckpointFile",
    "ModelSpec",
    "Normalization",
    "Remap",
    "aliases",
    "cache_status",
    "get_spec",
    "load_model",
    "load_model_file",
    "specs",
    "study_specs",
]


def load_model(
    name: str | ModelSpec, *, weights_dir: Any = None, device: Any = "cpu", checkpoint: Any = None
) -> NormalizedModel:
    """See :func:`repro.zoo.loaders.load_model` (imports torch)."""
    from repro.zoo.loaders import load_model as _load

    return _load(name, weights_dir=weights_dir, device=device, checkpoint=checkpoint)


def load_model_file(
    spec: str, *, device: Any, weights_dir: Any = None, allow_torchscript: bool = False
) -> Any:
    """See :func:`repro.zoo.model_file.load_model_file` (imports torch)."""
    from repro.zoo.model_file import load_model_file as _load

    return _load(spec, device=device, weights_dir=weights_dir, allow_torchscript=allow_torchscript)

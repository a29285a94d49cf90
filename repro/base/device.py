"""The compute device, chosen in ONE place.

``None`` or ``"auto"`` means CUDA when torch sees a GPU, else the CPU; an explicit CUDA device on a
machine without CUDA is a ConfigError (one line) rather than a failure deep inside torch. torch is
imported only when needed.
"""

from __future__ import annotations

from repro.base.errors import ConfigError


def resolve_device(device: str | None = None) -> str:
    """The device name to use (``"cuda"``, ``"cuda:1"``, ``"cpu"``, ...)."""
    name = None if device is None or str(device) == "auto" else str(device)
    if name is not None and not name.startswith("cuda"):
        return name
    import torch

    if name is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available():
        raise ConfigError(
            f"--device {name}: CUDA is not available on this machine (use --device cpu)"
        )
    return name

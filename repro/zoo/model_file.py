"""Model zoo, a model from a local file or by name: a whole ``nn.Module`` saved as TorchScript
or with ``torch.save`` (it maps [0, 1] images to 1000 logits, normalization inside), else a
zoo name (``repro.zoo.load_model``). Used by ``python -m repro probe``; imports torch.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from repro.base.errors import CheckpointError


def load_model_file(spec: str, *, device: Any, weights_dir: str | None = None) -> Any:
    """A zoo model by name, or a whole nn.Module from a local TorchScript / torch.save file."""
    import torch

    path = Path(spec).expanduser()
    if path.is_file():
        try:
            with warnings.catch_warnings():  # torch 2.x marks TorchScript deprecated; still supported
                warnings.simplefilter("ignore", FutureWarning)
                model = torch.jit.load(str(path), map_location=device)
        except Exception:  # not TorchScript: a pickled nn.Module
            try:
                model = torch.load(str(path), map_location=device, weights_only=False)
            except Exception as exc:
                raise CheckpointError(f"{path}: neither a TorchScript file nor a torch.save'd nn.Module "
                                      f"({type(exc).__name__}: {exc})") from None
        if not isinstance(model, torch.nn.Module):
            raise CheckpointError(f"{path}: holds a {type(model).__name__}, expected a whole nn.Module "
                                  "(a state_dict needs a zoo entry: see python -m repro models)")
        return model.to(device).eval()
    if any(sep in spec for sep in ("/", "\\")) or path.suffix in (".pt", ".pth", ".ckpt", ".bin"):
        raise CheckpointError(f"{path}: model file not found")
    from repro.zoo import load_model

    return load_model(spec, weights_dir=weights_dir, device=device)

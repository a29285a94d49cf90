"""Model zoo, a model from a local file or by name.

A zoo name (``repro.zoo.load_model``), a ResNet-50 state dict file (read as data, like
``file://PATH`` in the zoo), or, only when the caller allows it, a TorchScript file (it maps [0, 1]
images to 1000 logits, normalization inside). A whole pickled ``nn.Module`` is never loaded:
unpickling it would run code from the file, and TorchScript is code too (``repro.zoo.safe_load``).
Used by ``python -m repro probe``; imports torch.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from repro.base.errors import CheckpointError
from repro.zoo import load_model
from repro.zoo.safe_load import is_torchscript_archive


def load_model_file(
    spec: str, *, device: Any, weights_dir: str | None = None, allow_torchscript: bool = False
) -> Any:
    """A zoo model by name, or a model from a file.

    A ResNet-50 state dict file (read as data: ``file://`` in the zoo), or, only with
    ``allow_torchscript``, a TorchScript file (code: see repro.zoo.safe_load)."""
    path = Path(spec).expanduser()
    if path.is_file():
        if is_torchscript_archive(path):
            if not allow_torchscript:
                raise CheckpointError(
                    f"{path}: is a TorchScript archive, which holds code that torch runs while "
                    "loading it; model "
                    "files are read as data only. Save the weights instead "
                    "(torch.save(model.state_dict(), PATH)) "
                    "and give that file (a ResNet-50 state dict) or a [models.<name>] entry with "
                    'source = "local"'
                )
            import torch

            try:
                with (
                    warnings.catch_warnings()
                ):  # torch 2.x marks TorchScript deprecated; still supported
                    warnings.simplefilter("ignore", FutureWarning)
                    model = torch.jit.load(str(path), map_location=device)
            except Exception as exc:
                raise CheckpointError(
                    f"{path}: cannot be loaded as TorchScript ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0] if str(exc) else ''})"
                ) from None
            return model.to(device).eval()

        try:
            return load_model(f"file://{path.resolve()}", weights_dir=weights_dir, device=device)
        except CheckpointError as exc:
            raise CheckpointError(
                f"{exc} (--model takes a zoo name or a ResNet-50 state dict file; a whole "
                "nn.Module is never unpickled)"
            ) from None
    if any(sep in spec for sep in ("/", "\\")) or path.suffix in (".pt", ".pth", ".ckpt", ".bin"):
        raise CheckpointError(
            f"{path}: model file not found; expected a checkpoint file (a ResNet-50 state dict) "
            "or a zoo name (`python -m repro models` lists them)"
        )

    return load_model(spec, weights_dir=weights_dir, device=device)

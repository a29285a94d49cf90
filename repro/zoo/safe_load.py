"""Model zoo: weights files are data, never code.

Every pickle-based weights file is read with ``torch.load(weights_only=True)``: torch's
restricted unpickler builds tensors and plain containers only, and refuses any other global
(class or function) the file names. A model may declare further globals its checkpoint needs
(``pickle_globals`` in ``models.toml`` or a user's ``repro.toml``), but only from
``ALLOWED_PICKLE_GLOBALS``: tensor/storage rebuild helpers, plain containers and numpy's
scalar/array reconstruction types. Anything else (``builtins.exec``, ``os.system``, a
training script's own class) is a ``ConfigError`` naming the entry and the file it came from,
because allowing a global lets the unpickler call it.

TorchScript archives are not weights files: they hold TorchScript code and pickles that torch
runs when it loads them (torch 2.14's ``torch.jit.load`` docstring: "It is possible to
construct malicious pickle data which will execute arbitrary code during torch.jit.load";
SECURITY.md: "TorchScript models should be treated the same way as locally executable code";
``torch.load(weights_only=True)`` itself refuses them). ``is_torchscript_archive`` recognises
one without loading it, so callers can refuse it before any code runs.

Nothing here imports torch at module level: ``check_pickle_globals`` runs while the zoo specs
are parsed (listing models never imports torch).
"""

from __future__ import annotations

import importlib
import pickle
import re
import warnings
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from repro.base.errors import CheckpointError, ConfigError

# global -> why constructing it runs no code of the file's choosing
ALLOWED_PICKLE_GLOBALS: dict[str, str] = {
    # plain containers
    "collections.OrderedDict": "dict subclass (state dicts)",
    "argparse.Namespace": "attribute container (training arguments saved next to the weights)",
    # torch tensor / storage rebuild helpers (torch allows these by default too)
    "torch._utils._rebuild_tensor": "tensor rebuild helper",
    "torch._utils._rebuild_tensor_v2": "tensor rebuild helper",
    "torch._utils._rebuild_tensor_v3": "tensor rebuild helper",
    "torch._utils._rebuild_parameter": "parameter rebuild helper",
    "torch._utils._rebuild_parameter_with_state": "parameter rebuild helper",
    "torch.Size": "tensor shape",
    "torch.FloatStorage": "typed storage",
    "torch.DoubleStorage": "typed storage",
    "torch.HalfStorage": "typed storage",
    "torch.BFloat16Storage": "typed storage",
    "torch.LongStorage": "typed storage",
    "torch.IntStorage": "typed storage",
    "torch.ShortStorage": "typed storage",
    "torch.CharStorage": "typed storage",
    "torch.ByteStorage": "typed storage",
    "torch.BoolStorage": "typed storage",
    # numpy scalars and arrays (e.g. a best accuracy stored as numpy.float64)
    "numpy.core.multiarray.scalar": "numpy scalar reconstruction",
    "numpy._core.multiarray.scalar": "numpy scalar reconstruction",
    "numpy.core.multiarray._reconstruct": "numpy array reconstruction",
    "numpy._core.multiarray._reconstruct": "numpy array reconstruction",
    "numpy.ndarray": "numpy array",
    "numpy.dtype": "numpy dtype",
    "numpy.dtypes.Float64DType": "numpy dtype",
    "numpy.dtypes.Float32DType": "numpy dtype",
    "numpy.dtypes.Float16DType": "numpy dtype",
    "numpy.dtypes.Int64DType": "numpy dtype",
    "numpy.dtypes.Int32DType": "numpy dtype",
    "numpy.dtypes.UInt8DType": "numpy dtype",
    "numpy.dtypes.BoolDType": "numpy dtype",
}

# allowed for every checkpoint (ordinary training checkpoints pickle these next to the weights)
DEFAULT_PICKLE_GLOBALS: tuple[str, ...] = (
    "argparse.Namespace",
    "numpy._core.multiarray.scalar",
    "numpy.core.multiarray.scalar",
    "numpy.dtype",
    "numpy.dtypes.Float64DType",
    "numpy.dtypes.Float32DType",
    "numpy.dtypes.Int64DType",
)

_GLOBAL_RE = re.compile(r"GLOBAL ([\w.]+)")


def check_pickle_globals(names: Iterable[Any], where: str) -> tuple[str, ...]:
    """The declared globals as a tuple, each checked against ``ALLOWED_PICKLE_GLOBALS``.

    A ConfigError naming ``where`` (file and entry) for any name outside the allowlist."""
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise ConfigError(f"{where}: pickle_globals must be a list of names, got {names!r}")
    out = []
    for name in names:
        if not isinstance(name, str) or name not in ALLOWED_PICKLE_GLOBALS:
            raise ConfigError(
                f"{where}: pickle_globals entry {name!r} is not allowed: weights files are read as "
                "data, and only tensor and container types may be unpickled "
                f"({', '.join(sorted(ALLOWED_PICKLE_GLOBALS))})"
            )
        out.append(name)
    return tuple(out)


def _resolve(dotted: str) -> Any:
    module, _, attr = dotted.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def resolved_globals(extra: Iterable[str], where: str) -> list[Any]:
    """The default and ``extra`` allowed globals that exist in this environment.

    numpy moved ``core`` -> ``_core`` in 2.0, so a missing one of the defaults is skipped."""
    extra = check_pickle_globals(extra, where)
    found = []
    for dotted in dict.fromkeys((*DEFAULT_PICKLE_GLOBALS, *extra)):
        try:
            found.append(_resolve(dotted))
        except (ImportError, AttributeError):
            if dotted in extra and dotted not in DEFAULT_PICKLE_GLOBALS:
                raise ConfigError(
                    f"{where}: pickle_globals entry {dotted!r} cannot be imported here"
                ) from None
    return found


def is_torchscript_archive(path: Path) -> bool:
    """True for a TorchScript zip (``<archive>/constants.pkl`` or ``code/``).

    Checked without torch."""
    try:
        if not zipfile.is_zipfile(path):
            return False
        with zipfile.ZipFile(path) as zf:
            return any(
                n.endswith("/constants.pkl") or n == "constants.pkl" or "/code/" in n
                for n in zf.namelist()
            )
    except (OSError, zipfile.BadZipFile):
        return False


def refusal(path: Path, detail: str) -> CheckpointError:
    """The one-line refusal of a file that pickles something other than tensors and containers."""
    return CheckpointError(
        f"{path}: refused: the file pickles {detail}, which is not a tensor or a plain container; "
        "weights files are read as data only and no code from them is run. Use a checkpoint that "
        "holds only tensors (a state dict saved with torch.save(model.state_dict(), PATH), or "
        "safetensors)"
    )


def load_weights(
    path: Path, extra_globals: Iterable[str] = (), *, where: str = "", hint: str = ""
) -> Any:
    """``torch.load(path, weights_only=True)`` with the allowed globals.

    Every failure is a one-line CheckpointError naming the file."""
    import torch

    globals_ = resolved_globals(extra_globals, where or str(path))
    if is_torchscript_archive(path):
        raise CheckpointError(
            f"{path}: is a TorchScript archive (code that torch runs while loading it), not a "
            "weights file; weights files are read as data only: save the state dict instead "
            "(torch.save(model.state_dict(), PATH))"
        )
    try:
        with (
            warnings.catch_warnings()
        ):  # e.g. "Detected pickle protocol 4": the refusal below says what matters
            warnings.simplefilter("ignore", UserWarning)
            with torch.serialization.safe_globals(globals_):
                return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        text = str(exc)
        if "Weights only load failed" in text or "Unsupported global" in text:
            found = _GLOBAL_RE.search(text)
            if found:
                raise refusal(path, f"the global {found.group(1)}") from None
            op = re.search(r"Unsupported operand (\d+)", text)
            raise refusal(
                path,
                f"pickle opcode {op.group(1)} (not a torch.save file)"
                if op
                else "objects the weights-only reader refuses",
            ) from None
        raise CheckpointError(
            f"{path}: cannot be unpickled ({text.splitlines()[0] if text else exc!r}); {hint}"
        ) from None
    except MemoryError:
        raise CheckpointError(f"{path}: too large to read into memory; {hint}") from None
    except (
        Exception
    ) as exc:  # torch raises RuntimeError, KeyError, EOFError, ... for non-checkpoint bytes
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CheckpointError(
            f"{path}: cannot be read as a PyTorch checkpoint ({type(exc).__name__}: {msg}); {hint}"
        ) from None

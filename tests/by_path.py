"""Load a Python file that is not in a package (docs/gen_cli_output.py, docs/capture_inputs.py,
noxfile.py) as a module, for the tests of the docs tooling and the nox sessions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(name: str, path: Path, *, register: bool = True) -> ModuleType:
    """The module ``name`` executed from ``path``.

    ``register``: put it in ``sys.modules`` first (kept if a module of that name is there), as
    a dataclass or a pickle defined in it needs; nox's file is loaded unregistered, since nox
    registers each session at import."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python file that can be loaded")
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module

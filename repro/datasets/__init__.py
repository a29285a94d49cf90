"""Datasets: dataset readers, layout validation, the crop cache and generated mini copies.

Readers for local dataset roots, validated layouts, the decode-once crop cache, and generated
miniature copies. Probes consume ``ImageSource`` objects (see ``base``).

Public entry points: ``open_dataset(name, root=None, *, mini=False)`` and
``make_mini(dir)``; dataset specs in ``specs.SPECS``; configured roots in
``roots.dataset_root(name)``. Nothing is imported eagerly beyond
numpy: torch/torchvision load only when images are decoded.
"""

from __future__ import annotations

from typing import Any

from repro.datasets.base import ArraySource, ImageBatch, ImageSource
from repro.datasets.specs import SPECS, DatasetSpec, get_spec

__all__ = [
    "ArraySource",
    "DatasetSpec",
    "ImageBatch",
    "ImageSource",
    "SPECS",
    "get_spec",
    "make_mini",
    "open_dataset",
    "open_files",
    "dataset_names",
]


def dataset_names() -> list[str]:
    return list(SPECS)


def __getattr__(name: str) -> Any:
    if name in ("open_dataset", "open_files"):
        from repro.datasets import open as _open

        return getattr(_open, name)
    if name == "make_mini":
        from repro.datasets.mini import make_mini

        return make_mini
    raise AttributeError(f"module 'repro.datasets' has no attribute {name!r}")

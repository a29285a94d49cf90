"""The contract between datasets and probes.

An ``ImageSource`` yields ``ImageBatch`` es of uint8 RGB crops (N, 3, H, W) with integer
labels and item names, in a fixed order. Probes convert to float in [0, 1] on their device
and never decode files themselves, so each dataset is decoded once (the crop cache) and
shared by every model and every measurement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass
class ImageBatch:
    images: np.ndarray  # uint8, (N, 3, H, W), RGB
    labels: np.ndarray  # int64, (N,); -1 where the item has no label
    names: list[str]  # item names (file names), unique within the source

    def __post_init__(self) -> None:
        if self.images.dtype != np.uint8 or self.images.ndim != 4 or self.images.shape[1] != 3:
            raise ValueError(
                f"ImageBatch.images must be uint8 (N, 3, H, W), got {self.images.dtype} {self.images.shape}"
            )
        if len(self.labels) != len(self.images) or len(self.names) != len(self.images):
            raise ValueError("ImageBatch: images, labels and names differ in length")


@runtime_checkable
class ImageSource(Protocol):
    """A fixed, ordered collection of labelled images."""

    name: str

    def __len__(self) -> int: ...

    def batches(self, batch_size: int) -> Iterator[ImageBatch]: ...

    def fingerprint(self) -> str:
        """A stable hash of the content (names, labels, pixels or file stats)."""
        ...


class ArraySource:
    """An ImageSource over in-memory arrays (tests, generated data, the crop cache)."""

    def __init__(
        self,
        name: str,
        images: np.ndarray,
        labels: Sequence[int] | np.ndarray,
        names: Sequence[str],
    ):
        self.name = name
        self.images = images
        self.labels = np.asarray(labels, dtype=np.int64)
        self.names = list(names)
        ImageBatch(images[:0], self.labels[:0], [])  # validates dtype and shape
        if not (len(images) == len(self.labels) == len(self.names)):
            raise ValueError(f"{name}: images, labels and names differ in length")

    def __len__(self) -> int:
        return len(self.images)

    def batches(self, batch_size: int) -> Iterator[ImageBatch]:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        for start in range(0, len(self), batch_size):
            stop = start + batch_size
            yield ImageBatch(
                np.ascontiguousarray(self.images[start:stop]),
                self.labels[start:stop],
                self.names[start:stop],
            )

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        h.update("\n".join(self.names).encode())
        h.update(self.labels.tobytes())
        h.update(np.ascontiguousarray(self.images).tobytes())
        return h.hexdigest()[:16]

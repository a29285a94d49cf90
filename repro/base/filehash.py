"""The sha256 of a file's bytes, read in 1 MiB blocks.

One function for the published data files, the model weights and the dataset fingerprints."""

from __future__ import annotations

import hashlib
import os

CHUNK = 1 << 20


def sha256_of(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of the file at ``path`` (OSError propagates: callers word their own error)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()

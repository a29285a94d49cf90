"""Base, the OpenMP wait policy of the CPU kernels (torch's intra-op threads, MKL, oneDNN).

By default the OpenMP runtime torch ships (GNU libgomp) lets a thread that waits at the end of
a parallel region spin on the CPU for a while before it sleeps. On a machine whose cores are
shared (other engineers' jobs, several workers, a batch system's neighbours) the spinning threads
take the CPU from the threads that have work, and every region ends late. Measured here (2 cores
with 4 other engineers' load, EfficientNet-Lite0 forward at batch 16, float32): with 2 torch
threads 158-253 ms of wall and 105-163 ms of CPU per image, against 41-57 ms and 28-37 ms with
``OMP_WAIT_POLICY=PASSIVE`` (1 thread: 37-49 ms and 25-33 ms either way): the 16-class critical
band went from 4.7 to 1.3 s per GraySplit image. On an idle machine passive waiting costs a
wake-up per region, small against a forward pass.

The runtime reads the variable once, when it is loaded (with torch), so ``python -m repro`` sets
it before anything imports torch; a value already in the environment is kept
(``OMP_WAIT_POLICY=ACTIVE`` restores the spinning).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

VARIABLE = "OMP_WAIT_POLICY"
DEFAULT = "PASSIVE"


def prefer_passive_waiting(environ: MutableMapping[str, str] | None = None) -> str:
    """Set ``OMP_WAIT_POLICY`` to ``PASSIVE`` in ``environ`` unless it is set already.

    ``environ`` defaults to ``os.environ``; returns the value in force. Effective only before
    torch is imported."""
    env = os.environ if environ is None else environ
    return env.setdefault(VARIABLE, DEFAULT)

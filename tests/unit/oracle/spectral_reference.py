"""Oracle: the study's spectral filter for ONE image, literally (``eval_spectral.py:18-38``),
in NumPy float64. Deliberately independent of repro.scoring.spectral: the mask is built here
from the cut-off as the study's code does."""

from __future__ import annotations

import numpy as np

#: the cut-offs exactly as the study's loop produced them
STUDY_CUTOFFS = [0.01, *np.arange(0.1, 0.99, 0.1), 0.99]


def bandpass_filter(x: np.ndarray, cutoff_freq: float, lowpass: bool = True) -> np.ndarray:
    """x: (C, H, W) in [0, 1] -> filtered, clipped to [0, 1]."""
    assert 0 <= cutoff_freq <= 1
    fft = np.fft.fftshift(np.fft.fft2(x, axes=(-2, -1)), axes=(-2, -1))
    if not lowpass:
        cutoff_freq = 1 - cutoff_freq
    h, w = fft.shape[-2:]
    cy, cx = h // 2, w // 2
    ry, rx = int(cutoff_freq * cy), int(cutoff_freq * cx)
    if lowpass:
        mask = np.zeros_like(fft)
        mask[:, cy - ry : cy + ry, cx - rx : cx + rx] = 1
    else:
        mask = np.ones_like(fft)
        mask[:, cy - ry : cy + ry, cx - rx : cx + rx] = 0
    return np.fft.ifft2(np.fft.ifftshift(fft * mask, axes=(-2, -1)), axes=(-2, -1)).real.clip(0, 1)


def all_conditions(x: np.ndarray) -> dict[str, np.ndarray]:
    """The 22 conditions for one image, named like benchmark.csv (``LFC/0.3``, ``HFC/0.99``)."""
    out = {}
    for lowpass, tag in ((True, "LFC"), (False, "HFC")):
        for c in STUDY_CUTOFFS:
            out[f"{tag}/{round(float(c), 2):g}"] = bandpass_filter(x, c, lowpass)
    return out

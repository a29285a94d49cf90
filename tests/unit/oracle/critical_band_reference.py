"""Oracle: the study's critical-band stimulus for ONE image, literally (METHODS.md section 3,
``eval_criticalband.py`` with pyrtools' LaplacianPyramid), in NumPy float64 with
scipy.ndimage. Independent of repro.probes.noise: grayscale via PIL itself, the pyramid built
and reconstructed level by level as pyrtools does, the out-of-range rule as a per-pixel loop.

The noise is an input (a unit-normal white field and, for redraws, a function giving the t-th
redraw field), so the batched torch version can be compared given the same noise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PIL import Image
from scipy import ndimage

CONTRAST = 0.2
IMAGENET_MEAN = 0.449
EPSILON = 0.1
N_FREQS = 7
BINOM5 = np.sqrt(2) * np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16  # pyrtools named_filter("binom5")


def grayscale(rgb_chw: np.ndarray) -> np.ndarray:
    """uint8 (3, H, W) -> uint8 (H, W) via PIL ``convert("L")``."""
    return np.asarray(
        Image.fromarray(np.ascontiguousarray(rgb_chw.transpose(1, 2, 0))).convert("L"),
        dtype=np.uint8,
    )


def contrast_reduce(gray: np.ndarray) -> np.ndarray:
    image = gray / 255.0
    return (image - image.mean()) * CONTRAST + IMAGENET_MEAN


def _corr_dn(image: np.ndarray) -> np.ndarray:
    """pyrtools corrDn(binom5, 'reflect1', step 2): along columns (width) first, then rows."""
    tmp = ndimage.correlate1d(image, BINOM5, axis=1, mode="mirror")[:, ::2]
    return ndimage.correlate1d(tmp, BINOM5, axis=0, mode="mirror")[::2, :]


def _up_conv(image: np.ndarray, out_shape: tuple[int, int]) -> np.ndarray:
    """pyrtools upConv(binom5, 'reflect1', step 2): along rows first, then columns."""
    tmp = np.zeros((out_shape[0], image.shape[1]))
    tmp[::2, :] = image
    tmp = ndimage.convolve1d(tmp, BINOM5, axis=0, mode="mirror")
    out = np.zeros(out_shape)
    out[:, ::2] = tmp
    return ndimage.convolve1d(out, BINOM5, axis=1, mode="mirror")


def _max_pyr_height(shape: tuple[int, int], filt_size: int = 5) -> int:
    if min(shape) < filt_size:
        return 0
    return 1 + _max_pyr_height((shape[0] // 2, shape[1] // 2), filt_size)


class LaplacianPyramid:
    """pyrtools LaplacianPyramid(image) with defaults: binom5, reflect1, height 'auto'."""

    def __init__(self, image: np.ndarray):
        self.num_scales = _max_pyr_height(image.shape) + 1
        self.coeffs: list[np.ndarray] = []
        im = image.astype(np.float64)
        for _ in range(self.num_scales - 1):
            im_next = _corr_dn(im)
            self.coeffs.append(im - _up_conv(im_next, im.shape))
            im = im_next
        self.coeffs.append(im)

    def recon_pyr(self, levels: int) -> np.ndarray:
        recon = np.zeros_like(self.coeffs[-1])
        for lev in reversed(range(self.num_scales)):
            if lev < self.num_scales - 1:  # pyrtools also "expands" the all-zero start: a no-op
                recon = _up_conv(recon, self.coeffs[lev].shape)
            if lev == levels:
                recon = recon + self.coeffs[lev]
        return recon


def rmspower(im: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(im))))


def band_noise(noise: np.ndarray, freq: int) -> np.ndarray:
    """Band ``freq`` of ``noise`` (already times SD), rescaled to the finest band's RMS."""
    pyr = LaplacianPyramid(noise)
    assert pyr.num_scales == N_FREQS, f"expected a {N_FREQS}-level pyramid, got {pyr.num_scales}"
    recon = pyr.recon_pyr(levels=N_FREQS - (freq + 1))
    first_recon = pyr.recon_pyr(levels=0)
    return recon * rmspower(first_recon) / rmspower(recon)


def solomon_filter(
    image: np.ndarray,
    noise_sd: float,
    freq: int,
    white: np.ndarray | None,
    redraw: Callable[[int], np.ndarray] | None = None,
) -> np.ndarray:
    """Contrast-reduced image (H, W) + band noise with the out-of-range rule -> float32 (H, W).

    ``white`` is the unit-normal field the study draws as ``np.random.randn``; ``redraw(t)``
    returns the t-th redraw field (pixel (i, j) uses its own t-th value).
    """
    image = image.copy()
    if noise_sd == 0:
        return image.astype(np.float32)
    sf_noise = band_noise(white * noise_sd, freq)
    noisyim = image + sf_noise
    if noisyim.min() < 0 or noisyim.max() > 1:
        for i, j in zip(*np.nonzero((noisyim < 0) | (noisyim > 1)), strict=True):
            if noisyim[i, j] < 0:
                newp = EPSILON - sf_noise[i, j]
                other_oob = newp > 1
            else:
                newp = 1 - EPSILON - sf_noise[i, j]
                other_oob = newp < 0
            if other_oob:
                newn = sf_noise[i, j]
                t = 0
                while newn + image[i, j] < 0 or newn + image[i, j] > 1:
                    newn = redraw(t)[i, j] * noise_sd
                    t += 1
                sf_noise[i, j] = newn
            else:
                image[i, j] = newp
        noisyim = image + sf_noise
        assert noisyim.max() <= 1 and noisyim.min() >= 0
    return noisyim.astype(np.float32)


def stimulus(rgb_chw: np.ndarray, noise_sd: float, freq: int, white, redraw=None) -> np.ndarray:
    """uint8 RGB crop (3, H, W) -> float32 (3, H, W) model input for one condition."""
    x = solomon_filter(contrast_reduce(grayscale(rgb_chw)), noise_sd, freq, white, redraw)
    return np.stack([x, x, x], axis=0)

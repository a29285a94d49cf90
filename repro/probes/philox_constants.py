"""Probe stage, random fields: the constants of the Philox4x32-10 + Box-Muller generator.

In one place for its two implementations (the torch reference ``repro.probes.philox`` and the numba
CPU kernel ``repro.probes.philox_cpu``), which must use exactly the same numbers to agree bitwise.
The meaning of each is in ``repro.probes.philox``'s docstring.
"""

from __future__ import annotations

import math

import numpy as np

MASK32 = 0xFFFFFFFF
#: Philox4x32 round multipliers and key increments (Random123 ``philox.h``)
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
ROUNDS = 10

#: counter word 1 of the white field; redraw round t uses WHITE_STREAM + 1 + t
WHITE_STREAM = 0
VALUES_PER_BLOCK = 4


def _f32(value: float) -> float:
    """``value`` rounded to the nearest float32.

    Constants of the float32 transform are exact float32 numbers, so every implementation uses
    the same ones."""
    return float(np.float32(value))


LN2 = _f32(math.log(2.0))
#: floor(sqrt(2) * 2**32): mantissas above it are halved, so m lies in [sqrt(1/2), sqrt(2)]
SQRT2_FIXED = 6074000999
#: pi / 2**31 (float32): one unit of the within-quadrant angle (2**30 units = pi/2)
ANGLE_UNIT = _f32(math.pi / 2.0**31)
#: 1/(2k+1) for the atanh series, highest first (s**10 ... s**2 terms)
ATANH = tuple(_f32(1.0 / k) for k in (11, 9, 7, 5, 3))
#: (-1)**k / (2k+1)! (sine, phi**11 .. phi**3) and (-1)**k / (2k)! (cosine, phi**12 .. phi**2)
SIN = tuple(_f32((-1.0) ** k / math.factorial(2 * k + 1)) for k in range(5, 0, -1))
COS = tuple(_f32((-1.0) ** k / math.factorial(2 * k)) for k in range(6, 0, -1))
#: sqrt: exponents e of the powers 4**e that scale small (up) and large (down) arguments into
#: [0.5, 2), the start ``0.485 (1 + y)`` (relative error <= 3%) and Newton's steps
SQRT_UP = (16, 8, 4, 2, 1)
SQRT_DOWN = (4, 2, 1)
SQRT_START = _f32(0.485)
NEWTON_STEPS = 3

"""Device parity of the counter-based noise (marker ``gpu``, ``nox -s gpu``): the Philox fields
drawn on a CUDA device are BITWISE the CPU's (the torch operations and the compiled CPU kernel), and
the critical-band stimuli built from them agree within the stimulus tolerance of
tests/gpu/test_device_parity.py (the pyramid's float32 rounding differs between devices; the
noise does not).

The device under test is ``REPRO_PARITY_DEVICE`` (default ``cuda``); without it available the
tests skip. ``REPRO_PARITY_DEVICE=cpu`` runs the same comparisons CPU-vs-CPU (the torch
operations against the compiled CPU kernel), which checks the tests themselves without a GPU.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from repro.probes import philox as px

DEVICE = os.environ.get("REPRO_PARITY_DEVICE", "cuda")
STIMULUS_ATOL = 1e-5  # as tests/gpu/test_device_parity.py

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        DEVICE.startswith("cuda") and not torch.cuda.is_available(),
        reason=f"needs a CUDA device (REPRO_PARITY_DEVICE={DEVICE})",
    ),
]


def _bits(x: torch.Tensor) -> torch.Tensor:
    return x.cpu().contiguous().view(torch.int32)


def test_philox_words_match_on_the_device():
    rng = np.random.default_rng(0)
    ctr = torch.from_numpy(rng.integers(0, 1 << 32, (100_000, 4), dtype=np.int64))
    key = torch.from_numpy(rng.integers(0, 1 << 32, (100_000, 2), dtype=np.int64))
    ctr[:2] = torch.tensor([[0, 0, 0, 0], [0xFFFFFFFF] * 4])
    assert torch.equal(
        px.philox4x32_10(ctr.to(DEVICE), key.to(DEVICE)).cpu(), px.philox4x32_10(ctr, key)
    )


def test_transform_is_bitwise_on_the_device_for_every_branch():
    from tests.unit.test_philox import _words_under_test

    x = _words_under_test(1_000_000)
    dev = x.to(DEVICE)
    assert torch.equal(_bits(px.neg2log_unit(dev)), _bits(px.neg2log_unit(x)))
    assert torch.equal(
        _bits(px.sqrt_basic(px.neg2log_unit(dev))), _bits(px.sqrt_basic(px.neg2log_unit(x)))
    )
    for a, b in zip(px.cos_sin_turn(dev), px.cos_sin_turn(x), strict=True):
        assert torch.equal(_bits(a), _bits(b))


@pytest.mark.parametrize("stream", [0, 1, 5])
def test_fields_are_bitwise_the_cpus(stream):
    ids = [
        px.field_id(f"ILSVRC2012_val_{i:08d}.JPEG", c)
        for i in range(1, 9)
        for c in ("f=0/sd=0.02", "f=6/sd=0.16")
    ]
    on_device = px.normal_fields(3, ids, (224, 224), stream=stream, device=DEVICE, backend="torch")
    assert on_device.device.type == torch.device(DEVICE).type
    cpu_torch = px.normal_fields(3, ids[:2], (224, 224), stream=stream, backend="torch")
    assert torch.equal(_bits(on_device[:2]), _bits(cpu_torch))
    cpu = px.normal_fields(
        3, ids, (224, 224), stream=stream
    )  # the compiled kernel where numba imports
    assert torch.equal(_bits(on_device), _bits(cpu))


def test_critical_band_stimuli_from_philox_noise_match_cpu(torch_threads):
    from repro.probes import critical_band
    from tests.gpu.test_device_parity import _crops

    images, names = _crops(n=3)
    x = torch.from_numpy(images)
    cpu = dict(critical_band.stimuli(x, names, seed=0, device=torch.device("cpu"), noise="philox"))
    dev = dict(critical_band.stimuli(x, names, seed=0, device=torch.device(DEVICE), noise="philox"))
    assert cpu.keys() == dev.keys() and len(cpu) == 29
    for cond, ref in cpu.items():
        diff = (dev[cond].cpu() - ref).abs().max().item()
        assert diff < STIMULUS_ATOL, f"{cond}: max |device - cpu| = {diff:.2e}"

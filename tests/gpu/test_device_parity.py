"""Device parity (marker ``gpu``, ``nox -s gpu``): the probes' stimuli and the benchmarks'
outputs on a CUDA device equal those on the CPU, so a GPU sweep measures the same thing as
the CPU tests prove.

The device under test is ``REPRO_PARITY_DEVICE`` (default ``cuda``); without it available the
tests skip. ``REPRO_PARITY_DEVICE=cpu`` runs the same comparisons CPU-vs-CPU, which checks the
tests themselves on a machine without a GPU.

Tolerances (named, with their reason):
- STIMULUS_ATOL = 1e-5: the oracle tolerance of tests/unit/oracle (float32 FFT / pyramid rounding
  differs between cuFFT and pocketfft, and between CUDA and CPU reductions);
- LOGIT_RTOL/ATOL = 1e-3/1e-4: timm's golden-logit tolerance for GPU vs CPU logits (TF32
  is switched off here, so the difference is float32 summation order only).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from repro.datasets.base import ArraySource
from repro.measurements.loop import run

DEVICE = os.environ.get("REPRO_PARITY_DEVICE", "cuda")
STIMULUS_ATOL = 1e-5
LOGIT_RTOL, LOGIT_ATOL = 1e-3, 1e-4

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        DEVICE.startswith("cuda") and not torch.cuda.is_available(),
        reason=f"needs a CUDA device (REPRO_PARITY_DEVICE={DEVICE})",
    ),
]


@pytest.fixture(autouse=True)
def _no_tf32():
    old = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def _crops(n: int = 6, size: int = 224) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(0)
    coarse = torch.from_numpy(rng.uniform(0, 255, (n, 3, 8, 8)))
    smooth = torch.nn.functional.interpolate(
        coarse, size=(size, size), mode="bilinear", align_corners=False
    )
    images = np.clip(smooth.numpy() + rng.normal(0, 20, (n, 3, size, size)), 0, 255).astype(
        np.uint8
    )
    return images, [f"ILSVRC2012_val_{i + 1:08d}.JPEG" for i in range(n)]


def _model(device: str):
    from repro.zoo import load_model

    return load_model("tiny_random_a", device=device)


def test_spectral_stimuli_match_cpu(torch_threads):
    from repro.probes import spectral

    images, _ = _crops()
    x = torch.from_numpy(images).float() / 255
    cpu = dict(spectral.filtered(x))
    dev = dict(spectral.filtered(x.to(DEVICE)))
    assert cpu.keys() == dev.keys() and len(cpu) == 22
    for cond, ref in cpu.items():
        diff = (dev[cond].cpu() - ref).abs().max().item()
        assert diff < STIMULUS_ATOL, f"{cond}: max |cuda - cpu| = {diff:.2e}"


def test_critical_band_stimuli_match_cpu(torch_threads):
    from repro.probes import critical_band

    images, names = _crops(n=3)
    x = torch.from_numpy(images)
    cpu = dict(critical_band.stimuli(x, names, seed=0, device=torch.device("cpu")))
    dev = dict(critical_band.stimuli(x, names, seed=0, device=torch.device(DEVICE)))
    assert cpu.keys() == dev.keys() and len(cpu) == 29
    for cond, ref in cpu.items():
        diff = (dev[cond].cpu() - ref).abs().max().item()
        assert diff < STIMULUS_ATOL, f"{cond}: max |cuda - cpu| = {diff:.2e}"


def test_classify_predictions_match_cpu(torch_threads):

    images, names = _crops()
    source = ArraySource("parity", images, np.arange(len(names)), names)
    cpu = run("imagenet", _model("cpu"), source, device="cpu", batch_size=4)
    dev = run("imagenet", _model(DEVICE), source, device=DEVICE, batch_size=4)
    assert [r["predicted_class"] for r in dev.records] == [
        r["predicted_class"] for r in cpu.records
    ]
    np.testing.assert_allclose(
        [r["predicted_probability"] for r in dev.records],
        [r["predicted_probability"] for r in cpu.records],
        rtol=LOGIT_RTOL,
        atol=LOGIT_ATOL,
    )
    assert [(c.condition, c.k, c.n) for c in dev.conditions] == [
        (c.condition, c.k, c.n) for c in cpu.conditions
    ]


def test_pgd_adversarials_match_cpu(torch_threads):
    from repro.benchmarks import pgd

    images, names = _crops(n=4, size=64)
    x0 = torch.from_numpy(images).float() / 255
    model_cpu, model_dev = _model("cpu"), _model(DEVICE)
    labels = model_cpu(x0).argmax(1)  # clean-correct by construction, so the attack has work to do
    noise = pgd.random_start_noise(names, x0.shape[1:], seed=0, eps=4 / 255)
    cpu = pgd.attack(model_cpu, x0, labels, noise, pgd.Budget(4 / 255, 5))
    dev = pgd.attack(
        model_dev, x0.to(DEVICE), labels.to(DEVICE), noise.to(DEVICE), pgd.Budget(4 / 255, 5)
    )
    # sign-gradient steps amplify tiny gradient differences only where a gradient is ~0;
    # the final adversarials must agree to within one step on every pixel, and the outcome per image
    assert (dev.x_adv.cpu() - cpu.x_adv).abs().max().item() <= pgd.STEP_SIZE + 1e-6
    assert dev.success.cpu().tolist() == cpu.success.tolist()

"""PGD oracle: foolbox 3.3.4 ``LinfPGD`` (what the study ran) and our ``repro.benchmarks.pgd``
agree sample for sample on the same models (a small CNN, a ResNet-18) from the same starting
points.

Exact equivalence: foolbox's ``LinfBaseGradientDescent.run`` starts from
``clip(get_random_start(x0, eps), *bounds)`` with ``get_random_start = x0 + uniform(-eps, eps)``.
Subclassing ``LinfPGD`` and overriding ``get_random_start`` to return ``x0 + noise`` (our
per-image noise) changes nothing else in foolbox's loop (CE-sum gradient, sign step,
``x0 + clip(x - x0, -eps, eps)``, clip to bounds) nor its success judgement
(``clip_perturbation`` then argmax != label). So both must produce bitwise identical
adversarials and identical success flags.

Both run single-threaded here: bitwise identity needs identical kernels, and multi-threaded
CPU reductions (like cuDNN on a GPU) may order floating-point sums differently from call to
call; a sign-gradient attack then diverges on the odd borderline image. (Observed once at
2 torch threads on a heavily loaded machine: 254/256 identical outcomes; not reproducible.)

Sizes are kept small for the default run (96 images on a 32-px CNN, 4 on a torchvision
ResNet-18 with ImageNet normalization inside); ``REPRO_PGD_ORACLE_N=256`` runs 256 images
per case (the agreement is printed; run with ``-rP`` to see it).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytestmark = pytest.mark.unit

torch = pytest.importorskip("torch")
fb = pytest.importorskip("foolbox")
ep = pytest.importorskip("eagerpy")

from repro.benchmarks import pgd  # noqa: E402
from repro.datasets.base import ArraySource  # noqa: E402
from repro.measurements.loop import run  # noqa: E402

from .test_pgd import cnn_source, small_cnn  # noqa: E402


class InjectedStartLinfPGD(fb.attacks.LinfPGD):
    """foolbox LinfPGD whose random start is the given noise instead of its own draw."""

    def __init__(self, noise: torch.Tensor, **kwargs):
        super().__init__(**kwargs)
        self.noise = noise

    def get_random_start(self, x0, epsilon):
        return x0 + ep.astensor(self.noise)


class Normalized(torch.nn.Module):
    """ImageNet mean/std normalization inside the model, as the zoo wraps every model."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))

    def forward(self, x):
        return self.model((x - self.mean) / self.std)


def resnet18_case(n: int):
    """A random-weight torchvision ResNet-18 (BatchNorm, residuals, 1000 logits) at 32 px."""
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = Normalized(torchvision.models.resnet18(num_classes=1000)).eval()
    images = np.random.default_rng(0).integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
    with torch.no_grad():
        labels = model(torch.from_numpy(images).float() / 255).argmax(1).numpy()
    labels[::4] = (labels[::4] + 1) % 1000  # some clean errors
    return model, ArraySource("r18-gen", images, labels, [f"r{i:04d}.png" for i in range(n)])


SCALE_N = int(os.environ.get("REPRO_PGD_ORACLE_N", "0"))
CASES = {
    "cnn-eps0.5": ("cnn", 0.5 / 255, SCALE_N or 96),
    "cnn-eps0.25": ("cnn", 0.25 / 255, SCALE_N or 96),
    "resnet18-eps0.5": ("resnet18", 0.5 / 255, SCALE_N or 4),
}


@pytest.fixture
def single_thread(torch_threads):
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.mark.parametrize("case", list(CASES))
def test_foolbox_linf_pgd_agrees_sample_for_sample(case, single_thread):
    kind, eps, N = CASES[case]
    if kind == "cnn":
        model = small_cnn(seed=0)
        source = cnn_source(model, N, seed=11)
    else:
        model, source = resnet18_case(N)
    x0 = torch.from_numpy(source.images).float() / 255
    labels = torch.from_numpy(source.labels)
    noise = pgd.random_start_noise(source.names, x0.shape[1:], seed=0, eps=eps)

    for p in model.parameters():
        p.requires_grad_(False)
    ours = pgd.attack(model, x0, labels, noise, pgd.Budget(eps, pgd.STEPS, pgd.STEP_SIZE))
    fmodel = fb.PyTorchModel(model, bounds=(0, 1), device="cpu")
    attack = InjectedStartLinfPGD(noise, steps=40, abs_stepsize=2 / 255)  # the study's attack
    _, fb_xpc, fb_success = attack(fmodel, x0, labels, epsilons=eps)

    agree = int((fb_success == ours.success).sum())
    max_diff = float((fb_xpc - ours.x_adv).abs().max())
    print(
        f"{kind} eps={eps * 255:g}/255: {agree}/{N} identical outcomes, "
        f"{int(ours.success.sum())} successes, "
        f"max |x_adv(foolbox) - x_adv(ours)| = {max_diff:g}"
    )
    assert agree == N
    assert max_diff == 0.0
    # outcomes are mixed (clean errors, fooled, robust), so agreement is not trivial
    clean_ok = model(x0).argmax(1) == labels
    if N >= 16:
        assert 0 < int((clean_ok & ours.success).sum()) < int(clean_ok.sum())
    # within eps up to one float32 ulp at 1.0 (x0 + delta is rounded; foolbox does the same)
    assert float((ours.x_adv - x0).abs().max()) <= eps + 2.0**-23

    # run() (per-image seeding, batching, records) gives the same outcomes as the oracle
    res = run("pgd_low", model, source, batch_size=max(N // 2, 1), eps=eps, seed=0)
    assert [r["success"] for r in res.records] == fb_success.tolist()
    assert res.conditions[1].k == N - int(fb_success.sum())

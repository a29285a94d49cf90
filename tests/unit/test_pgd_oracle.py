"""PGD oracle: foolbox 3.3.4 ``LinfPGD`` (what the study ran) and our ``repro.benchmarks.pgd``
agree sample for sample on the same small CNN from the same starting points.

Exact equivalence: foolbox's ``LinfBaseGradientDescent.run`` starts from
``clip(get_random_start(x0, eps), *bounds)`` with ``get_random_start = x0 + uniform(-eps, eps)``.
Subclassing ``LinfPGD`` and overriding ``get_random_start`` to return ``x0 + noise`` (our
per-image noise) changes nothing else in foolbox's loop (CE-sum gradient, sign step,
``x0 + clip(x - x0, -eps, eps)``, clip to bounds) nor its success judgement
(``clip_perturbation`` then argmax != label). So both must produce bitwise identical
adversarials and identical success flags.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.unit

torch = pytest.importorskip("torch")
fb = pytest.importorskip("foolbox")
ep = pytest.importorskip("eagerpy")

from repro.benchmarks import pgd  # noqa: E402

from .test_pgd import cnn_source, small_cnn  # noqa: E402


class InjectedStartLinfPGD(fb.attacks.LinfPGD):
    """foolbox LinfPGD whose random start is the given noise instead of its own draw."""

    def __init__(self, noise: torch.Tensor, **kwargs):
        super().__init__(**kwargs)
        self.noise = noise

    def get_random_start(self, x0, epsilon):
        return x0 + ep.astensor(self.noise)


N = 96


@pytest.mark.parametrize("eps", [0.5 / 255, 0.25 / 255], ids=["eps0.5", "eps0.25"])
def test_foolbox_linf_pgd_agrees_sample_for_sample(eps, torch_threads):
    model = small_cnn(seed=0)
    source = cnn_source(model, N, seed=11)
    x0 = torch.from_numpy(source.images).float() / 255
    labels = torch.from_numpy(source.labels)
    noise = pgd.random_start_noise(source.names, x0.shape[1:], seed=0, eps=eps)

    for p in model.parameters():
        p.requires_grad_(False)
    ours = pgd.attack(model, x0, labels, noise, eps=eps, steps=pgd.STEPS, step_size=pgd.STEP_SIZE)
    fmodel = fb.PyTorchModel(model, bounds=(0, 1), device="cpu")
    attack = InjectedStartLinfPGD(noise, steps=40, abs_stepsize=2 / 255)  # the study's attack
    _, fb_xpc, fb_success = attack(fmodel, x0, labels, epsilons=eps)

    agree = int((fb_success == ours.success).sum())
    max_diff = float((fb_xpc - ours.x_adv).abs().max())
    print(f"eps={eps * 255:g}/255: {agree}/{N} identical outcomes, {int(ours.success.sum())} successes, "
          f"max |x_adv(foolbox) - x_adv(ours)| = {max_diff:g}")
    assert agree == N
    assert max_diff == 0.0
    # outcomes are mixed (clean errors, fooled, robust), so agreement is not trivial
    clean_ok = model(x0).argmax(1) == labels
    assert 0 < int((clean_ok & ours.success).sum()) < int(clean_ok.sum())
    # within eps up to one float32 ulp at 1.0 (x0 + delta is rounded; foolbox does the same)
    assert float((ours.x_adv - x0).abs().max()) <= eps + 2.0**-23

    # run() (per-image seeding, batching, records) gives the same outcomes as the oracle
    res = pgd.run(model, source, batch_size=48, eps=eps, seed=0)
    assert [r["success"] for r in res.records] == fb_success.tolist()
    assert res.conditions[1].k == N - int(fb_success.sum())

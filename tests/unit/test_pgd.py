"""PGD benchmark: analytic robust accuracy of a linear classifier, eps = 0 equals clean
accuracy, monotonicity in eps, batch-size independence, and the Q2 (published) denominator."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.unit

torch = pytest.importorskip("torch")
nn = torch.nn

from repro.base.errors import ConfigError, DataError  # noqa: E402
from repro.benchmarks import pgd  # noqa: E402
from repro.datasets.base import ArraySource  # noqa: E402
from repro.measurements.loop import run  # noqa: E402
from repro.scoring.benchmarks import published_denominator, robust_count  # noqa: E402


def small_cnn(seed: int = 0, n_classes: int = 10) -> nn.Module:
    """A 32-px CNN with fixed random weights (eval mode), cheap enough for 40-step PGD.

    A random CNN maps uniform-noise images to nearly the same class; the BatchNorm (running
    statistics set from 256 calibration images) whitens the features so that predictions
    vary across images and margins are small enough for eps of a few /255 to matter."""
    torch.manual_seed(seed)
    body = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(4),
        nn.Flatten(),
    )
    norm = nn.BatchNorm1d(256, affine=False)
    calib = torch.from_numpy(
        np.random.default_rng(seed + 1000).integers(0, 256, (256, 3, 32, 32), dtype=np.uint8)
    )
    with torch.no_grad():
        feats = body(calib.float() / 255)
        norm.running_mean.copy_(feats.mean(0))
        norm.running_var.copy_(feats.var(0))
    return nn.Sequential(body, norm, nn.Linear(256, n_classes)).eval()


def cnn_source(model: nn.Module, n: int, seed: int = 0, flip: float = 0.25) -> ArraySource:
    """Random 32-px images labelled with the model's own clean prediction, except a fraction
    ``flip`` relabelled at random (so there are clean errors too)."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
    with torch.no_grad():
        pred = model(torch.from_numpy(images).float() / 255).argmax(1).numpy()
    labels = pred.copy()
    relabel = rng.random(n) < flip
    labels[relabel] = rng.integers(0, 10, n)[relabel]
    return ArraySource("cnn-gen", images, labels, [f"img{i:04d}.png" for i in range(n)])


class BinaryLinear(nn.Module):
    """Logits (0, w.x + b): class 1 iff z = w.x + b > 0."""

    def __init__(self, w: np.ndarray, b: float):
        super().__init__()
        self.lin = nn.Linear(w.size, 1)
        with torch.no_grad():
            self.lin.weight.copy_(torch.from_numpy(w.reshape(1, -1)).float())
            self.lin.bias.fill_(b)

    def forward(self, x):
        z = self.lin(x.flatten(1))
        return torch.cat([torch.zeros_like(z), z], dim=1)


EPS_GRID = [0.0, 0.5 / 255, 1 / 255, 2 / 255, 4 / 255, 8 / 255]


def test_linear_classifier_robust_accuracy_equals_closed_form(torch_threads):
    """For z = w.x + b the smallest L-inf perturbation that flips the decision is
    |z| / ||w||_1 (reached at the vertex x - eps * sign(w) * sign(z), as long as the
    [0, 1] box does not bind). So at eps the robust count is exactly the number of correctly
    classified points with |z| / ||w||_1 > eps. Pixels are kept in [12, 243] / 255 so the
    box never binds for eps <= 8/255; points with |z| within 1e-3 of eps * ||w||_1 are
    excluded (float32 rounding could decide those either way)."""
    rng = np.random.default_rng(1)
    shape = (3, 8, 8)
    w = rng.normal(0, 0.5, size=int(np.prod(shape)))
    b = -float(w.sum()) * 0.5
    model = BinaryLinear(w, b)
    w32 = model.lin.weight.detach().double().numpy().ravel()
    b32 = float(model.lin.bias.detach().double())
    images = rng.integers(12, 244, (400, *shape), dtype=np.uint8)
    x = images.reshape(len(images), -1).astype(np.float64) / 255
    z = x @ w32 + b32
    w1 = np.abs(w32).sum()
    keep = np.ones(len(images), bool)
    for eps in EPS_GRID:
        keep &= np.abs(np.abs(z) - eps * w1) > 1e-3
    images, z = images[keep], z[keep]
    labels = np.where(rng.random(len(z)) < 0.9, (z > 0).astype(np.int64), (z <= 0).astype(np.int64))
    assert (
        len(z) >= 300 and np.abs(z).max() < 12
    )  # keeps softmax gradients away from float32 saturation
    source = ArraySource("linear", images, labels, [f"p{i}" for i in range(len(z))])
    correct = (z > 0) == (labels == 1)
    analytic = {eps: int((correct & (np.abs(z) / w1 > eps)).sum()) for eps in EPS_GRID}
    # the grid must actually separate: robust counts strictly decrease over it
    assert all(analytic[a] > analytic[c] for a, c in zip(EPS_GRID, EPS_GRID[1:], strict=False))
    for eps in EPS_GRID:
        res = run("pgd_low", model, source, batch_size=128, eps=eps, steps=10)
        robust = next(c for c in res.conditions if c.condition == "robust")
        assert (robust.k, robust.n) == (analytic[eps], len(z)), f"eps={eps * 255}/255"
    # and the default study settings (40 steps of 2/255) at the study's eps
    res = run("pgd_low", model, source, batch_size=64)
    assert res.conditions[1].k == analytic[0.5 / 255]


def test_eps_zero_is_clean_accuracy_and_accuracy_non_increasing(torch_threads):
    model = small_cnn()
    source = cnn_source(model, 48)
    with torch.no_grad():
        pred = model(torch.from_numpy(source.images).float() / 255).argmax(1).numpy()
    clean_k = int((pred == source.labels).sum())
    assert 0 < clean_k < len(source)
    robust = []
    for eps in [0.0, 0.1 / 255, 0.25 / 255, 0.5 / 255, 1 / 255, 2 / 255]:
        res = run("pgd_low", model, source, batch_size=32, eps=eps, steps=20)
        assert res.conditions[0].condition == "clean" and res.conditions[0].k == clean_k
        robust.append(res.conditions[1].k)
        if eps == 0:
            assert res.conditions[1].k == clean_k
            assert [r["adversarial_class"] for r in res.records] == pred.tolist()
    assert all(a >= b for a, b in zip(robust, robust[1:], strict=False)), robust
    assert robust[0] > robust[3] > robust[-1], (
        robust
    )  # the attack does something, also at the study's eps


def test_results_do_not_depend_on_batch_size_or_order(torch_threads):
    model = small_cnn(seed=3)
    source = cnn_source(model, 40, seed=5)
    kw = dict(eps=0.5 / 255, steps=10)
    a = run("pgd_low", model, source, batch_size=40, **kw)
    b = run("pgd_low", model, source, batch_size=7, **kw)
    assert a.records == b.records
    assert a.conditions[:2] == b.conditions[:2]
    assert (
        0 < a.conditions[1].k < a.conditions[0].k
    )  # mixed outcomes, so the comparison means something
    # reversed order: every image gets the same start, so the same outcome
    rev = ArraySource(
        "rev", source.images[::-1].copy(), source.labels[::-1].copy(), source.names[::-1]
    )
    c = run("pgd_low", model, rev, batch_size=16, **kw)
    assert {r["file_name"]: r for r in c.records} == {r["file_name"]: r for r in a.records}
    # a different seed gives different starts (and the result records its seed)
    assert run("pgd_low", model, source, batch_size=40, seed=1, eps=0.0, steps=0).seed == 1
    n1 = pgd.random_start_noise(["x"], (3, 4, 4), seed=0, eps=0.1)
    n2 = pgd.random_start_noise(["x"], (3, 4, 4), seed=1, eps=0.1)
    assert not torch.equal(n1, n2)


def test_random_start_is_uniform_in_the_eps_ball():
    eps = 0.5 / 255
    noise = pgd.random_start_noise([f"n{i}" for i in range(64)], (3, 16, 16), seed=0, eps=eps)
    assert noise.dtype == torch.float32
    assert float(noise.abs().max()) <= eps
    # uniform on [-eps, eps]: mean 0, variance eps^2 / 3 (n = 49,152 draws)
    assert abs(float(noise.double().mean())) < 0.01 * eps
    assert float(noise.double().var()) == pytest.approx(eps**2 / 3, rel=0.02)
    # the noise of an image depends only on (seed, name)
    again = pgd.random_start_noise(["n5", "zz", "n0"], (3, 16, 16), seed=0, eps=eps)
    assert torch.equal(again[0], noise[5]) and torch.equal(again[2], noise[0])


def test_published_denominator_q2():
    # the study's case: 50,000 images at batch 128 -> 391 batches -> 50,048
    assert published_denominator(50_000, 128) == 391 * 128 == 50_048
    assert published_denominator(256, 128) == 256
    all_fooled = robust_count(50_000, 50_000, batch_size=128, denominator="published")
    assert (all_fooled.k, all_fooled.n) == (48, 50_048)  # the published floor 48/50,048 = 0.096%
    assert round(100 * all_fooled.rate, 3) == 0.096
    c = robust_count(36_433, 50_000, batch_size=128, denominator="published")
    assert c.rate == pytest.approx(1 - 36_433 / 50_048, abs=1e-15)
    s = robust_count(36_433, 50_000, batch_size=128, denominator="standard")
    assert (s.k, s.n) == (13_567, 50_000)
    with pytest.raises(ConfigError, match="denominator"):
        robust_count(1, 2, batch_size=1, denominator="paper")


def test_run_reports_both_denominators(torch_threads):
    model = small_cnn(seed=2)
    source = cnn_source(model, 50, seed=2)
    kw = dict(batch_size=16, eps=0.5 / 255, steps=5)
    std = run("pgd_low", model, source, **kw)
    pub = run("pgd_low", model, source, denominator="published", **kw)
    assert std.records == pub.records
    conds = {c.condition: c for c in pub.conditions}
    successes = sum(r["success"] for r in pub.records)
    assert 0 < successes < 50
    assert (conds["robust"].k, conds["robust"].n) == (50 - successes, 50)
    # 50 images at batch 16 = 4 batches -> denominator 64
    assert (conds["robust_published"].k, conds["robust_published"].n) == (64 - successes, 64)
    assert pub.value == pytest.approx(1 - successes / 64)
    assert std.value == pytest.approx(1 - successes / 50)
    assert pub.values["robust"] == std.value and std.values["robust_published"] == pub.value
    # success is judged at the final iterate; clean errors stay errors
    for r in pub.records:
        assert r["success"] == (r["adversarial_class"] != r["label"])
        if r["clean_class"] != r["label"]:
            assert r["success"]


def test_run_leaves_model_state_alone_and_counts_progress(torch_threads):
    model = small_cnn().train()
    flags = [p.requires_grad for p in model.parameters()]
    seen: list[int] = []
    run("pgd_low", model, cnn_source(small_cnn(), 10), batch_size=4, steps=1, progress=seen.append)
    assert seen == [4, 8, 10]
    assert model.training and [p.requires_grad for p in model.parameters()] == flags
    assert all(p.grad is None for p in model.parameters())


def test_bad_input_errors(torch_threads):
    model = small_cnn()
    src = cnn_source(model, 4)
    with pytest.raises(ConfigError, match="denominator.*standard, published"):
        run("pgd_low", model, src, denominator="last_batch")
    with pytest.raises(ConfigError, match="eps"):
        run("pgd_low", model, src, eps=-1.0)
    unlabelled = ArraySource("nolabel", src.images, [1, -1, 2, 3], src.names)
    with pytest.raises(DataError, match="img0001.png.*no label"):
        run("pgd_low", model, unlabelled, steps=1)
    out_of_range = ArraySource("big", src.images, [1, 2, 10, 3], src.names)
    with pytest.raises(DataError, match="label 10 out of range"):
        run("pgd_low", model, out_of_range, steps=1)

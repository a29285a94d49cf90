"""Benchmarks stage (torch): batched L-inf PGD robust accuracy with the study's semantics.

The study (``eval_imagenet_adv.py``) runs foolbox 3 ``LinfPGD(steps=40, abs_stepsize=2/255)``
at eps = 0.5/255 (``PGD-40/low``), batch 128, seed 0. Per image x0 with true label y:

1. random start: x = clip(x0 + u, 0, 1), u uniform in [-eps, eps] per pixel;
2. 40 times: g = d/dx sum CE(model(x), y); x = x + step * sign(g);
   x = x0 + clip(x - x0, -eps, eps); x = clip(x, 0, 1);
3. success is judged at the final iterate only: x' = x0 + clip(x - x0, -eps, eps) (foolbox's
   ``clip_perturbation``) and the attack succeeds when argmax model(x') != y. A clean error
   therefore counts as a success (it stays misclassified), not as a separate category.

This module reproduces exactly that arithmetic, operation for operation (the oracle test
runs foolbox on the same model with the same starting points and gets identical adversarials).
It differs from the study in one deliberate way: the random start is drawn PER IMAGE from a
generator seeded by (seed, image name), so results do not depend on the batch size, on the
order of the images, or on the device the noise would otherwise be drawn on. Results are
bitwise repeatable where the kernels are (CPU, one thread); multi-threaded CPU reductions and
cuDNN may reorder floating-point sums, which can flip a gradient sign and so the outcome of
the odd borderline image.

Denominators (quirk Q2): the study divides the number of successes by
``n_batches * batch_size`` (50,048 for 50,000 images at batch 128) instead of n. Both counts
are kept (conditions ``robust`` and ``robust_published``); ``denominator`` selects which one
gives the headline value.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from repro.base.errors import ConfigError, DataError, ReproError
from repro.base.results import ConditionCount, ProbeResult
from repro.datasets.base import ImageSource

VERSION = "1"
MEASUREMENT = "pgd"

#: eps of the study's ``PGD-40/low`` column
EPS_LOW = 0.5 / 255
STEPS = 40
STEP_SIZE = 2 / 255
DENOMINATORS = ("standard", "published")

#: Columns of a per-image PGD record.
RECORD_COLUMNS: tuple[str, ...] = ("file_name", "label", "clean_class", "adversarial_class", "success")


def published_denominator(n: int, batch_size: int) -> int:
    """Q2: the study's denominator, ``ceil(n / batch_size) * batch_size`` (50,048 for 50,000 at 128)."""
    if n < 0 or batch_size <= 0:
        raise ValueError(f"published_denominator needs n >= 0 and batch_size > 0, got n={n}, batch_size={batch_size}")
    return math.ceil(n / batch_size) * batch_size


def robust_count(successes: int, n: int, *, batch_size: int, denominator: str = "standard") -> ConditionCount:
    """Robust (not fooled) count ``k`` of ``n`` for one denominator rule.

    ``standard``: k = n - successes of n. ``published`` (Q2): k = D - successes of
    D = published_denominator(n, batch_size), i.e. accuracy = 1 - successes / D.
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n], got {successes} of {n}")
    if denominator == "standard":
        return ConditionCount("robust", n - successes, n)
    if denominator == "published":
        d = published_denominator(n, batch_size)
        return ConditionCount("robust_published", d - successes, d)
    raise ConfigError(f"denominator: expected one of {', '.join(DENOMINATORS)}, got {denominator!r}")


def image_seed(seed: int, name: str) -> int:
    """The random-start seed of one image: a hash of (seed, image name), 63 bits."""
    digest = hashlib.sha256(f"{int(seed)}\x00{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def random_start_noise(names: Sequence[str], shape: Sequence[int], *, seed: int, eps: float) -> torch.Tensor:
    """Per-image uniform noise in [-eps, eps], shape (len(names), *shape), float32 on the CPU.

    Drawn as foolbox draws it (``rand * (high - low) + low``) but from one CPU generator per
    image, seeded by ``image_seed(seed, name)``: the noise of an image does not depend on
    its batch, its position or the device."""
    out = torch.empty((len(names), *shape), dtype=torch.float32)
    g = torch.Generator(device="cpu")
    for i, name in enumerate(names):
        g.manual_seed(image_seed(seed, name))
        out[i] = torch.rand(tuple(shape), generator=g, dtype=torch.float32)
    return out * (eps - (-eps)) + (-eps)


class AttackResult(NamedTuple):
    x_adv: torch.Tensor
    adversarial_class: torch.Tensor
    success: torch.Tensor


def attack(
    model: torch.nn.Module,
    x0: torch.Tensor,
    labels: torch.Tensor,
    noise: torch.Tensor,
    *,
    eps: float,
    steps: int = STEPS,
    step_size: float = STEP_SIZE,
) -> AttackResult:
    """L-inf PGD on one batch from the start ``clip(x0 + noise, 0, 1)``.

    Returns the final iterate with its perturbation clipped to eps (foolbox's ``xpc``), its
    argmax class, and ``success`` = argmax != label. The model must already be in eval mode
    (``run`` takes care of it); only the input receives gradients.
    """
    x0 = x0.detach()
    x = x0 + noise.to(device=x0.device, dtype=x0.dtype)
    x = torch.clamp(x, 0.0, 1.0)
    with torch.enable_grad():
        for _ in range(steps):
            x = x.detach().requires_grad_(True)
            loss = F.cross_entropy(model(x), labels, reduction="none").sum()
            (grad,) = torch.autograd.grad(loss, x)
            x = x.detach() + 1.0 * (step_size * grad.sign())
            x = x0 + torch.clamp(x - x0, -eps, eps)
            x = torch.clamp(x, 0.0, 1.0)
    x_adv = x0 + torch.clamp(x.detach() - x0, -eps, eps)
    with torch.no_grad():
        adv_class = model(x_adv).argmax(dim=-1)
    return AttackResult(x_adv, adv_class, adv_class != labels)


class _InputGradOnly:
    """Eval mode and no parameter gradients for the duration; restores both afterwards."""

    def __init__(self, model: torch.nn.Module):
        self.model = model

    def __enter__(self) -> None:
        self.training = self.model.training
        self.flags = [(p, p.requires_grad) for p in self.model.parameters()]
        self.model.eval()
        for p, _ in self.flags:
            p.requires_grad_(False)

    def __exit__(self, *exc: object) -> None:
        for p, flag in self.flags:
            p.requires_grad_(flag)
        self.model.train(self.training)


def run(
    model: torch.nn.Module,
    source: ImageSource,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 128,
    seed: int = 0,
    eps: float = EPS_LOW,
    steps: int = STEPS,
    step_size: float = STEP_SIZE,
    denominator: str = "standard",
    progress: Callable[[int], Any] | None = None,
) -> ProbeResult:
    """Robust accuracy of ``model`` on ``source`` under L-inf PGD (see the module docstring).

    Conditions: ``clean`` (correct on the unperturbed image), ``robust`` (not fooled, of n)
    and ``robust_published`` (Q2: D - successes of D = ceil(n / batch_size) * batch_size).
    ``value`` is the robust accuracy as a fraction in [0, 1] under ``denominator`` ("standard" or
    "published"). Records: one row per image (``RECORD_COLUMNS``). ``batch_size`` changes
    nothing but the published denominator (random starts are seeded per image).
    """
    if denominator not in DENOMINATORS:
        raise ConfigError(f"denominator: expected one of {', '.join(DENOMINATORS)}, got {denominator!r}")
    if batch_size <= 0:
        raise ConfigError(f"batch_size: expected a positive integer, got {batch_size}")
    if not (eps >= 0 and math.isfinite(eps)):
        raise ConfigError(f"eps: expected a finite number >= 0, got {eps}")
    if steps < 0 or not step_size > 0:
        raise ConfigError(f"steps/step_size: expected steps >= 0 and step_size > 0, got {steps}, {step_size}")
    device = torch.device(device)
    records: list[dict[str, Any]] = []
    n = clean_k = successes = 0
    with _InputGradOnly(model):
        for batch in source.batches(batch_size):
            labels_np = np.asarray(batch.labels, dtype=np.int64)
            if (labels_np < 0).any():
                i = int(np.flatnonzero(labels_np < 0)[0])
                raise DataError(f"{source.name}: item {batch.names[i]!r} has no label (label -1); PGD needs the true label")
            x0 = torch.from_numpy(np.ascontiguousarray(batch.images)).to(device).float().div_(255)
            labels = torch.from_numpy(labels_np).to(device)
            with torch.no_grad():
                logits = model(x0)
            if logits.ndim != 2 or logits.shape[0] != len(x0):
                raise ReproError(f"{source.name}: model returned logits of shape {tuple(logits.shape)}, "
                                 f"expected ({len(x0)}, n_classes)")
            if int(labels_np.max()) >= logits.shape[1]:
                raise DataError(f"{source.name}: label {int(labels_np.max())} out of range for {logits.shape[1]} logits")
            clean_class = logits.argmax(dim=-1)
            noise = random_start_noise(batch.names, x0.shape[1:], seed=seed, eps=eps)
            result = attack(model, x0, labels, noise, eps=eps, steps=steps, step_size=step_size)
            clean_np = clean_class.cpu().numpy()
            success_np = result.success.cpu().numpy()
            adv_np = result.adversarial_class.cpu().numpy()
            for name, y, c, a, s in zip(batch.names, labels_np, clean_np, adv_np, success_np, strict=True):
                records.append({"file_name": name, "label": int(y), "clean_class": int(c),
                                "adversarial_class": int(a), "success": bool(s)})
            n += len(x0)
            clean_k += int((clean_np == labels_np).sum())
            successes += int(success_np.sum())
            if progress is not None:
                progress(n)
    standard = robust_count(successes, n, batch_size=batch_size, denominator="standard")
    published = robust_count(successes, n, batch_size=batch_size, denominator="published")
    chosen = standard if denominator == "standard" else published
    values: dict[str, float | None] = {
        "eps": float(eps),
        "steps": float(steps),
        "step_size": float(step_size),
        "batch_size": float(batch_size),
        "clean": clean_k / n if n else None,
        "robust": standard.rate if n else None,
        "robust_published": published.rate if n else None,
    }
    return ProbeResult(
        measurement=MEASUREMENT,
        version=VERSION,
        seed=seed,
        conditions=[ConditionCount("clean", clean_k, n), standard, published],
        value=chosen.rate if n else None,
        values=values,
        records=records,
    )

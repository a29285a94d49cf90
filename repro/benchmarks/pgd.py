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
``n_batches * batch_size`` (50,048 for 50,000 images at batch 128) instead of n. The scorer
(``repro.scoring.benchmarks.score_pgd``) keeps both counts (conditions ``robust`` and
``robust_published``); ``denominator`` selects which one gives the headline value. Here: the
stimuli (``maker``: the clean image, then its adversarial) and the decision rule (``Robust``) that
the probe loop (``repro.measurements.loop``) runs.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from repro.base.errors import ConfigError, DataError, ReproError
from repro.base.results import ConditionCount, Counts
from repro.datasets.base import ImageBatch, ImageSource
from repro.scoring.benchmarks import DENOMINATORS

VERSION = "1"

#: eps of the study's ``PGD-40/low`` column
EPS_LOW = 0.5 / 255
STEPS = 40
STEP_SIZE = 2 / 255

#: Columns of a per-image PGD record.
RECORD_COLUMNS: tuple[str, ...] = (
    "file_name",
    "label",
    "clean_class",
    "adversarial_class",
    "success",
)


def image_seed(seed: int, name: str) -> int:
    """The random-start seed of one image: a hash of (seed, image name), 63 bits."""
    digest = hashlib.sha256(f"{int(seed)}\x00{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def random_start_noise(
    names: Sequence[str], shape: Sequence[int], *, seed: int, eps: float
) -> torch.Tensor:
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


def perturb(
    model: torch.nn.Module,
    x0: torch.Tensor,
    labels: torch.Tensor,
    noise: torch.Tensor,
    *,
    eps: float,
    steps: int = STEPS,
    step_size: float = STEP_SIZE,
) -> torch.Tensor:
    """L-inf PGD on one batch from the start ``clip(x0 + noise, 0, 1)``: the final iterate with
    its perturbation clipped to eps (foolbox's ``xpc``). The model must be in eval mode; only the
    input receives gradients (the probe loop freezes the parameters)."""
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
    return x0 + torch.clamp(x.detach() - x0, -eps, eps)


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
    """``perturb``, and the adversarial's argmax class and ``success`` = argmax != label (what
    the probe loop decides from the adversarial's logits; for the oracle and parity tests)."""
    x_adv = perturb(model, x0, labels, noise, eps=eps, steps=steps, step_size=step_size)
    with torch.no_grad():
        adv_class = model(x_adv).argmax(dim=-1)
    return AttackResult(x_adv, adv_class, adv_class != labels)


def maker(
    *,
    seed: int,
    eps: float = EPS_LOW,
    steps: int = STEPS,
    step_size: float = STEP_SIZE,
    denominator: str = "standard",
    **_: Any,
) -> tuple[str, Callable[..., Iterator[tuple[str, torch.Tensor]]]]:
    """The probe loop's stimuli (``repro.measurements.loop``): each batch as it is (``clean``), then
    its adversarial (``perturb`` from each image's own random start toward its true label).
    ``denominator`` ("standard" or "published", quirk Q2) is the scorer's
    (``repro.scoring.benchmarks.score_pgd``), checked here with the attack's parameters."""
    if denominator not in DENOMINATORS:
        raise ConfigError(
            f"denominator: expected one of {', '.join(DENOMINATORS)}, got {denominator!r}"
        )
    if not (eps >= 0 and math.isfinite(eps)):
        raise ConfigError(f"eps: expected a finite number >= 0, got {eps}")
    if steps < 0 or not step_size > 0:
        raise ConfigError(
            f"steps/step_size: expected steps >= 0 and step_size > 0, got {steps}, {step_size}"
        )

    def make(
        batch: ImageBatch,
        part: str | None,
        *,
        model: torch.nn.Module,
        labels: np.ndarray,
        device: torch.device,
        **_: Any,
    ) -> Iterator[tuple[str, torch.Tensor]]:
        x0 = torch.from_numpy(np.ascontiguousarray(batch.images)).to(device).float().div_(255)
        yield "clean", x0
        noise = random_start_noise(batch.names, x0.shape[1:], seed=seed, eps=eps)
        target = torch.from_numpy(labels).to(device)
        yield (
            "adversarial",
            perturb(model, x0, target, noise, eps=eps, steps=steps, step_size=step_size),
        )

    return VERSION, make


class Robust:
    """PGD's decision rule: the argmax of the clean image and of its adversarial, each right when
    it is the true label (every item needs one), and one record per image (``RECORD_COLUMNS``;
    ``success``: the adversarial is misclassified, a clean error included)."""

    version = ""

    def __init__(
        self, source: ImageSource, model: Any = None, *, conditions: Sequence[str] = (), **_: Any
    ):
        self.source = source
        self.tally = Counts(conditions)
        self.records: list[dict[str, Any]] = []
        self.clean: np.ndarray | None = None

    def labels(self, batch: ImageBatch) -> np.ndarray:
        labels = np.asarray(batch.labels, dtype=np.int64)
        if (labels < 0).any():
            i = int(np.flatnonzero(labels < 0)[0])
            raise DataError(
                f"{self.source.name}: item {batch.names[i]!r} has no label (label -1); PGD needs "
                "the true label"
            )
        return labels

    def add(
        self, condition: str, batch: ImageBatch, labels: np.ndarray, logits: torch.Tensor
    ) -> np.ndarray:
        name = self.source.name
        if condition == "clean":
            if logits.ndim != 2 or logits.shape[0] != len(labels):
                raise ReproError(
                    f"{name}: model returned logits of shape {tuple(logits.shape)}, "
                    f"expected ({len(labels)}, n_classes)"
                )
            if int(labels.max()) >= logits.shape[1]:
                raise DataError(
                    f"{name}: label {int(labels.max())} out of range for {logits.shape[1]} logits"
                )
            self.clean = logits.argmax(dim=-1).cpu().numpy()
            self.tally.add("clean", int((self.clean == labels).sum()), len(labels))
            return self.clean
        adversarial = logits.argmax(dim=-1).cpu().numpy()
        success = adversarial != labels
        self.tally.add("adversarial", int((~success).sum()), len(labels))
        assert self.clean is not None
        for file, y, c, a, s in zip(
            batch.names, labels, self.clean, adversarial, success, strict=True
        ):
            self.records.append(
                {
                    "file_name": file,
                    "label": int(y),
                    "clean_class": int(c),
                    "adversarial_class": int(a),
                    "success": bool(s),
                }
            )
        return adversarial

    def counts(self) -> list[ConditionCount]:
        return self.tally.counts()

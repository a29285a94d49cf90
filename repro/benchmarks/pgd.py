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

Two rules (``RULES``). ``final_point`` is the study's (above: the default, the
``pgd_low`` measurement). ``early_stop`` is a named protocol variant (the ``pgd_low_early_stop``
measurement, ``python -m repro measure --pgd-early-stop``), never the default: per image the attack
stops at the first iterate that is misclassified (``early_stop``), so an image that would be
classified correctly again by step 40 counts as a success where the study's rule counts it as
robust. Iterate k (0: the random start, k < steps) is judged from the logits of the forward pass
that the (k+1)-th step computes anyway; the last iterate is judged at its clipped point, as the
study judges it. Its records say which rule made them (``pgd_rule``) and the iterate each image
stopped at (``first_success_step``); its column is its own (``top1_acc/PGD-40-early-stop/low``),
never the study's.

``trace`` runs the full attack and judges EVERY iterate (the first success, success at the final
point, recovery = success at some iterate but not at the last): both rules from one run, and the
deviation of the variant from the study's rule (``deviation``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from repro.base.errors import ConfigError, DataError, ReproError
from repro.base.results import ConditionCount, Counts
from repro.datasets.base import ImageBatch, ImageSource
from repro.scoring.benchmarks import DENOMINATORS

VERSION = "1"

#: eps of the study's ``PGD-40/low`` column
EPS_LOW = 0.5 / 255
STEPS = 40
STEP_SIZE = 2 / 255


class Budget(NamedTuple):
    """The attack's parameters: the L-inf radius, the number of steps and the step size."""

    eps: float
    steps: int = STEPS
    step_size: float = STEP_SIZE


#: Columns of a per-image PGD record.
RECORD_COLUMNS: tuple[str, ...] = (
    "file_name",
    "label",
    "clean_class",
    "adversarial_class",
    "success",
)
#: the decision rules: the study's (success judged at the final point) and the early-stop variant
FINAL_POINT, EARLY_STOP = "final_point", "early_stop"
RULES: tuple[str, ...] = (FINAL_POINT, EARLY_STOP)
#: the early-stop rule's per-image record adds these: the rule, the iterate judged a success first
#: (0: the random start; None: none within the steps) and the model passes the image went through
EARLY_STOP_COLUMNS: tuple[str, ...] = (
    *RECORD_COLUMNS,
    "pgd_rule",
    "first_success_step",
    "forward",
    "backward",
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
    model: nn.Module,
    x0: Tensor,
    labels: Tensor,
    noise: Tensor,
    budget: Budget,
    seen: list[Tensor] | None = None,
) -> Tensor:
    """L-inf PGD on one batch from the start ``clip(x0 + noise, 0, 1)``.

    Returns the final iterate with its perturbation clipped to eps (foolbox's ``xpc``). The model
    must be in eval mode; only the input receives gradients (the probe loop freezes the parameters).
    """
    x0 = x0.detach()
    x = _start(x0, noise)
    with torch.enable_grad():
        for _ in range(budget.steps):
            x = x.detach().requires_grad_(True)
            logits = model(x)
            if seen is not None:  # the iterate's classes, from the pass the step makes anyway
                seen.append(logits.argmax(dim=-1).detach().cpu())
            loss = F.cross_entropy(logits, labels, reduction="none").sum()
            (grad,) = torch.autograd.grad(loss, x)
            x = _step(x.detach(), grad, x0, budget)
    return _clip(x.detach(), x0, budget.eps)


def _start(x0: Tensor, noise: Tensor) -> Tensor:
    """The random start: ``x0 + noise``, clipped to [0, 1]."""
    return torch.clamp(x0 + noise.to(device=x0.device, dtype=x0.dtype), 0.0, 1.0)


def _step(x: Tensor, grad: Tensor, x0: Tensor, budget: Budget) -> Tensor:
    """One PGD update, foolbox's arithmetic operation for operation.

    A signed gradient step, projected onto the eps ball around ``x0`` and onto [0, 1]."""
    eps = budget.eps
    x = x + 1.0 * (budget.step_size * grad.sign())
    x = x0 + torch.clamp(x - x0, -eps, eps)
    return torch.clamp(x, 0.0, 1.0)


def _clip(x: torch.Tensor, x0: torch.Tensor, eps: float) -> torch.Tensor:
    """The point an iterate is judged at: its perturbation clipped to eps (foolbox's ``xpc``)."""
    return x0 + torch.clamp(x - x0, -eps, eps)


class EarlyStop(NamedTuple):
    """What ``early_stop`` returns, per image: the point to judge, the first success, the passes.

    The point to judge is the clipped iterate it stopped at, else the final one; the first success
    is the iterate first judged misclassified (-1: none before the last, which the caller judges);
    the passes are the forward and backward passes its row went through."""

    x_adv: torch.Tensor
    first_success: torch.Tensor  # int64, -1: not stopped
    forward: torch.Tensor  # int64
    backward: torch.Tensor  # int64


def early_stop(
    model: nn.Module, x0: Tensor, labels: Tensor, noise: Tensor, budget: Budget
) -> EarlyStop:
    """``perturb`` with the early-stop rule: an image stops at its first misclassified iterate.

    Each step's forward pass judges the current iterate of each image still attacked (iterate k
    before step k + 1; 0: the random start); an image whose iterate is misclassified stops there and
    leaves the batch (its point: that iterate, clipped). The iterates are ``perturb``'s, bitwise
    (the same update on each image's own row; eval mode: no row depends on another). The last
    iterate (``steps``) is not judged here: an image not stopped gets ``perturb``'s final point,
    judged by the caller (as the study's rule judges it).

    Passes are counted per image as run: one forward per step it took part in; one backward per
    step whose gradient was computed with its row in the batch, i.e. also at the step it stopped
    at when another image of the batch went on (autograd differentiates the whole batch)."""
    n = len(x0)
    x0 = x0.detach()
    x = _start(x0, noise)
    out = x.clone()
    first = torch.full((n,), -1, dtype=torch.int64)
    forward = torch.zeros(n, dtype=torch.int64)
    backward = torch.zeros(n, dtype=torch.int64)
    active = torch.arange(n, device=x0.device)
    with torch.enable_grad():
        for k in range(budget.steps):
            rows = active.cpu()
            xa = x[active].detach().requires_grad_(True)
            logits = model(xa)
            forward[rows] += 1
            target = labels[active]
            hit = logits.argmax(dim=-1) != target
            if bool(hit.any()):
                done = active[hit]
                first[done.cpu()] = k
                out[done] = _clip(x[done], x0[done], budget.eps)
            keep = ~hit
            if not bool(keep.any()):
                active = active[keep]
                break
            loss = F.cross_entropy(logits[keep], target[keep], reduction="none").sum()
            (grad,) = torch.autograd.grad(loss, xa)
            backward[rows] += 1
            active = active[keep]
            x[active] = _step(x[active], grad[keep], x0[active], budget)
    out[active] = _clip(x[active], x0[active], budget.eps)
    return EarlyStop(out.detach(), first, forward, backward)


class Trace(NamedTuple):
    """Every iterate of the full attack judged, per image, and the final point itself.

    ``classes[:, k]`` is the argmax at iterate k (0: the random start; ``steps``: the final point,
    clipped, as the study judges it) and ``success[:, k]`` whether it is misclassified."""

    x_adv: torch.Tensor
    classes: np.ndarray  # (n, steps + 1) int64
    success: np.ndarray  # (n, steps + 1) bool

    @property
    def first_success(self) -> np.ndarray:
        """The first misclassified iterate of each image, -1 where none is."""
        hit = self.success.any(axis=1)
        return np.where(hit, self.success.argmax(axis=1), -1)

    @property
    def final_success(self) -> np.ndarray:
        """The study's rule: the final point misclassified."""
        return self.success[:, -1]

    @property
    def early_success(self) -> np.ndarray:
        """The early-stop rule: some iterate misclassified."""
        return self.success.any(axis=1)

    @property
    def recovered(self) -> np.ndarray:
        """Misclassified at some iterate, classified correctly again at the final point.

        This is where the two rules differ."""
        return self.early_success & ~self.final_success


def trace(model: nn.Module, x0: Tensor, labels: Tensor, noise: Tensor, budget: Budget) -> Trace:
    """The full attack (``perturb``'s iterates and final point, bitwise) with every iterate judged.

    Iterate k < steps is judged from the forward pass of step k + 1 (the pass the attack makes
    anyway), the final point by one more forward pass. The same passes as the study's rule:
    steps + 1 forward and steps backward per image (the clean pass aside)."""
    classes: list[Tensor] = []
    x_adv = perturb(model, x0, labels, noise, budget, seen=classes)
    with torch.no_grad():
        classes.append(model(x_adv).argmax(dim=-1).cpu())
    cls = torch.stack(classes, dim=1).numpy().astype(np.int64)
    return Trace(x_adv, cls, cls != labels.cpu().numpy()[:, None])


class Deviation(NamedTuple):
    """The early-stop rule against the study's over a set of traced images (``deviation``)."""

    n: int
    final_successes: int  # the study's rule
    early_successes: int  # the early-stop rule
    recovered: int  # early success, final robust: the deviation (early - final)
    first_success: dict[int, int]  # {iterate: images first misclassified there}; -1: never
    forward_full: int  # passes of the study's rule (the clean pass included)
    backward_full: int
    forward_early: int  # passes of the early-stop rule (a stopped image's judgment pass included)
    backward_early: int


def early_stop_passes(first: int, steps: int) -> tuple[int, int]:
    """(forward, backward) passes of one image under the early-stop rule.

    Given its first misclassified iterate (-1: none before the last): the clean pass, one forward
    per judged iterate, the judgment pass of its point; a backward pass per step taken, and one more
    at the step it stopped at (the batch's gradient is computed there for the others: the batched
    worst case). Not stopped: the study's steps + 2 forward and steps backward."""
    if first < 0 or first >= steps:
        return steps + 2, steps
    return first + 3, min(first + 1, steps)


def deviation(tr: Trace) -> Deviation:
    """Both rules compared on the images of ``tr``.

    Their success counts, the recoveries, the first-success distribution and each rule's passes."""
    steps = tr.success.shape[1] - 1
    first = tr.first_success
    values, counts = np.unique(first, return_counts=True)
    passes = [early_stop_passes(int(f) if f < steps else -1, steps) for f in first]
    return Deviation(
        n=len(first),
        final_successes=int(tr.final_success.sum()),
        early_successes=int(tr.early_success.sum()),
        recovered=int(tr.recovered.sum()),
        first_success={int(v): int(c) for v, c in zip(values, counts, strict=True)},
        forward_full=len(first) * (steps + 2),
        backward_full=len(first) * steps,
        forward_early=sum(f for f, _ in passes),
        backward_early=sum(b for _, b in passes),
    )


class Judged(str):
    """The condition name a maker yields, with the early-stop attack's per-image facts attached.

    The facts (the first misclassified iterate, the passes so far) are for ``Robust`` to record;
    compares and hashes as the name."""

    first_success: np.ndarray
    forward: np.ndarray
    backward: np.ndarray

    def __new__(cls, name: str, stop: EarlyStop) -> Judged:
        self = super().__new__(cls, name)
        self.first_success = stop.first_success.numpy()
        self.forward = stop.forward.numpy()
        self.backward = stop.backward.numpy()
        return self


def attack(model: nn.Module, x0: Tensor, labels: Tensor, noise: Tensor, b: Budget) -> AttackResult:
    """``perturb``, with the adversarial's argmax class and ``success`` = argmax != label.

    What the probe loop decides from the adversarial's logits; for the oracle and parity tests."""
    x_adv = perturb(model, x0, labels, noise, b)
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
    rule: str = FINAL_POINT,
    **_: Any,
) -> tuple[str, Callable[..., Iterator[tuple[str, torch.Tensor]]]]:
    """The probe loop's stimuli: each batch as it is, then its adversarial.

    For ``repro.measurements.loop``: each batch as it is (``clean``), then its adversarial
    (``perturb`` from each image's own random start toward its true label; with
    ``rule="early_stop"``, ``early_stop``'s points, the condition a ``Judged`` carrying where each
    image stopped). ``denominator`` ("standard" or "published", quirk Q2) is the scorer's
    (``repro.scoring.benchmarks.score_pgd``), checked here with the attack's parameters."""
    if rule not in RULES:
        raise ConfigError(f"rule: expected one of {', '.join(RULES)}, got {rule!r}")
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
    budget = Budget(eps, steps, step_size)

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
        if rule == EARLY_STOP:
            stop = early_stop(model, x0, target, noise, budget)
            yield Judged("adversarial", stop), stop.x_adv
            return
        yield (
            "adversarial",
            perturb(model, x0, target, noise, budget),
        )

    return VERSION, make


class Robust:
    """PGD's decision rule: the argmax of the clean image and of its adversarial.

    Each is right when it is the true label (every item needs one); one record per image
    (``RECORD_COLUMNS``; ``success``: the adversarial is misclassified, a clean error included)."""

    version = ""

    def __init__(
        self,
        source: ImageSource,
        model: Any = None,
        *,
        conditions: Sequence[str] = (),
        steps: int = STEPS,
        **_: Any,
    ):
        self.source = source
        self.steps = int(steps)
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
        first = getattr(condition, "first_success", None)
        for i, (file, y, c, a, s) in enumerate(
            zip(batch.names, labels, self.clean, adversarial, success, strict=True)
        ):
            record = {
                "file_name": file,
                "label": int(y),
                "clean_class": int(c),
                "adversarial_class": int(a),
                "success": bool(s),
            }
            if first is not None:  # the early-stop rule (a Judged condition): where it stopped
                assert isinstance(condition, Judged)
                stopped = int(first[i])
                record.update(
                    pgd_rule=EARLY_STOP,
                    # the last iterate is judged here, by this pass
                    first_success_step=stopped if stopped >= 0 else (self.steps if s else None),
                    forward=int(condition.forward[i]) + 2,  # + the clean and this pass
                    backward=int(condition.backward[i]),
                )
            self.records.append(record)
        return adversarial

    def counts(self) -> list[ConditionCount]:
        return self.tally.counts()

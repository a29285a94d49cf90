"""Runner, PGD's early-stop rule against the study's (issue 38): on one model and a fixed, seeded
subset of images, the full attack with every iterate judged (``repro.benchmarks.pgd.trace``) and
the early-stop attack (``repro.benchmarks.pgd.early_stop``) in the same run, each timed.

What it gives per model: the images that succeed at some iterate but not at the final one (the
variant's deviation from the study's rule) with a Clopper-Pearson interval, both rules' success
counts, the distribution of the first misclassified iterate, the passes each rule needs (and their
ratio, counted as run and as ``pgd.early_stop_passes`` models them), the time ratio, and whether the
early-stop attack's own outcome equals the trace's early-stop outcome (parity: the same iterates).

Labels: the model's own float32 decision on the clean image (as the throughput harness's PGD stage:
the stimulus sets have no ImageNet label), so every image starts correctly classified and the
attack's first success is a genuine flip. Used by ``python -m tests.real.pgd_deviation`` (the
numbers in docs/performance.md) and ``tests/bench/test_pgd_early_stop_speed.py``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from repro.base.stats import binomial_interval

STEPS = 40
SEED = 0


def seeded_subset(total: int, n: int, seed: int) -> np.ndarray:
    """``n`` of ``total`` indices drawn without replacement by ``numpy.random.default_rng(seed)``,
    sorted (the same images for every model)."""
    if not 0 < n <= total:
        raise ValueError(f"subset: expected 0 < n <= {total}, got {n}")
    return np.sort(np.random.default_rng(seed).choice(total, size=n, replace=False))


@dataclass
class ModelDeviation:
    model: str
    n: int
    final_successes: int
    early_successes: int
    recovered: int
    first_success: dict[int, int]  # {iterate: images}; -1: never misclassified
    passes_full: tuple[int, int]  # (forward, backward), the study's rule
    passes_early: tuple[int, int]  # as run by early_stop (+ clean and judgment passes)
    passes_modelled: tuple[int, int]  # pgd.early_stop_passes over the trace's first successes
    seconds_full: float
    seconds_early: float
    parity: bool  # early_stop's outcome and first success equal the trace's, every image
    steps: int = STEPS
    extra: dict[str, Any] = field(default_factory=dict)

    def recovered_interval(self) -> tuple[float, float]:
        return binomial_interval(self.recovered, self.n, method="clopper-pearson")

    @property
    def pass_ratio(self) -> float:
        """All passes of the early-stop rule over the study's rule's (forward + backward)."""
        return sum(self.passes_early) / sum(self.passes_full)

    @property
    def time_ratio(self) -> float:
        return self.seconds_early / self.seconds_full

    def stopped_interval(self) -> tuple[float, float]:
        """Clopper-Pearson interval of the share stopped before the last iterate."""
        stopped = sum(c for k, c in self.first_success.items() if 0 <= k < self.steps)
        return binomial_interval(stopped, self.n, method="clopper-pearson")

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "n": self.n,
            "steps": self.steps,
            "final_successes": self.final_successes,
            "early_successes": self.early_successes,
            "recovered": self.recovered,
            "recovered_interval_cp95": list(self.recovered_interval()),
            "first_success": {str(k): v for k, v in sorted(self.first_success.items())},
            "passes_full": list(self.passes_full),
            "passes_early": list(self.passes_early),
            "passes_modelled": list(self.passes_modelled),
            "pass_ratio": self.pass_ratio,
            "seconds_full": self.seconds_full,
            "seconds_early": self.seconds_early,
            "time_ratio": self.time_ratio,
            "parity": self.parity,
            **self.extra,
        }


def measure(
    name: str,
    model: Any,
    images: np.ndarray,
    names: Sequence[str],
    *,
    steps: int = STEPS,
    seed: int = SEED,
    batch_size: int = 16,
    device: str = "cpu",
) -> ModelDeviation:
    """Both rules on ``images`` (uint8, (N, 3, H, W)) with ``model`` (eval mode, [0, 1] input),
    the study's eps and step size, each image's random start from (``seed``, its name)."""
    import torch

    from repro.benchmarks import pgd

    model = model.to(device).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    if len(images):  # untimed: one forward and backward first (lazy kernels, the allocator)
        x = torch.from_numpy(np.ascontiguousarray(images[:1])).to(device).float().div_(255)
        x.requires_grad_(True)
        model(x).sum().backward()
    traces, stops, t_full, t_early = [], [], 0.0, 0.0
    labels_all = []
    for i in range(0, len(images), batch_size):
        x0 = torch.from_numpy(np.ascontiguousarray(images[i : i + batch_size])).to(device)
        x0 = x0.float().div_(255)
        batch_names = list(names[i : i + batch_size])
        noise = pgd.random_start_noise(batch_names, x0.shape[1:], seed=seed, eps=pgd.EPS_LOW)
        with torch.no_grad():  # the clean pass: the labels (both rules make it)
            labels = model(x0).argmax(dim=-1)
        labels_all.append(labels.cpu().numpy())
        kw = {"eps": pgd.EPS_LOW, "steps": steps, "step_size": pgd.STEP_SIZE}
        t0 = time.perf_counter()
        traces.append(pgd.trace(model, x0, labels, noise, **kw))
        t1 = time.perf_counter()
        stop = pgd.early_stop(model, x0, labels, noise, **kw)
        with torch.no_grad():  # the judgment pass of each image's point
            judged = model(stop.x_adv).argmax(dim=-1) != labels
        t2 = time.perf_counter()
        t_full, t_early = t_full + (t1 - t0), t_early + (t2 - t1)
        stops.append((stop, judged.cpu().numpy()))
    tr = pgd.Trace(
        None,  # type: ignore[arg-type]
        np.concatenate([t.classes for t in traces]),
        np.concatenate([t.success for t in traces]),
    )
    dev = pgd.deviation(tr)
    first = np.concatenate([s.first_success.numpy() for s, _ in stops])
    judged = np.concatenate([j for _, j in stops])
    early_first = np.where(first >= 0, first, np.where(judged, steps, -1))
    n = len(first)
    forward = int(sum(int(s.forward.sum()) for s, _ in stops)) + 2 * n
    backward = int(sum(int(s.backward.sum()) for s, _ in stops))
    return ModelDeviation(
        model=name,
        n=n,
        final_successes=dev.final_successes,
        early_successes=dev.early_successes,
        recovered=dev.recovered,
        first_success=dev.first_success,
        passes_full=(dev.forward_full, dev.backward_full),
        passes_early=(forward, backward),
        passes_modelled=(dev.forward_early, dev.backward_early),
        seconds_full=t_full,
        seconds_early=t_early,
        parity=bool(np.array_equal(early_first, tr.first_success)),
        steps=steps,
        extra={
            "early_stop_successes_as_run": int((early_first >= 0).sum()),
            # images whose first success (outcome) under the early-stop attack differs from the
            # trace's: the two runs' batches differ in size once images stop, and kernels whose
            # sums depend on the batch size can flip a gradient sign or a borderline argmax
            "first_success_mismatches": int((early_first != tr.first_success).sum()),
            "outcome_mismatches": int(((early_first >= 0) != tr.early_success).sum()),
        },
    )


def _pct(lo: float, hi: float) -> str:
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]%"


def format_rows(rows: Sequence[ModelDeviation]) -> str:
    """The table of docs/performance.md: per model the deviation, the first-success distribution,
    the pass and time ratios."""
    lines = [
        f"{'model':<20} {'n':>3} {'final':>5} {'early':>5} {'recovered (CP 95%)':>26} "
        f"{'stopped (CP 95%)':>24} {'pass ratio':>10} {'time ratio':>10} parity (outcome/step "
        "mismatches)"
    ]
    for r in rows:
        stopped = sum(c for k, c in r.first_success.items() if 0 <= k < r.steps)
        lines.append(
            f"{r.model:<20} {r.n:>3} {r.final_successes:>5} {r.early_successes:>5} "
            f"{r.recovered:>5} {_pct(*r.recovered_interval()):>20} "
            f"{stopped:>5} {_pct(*r.stopped_interval()):>18} {r.pass_ratio:>10.4f} "
            f"{r.time_ratio:>10.4f} {'yes' if r.parity else 'NO'} "
            f"({r.extra.get('outcome_mismatches', '?')}/"
            f"{r.extra.get('first_success_mismatches', '?')})"
        )
    lines.append("first misclassified iterate (iterate: images; -1 never, 0 the random start):")
    for r in rows:
        dist = ", ".join(f"{k}: {v}" for k, v in sorted(r.first_success.items()))
        lines.append(
            f"  {r.model}: {dist}; passes full {r.passes_full[0]}F + {r.passes_full[1]}B, "
            f"early stop {r.passes_early[0]}F + {r.passes_early[1]}B as run "
            f"({r.passes_modelled[0]}F + {r.passes_modelled[1]}B modelled); "
            f"{r.seconds_full:.1f} s full, {r.seconds_early:.1f} s early stop"
        )
    return "\n".join(lines)

"""Runner, PGD's early-stop rule against the study's, measured on one model.

On a fixed, seeded subset of images, the full attack with every iterate judged
(``repro.benchmarks.pgd.trace``) and the early-stop attack (``repro.benchmarks.pgd.early_stop``) in
the same run, each timed.

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

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repro.base.stats import binomial_interval

STEPS = 40
SEED = 0


def seeded_subset(total: int, n: int, seed: int) -> np.ndarray:
    """``n`` of ``total`` indices, seeded and sorted (the same images for every model).

    Drawn without replacement by ``numpy.random.default_rng(seed)``."""
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


@dataclass
class BatchOutcome:
    """One batch of images under both rules: what ``combine`` needs, and all of it.

    All of it, so that a run can be journalled batch by batch and resumed
    (``python -m tests.real.pgd_deviation --journal``). ``classes``/``success``: the trace
    (``pgd.Trace``); ``early_first``: the early-stop attack's first misclassified iterate (``steps``
    where only the judgment pass of its final point is, -1 never); ``forward``/``backward``: its
    passes as run, the clean and judgment passes included."""

    names: list[str]
    classes: np.ndarray  # (n, steps + 1) int64
    success: np.ndarray  # (n, steps + 1) bool
    early_first: np.ndarray  # (n,) int64
    forward: int
    backward: int
    seconds_full: float
    seconds_early: float

    def as_json(self) -> dict[str, Any]:
        return {
            "names": list(self.names),
            "classes": self.classes.tolist(),
            "success": ["".join("1" if v else "0" for v in row) for row in self.success],
            "early_first": self.early_first.tolist(),
            "forward": self.forward,
            "backward": self.backward,
            "seconds_full": self.seconds_full,
            "seconds_early": self.seconds_early,
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> BatchOutcome:
        """The inverse of ``as_json``.

        A KeyError or ValueError on a malformed record (the journal reader names the file and line).
        """
        success = np.array([[c == "1" for c in row] for row in doc["success"]], dtype=bool)
        classes = np.array(doc["classes"], dtype=np.int64)
        names = [str(n) for n in doc["names"]]
        early = np.array(doc["early_first"], dtype=np.int64)
        if not (len(names) == len(success) == len(classes) == len(early)):
            raise ValueError("names, classes, success and early_first differ in length")
        if classes.shape != success.shape:
            raise ValueError(f"classes {classes.shape} and success {success.shape} differ")
        return cls(
            names=names,
            classes=classes.reshape(len(names), -1),
            success=success.reshape(len(names), -1),
            early_first=early,
            forward=int(doc["forward"]),
            backward=int(doc["backward"]),
            seconds_full=float(doc["seconds_full"]),
            seconds_early=float(doc["seconds_early"]),
        )


def prepare(model: Any, images: np.ndarray, device: str = "cpu") -> Any:
    """``model`` on ``device`` in eval mode with frozen weights, warmed up.

    Warmed up by one untimed forward and backward (lazy kernels, the allocator)."""
    import torch

    model = model.to(device).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    if len(images):
        x = torch.from_numpy(np.ascontiguousarray(images[:1])).to(device).float().div_(255)
        x.requires_grad_(True)
        model(x).sum().backward()
    return model


def measure_batch(
    model: Any,
    images: np.ndarray,
    names: Sequence[str],
    *,
    steps: int = STEPS,
    seed: int = SEED,
    device: str = "cpu",
) -> BatchOutcome:
    """Both rules on one batch (``model`` from ``prepare``), the two attacks timed apart.

    The clean pass (the labels), the full attack with every iterate judged, then the early-stop
    attack and the judgment pass of each image's point. Each image's random start depends on
    (``seed``, its name) only, so a batch gives the same numbers whichever run measures it."""
    import torch

    from repro.benchmarks import pgd

    x0 = torch.from_numpy(np.ascontiguousarray(images)).to(device).float().div_(255)
    names = list(names)
    noise = pgd.random_start_noise(names, x0.shape[1:], seed=seed, eps=pgd.EPS_LOW)
    with torch.no_grad():  # the clean pass: the labels (both rules make it)
        labels = model(x0).argmax(dim=-1)
    budget = pgd.Budget(pgd.EPS_LOW, steps, pgd.STEP_SIZE)
    t0 = time.perf_counter()
    tr = pgd.trace(model, x0, labels, noise, budget)
    t1 = time.perf_counter()
    stop = pgd.early_stop(model, x0, labels, noise, budget)
    with torch.no_grad():  # the judgment pass of each image's point
        judged = (model(stop.x_adv).argmax(dim=-1) != labels).cpu().numpy()
    t2 = time.perf_counter()
    first = stop.first_success.numpy()
    n = len(names)
    return BatchOutcome(
        names=names,
        classes=np.asarray(tr.classes, dtype=np.int64),
        success=np.asarray(tr.success, dtype=bool),
        early_first=np.where(first >= 0, first, np.where(judged, steps, -1)).astype(np.int64),
        forward=int(stop.forward.sum()) + 2 * n,
        backward=int(stop.backward.sum()),
        seconds_full=t1 - t0,
        seconds_early=t2 - t1,
    )


def combine(name: str, batches: Sequence[BatchOutcome], *, steps: int = STEPS) -> ModelDeviation:
    """One model's ``ModelDeviation`` from its batches (in any order: every count is a sum)."""
    from repro.benchmarks import pgd

    if not batches:
        raise ValueError(f"{name}: no measured batch to combine")
    tr = pgd.Trace(
        None,  # type: ignore[arg-type]
        np.concatenate([b.classes for b in batches]),
        np.concatenate([b.success for b in batches]),
    )
    if tr.success.shape[1] != steps + 1:
        raise ValueError(
            f"{name}: batches judged {tr.success.shape[1] - 1} steps, expected {steps}"
        )
    dev = pgd.deviation(tr)
    early_first = np.concatenate([b.early_first for b in batches])
    return ModelDeviation(
        model=name,
        n=len(early_first),
        final_successes=dev.final_successes,
        early_successes=dev.early_successes,
        recovered=dev.recovered,
        first_success=dev.first_success,
        passes_full=(dev.forward_full, dev.backward_full),
        passes_early=(sum(b.forward for b in batches), sum(b.backward for b in batches)),
        passes_modelled=(dev.forward_early, dev.backward_early),
        seconds_full=sum(b.seconds_full for b in batches),
        seconds_early=sum(b.seconds_early for b in batches),
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
    """Both rules on ``images`` (uint8, (N, 3, H, W)) with ``model`` (eval mode, [0, 1] input).

    The study's eps and step size; each image's random start from (``seed``, its name)."""
    model = prepare(model, images, device)
    batches = [
        measure_batch(
            model,
            images[i : i + batch_size],
            names[i : i + batch_size],
            steps=steps,
            seed=seed,
            device=device,
        )
        for i in range(0, len(images), batch_size)
    ]
    return combine(name, batches, steps=steps)


def _pct(lo: float, hi: float) -> str:
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]%"


def format_rows(rows: Sequence[ModelDeviation]) -> str:
    """The table of docs/performance.md, one row per model.

    Per model the deviation, the first-success distribution, the pass and time ratios."""
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


JOURNAL_SCHEMA = "pgd-deviation-batch-1"


class JournalError(ValueError):
    """A journal line that is not a batch record (names the file and the line)."""


def read_journal(path: Path) -> dict[tuple[str, int, int, tuple[str, ...]], BatchOutcome]:
    """The batches a journal holds, keyed by (model, seed, steps, image names).

    A last line cut short without its newline (a run killed while writing it) is left out; any other
    line that is not a batch record is an error naming the file and the line."""
    out: dict[tuple[str, int, int, tuple[str, ...]], BatchOutcome] = {}
    if not path.exists():
        return out
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
            if doc.get("schema") != JOURNAL_SCHEMA:
                raise ValueError(f"schema {doc.get('schema')!r}, expected {JOURNAL_SCHEMA!r}")
            batch = BatchOutcome.from_json(doc["batch"])
            key = (str(doc["model"]), int(doc["seed"]), int(doc["steps"]), tuple(batch.names))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if number == len(lines) and not text.endswith("\n"):
                continue  # the line a killed run was writing
            raise JournalError(f"{path}:{number}: not a batch record ({exc})") from None
        out[key] = batch
    return out


def append_journal(path: Path, model: str, seed: int, steps: int, batch: BatchOutcome) -> None:
    """One batch as one line, flushed to disk before the next batch starts.

    A line a killed run left cut short is removed first."""
    doc = {
        "schema": JOURNAL_SCHEMA,
        "model": model,
        "seed": seed,
        "steps": steps,
        "batch": batch.as_json(),
    }
    held = path.read_bytes() if path.exists() else b""
    if held and not held.endswith(b"\n"):  # the line a killed run was writing: dropped
        with path.open("r+b") as f:
            f.truncate(held.rfind(b"\n") + 1)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(doc, separators=(",", ":")) + "\n")
        f.flush()
        os.fsync(f.fileno())


def measure_journalled(
    name: str,
    load: Callable[[], Any],
    images: np.ndarray,
    names: Sequence[str],
    journal: Path,
    *,
    steps: int = STEPS,
    seed: int = SEED,
    batch_size: int = 16,
    device: str = "cpu",
    log: Callable[[str], None] | None = None,
) -> ModelDeviation:
    """``measure`` with a journal: each batch appended when measured, journalled batches reused.

    Each batch is appended to ``journal`` as soon as it is measured and every batch the journal
    already holds (same model, seed, steps and images) is taken from it: a run killed after k
    batches loses at most the batch it was in. ``load`` is called only when a batch is left to
    measure. The times of journalled batches are the times of the run that made them."""
    done = read_journal(journal)
    batches: list[BatchOutcome] = []
    model = None
    starts = range(0, len(images), batch_size)
    for i in starts:
        chunk = list(names[i : i + batch_size])
        key = (name, seed, steps, tuple(chunk))
        if key in done:
            batches.append(done[key])
            continue
        if model is None:
            model = prepare(load(), images, device)
        batch = measure_batch(
            model, images[i : i + batch_size], chunk, steps=steps, seed=seed, device=device
        )
        append_journal(journal, name, seed, steps, batch)
        batches.append(batch)
        if log is not None:
            log(f"{name}: batch {i // batch_size + 1} of {len(starts)} journalled")
    return combine(name, batches, steps=steps)

"""Runner, throughput harness: images per second through each probe and benchmark for one model.

On one device, in float32 and in bfloat16 autocast with ``channels_last``, and the agreement of the
two precisions on real stimuli.

Each stage is a registered measurement (``STAGE_MEASUREMENTS``) run by THE probe loop
(``repro.measurements.loop``: its stimulus maker, decision rule and scorer, what a measuring
session runs), timed whole, after one untimed batch of the same stage and precision: the warm-up
takes kernel selection, CUDA's lazy loading and the allocator's first touch of its memory out of
the rates, which are then steady-state rates, the ones a 48-model plan multiplies. Its passes per
image are the measurement's (``Measurement.passes``). The stages, and their stage in the cost
model (``repro.planner.cost``):

* ``shape_bias``: ``shape_bias`` on the cue-conflict images (value: shape bias);
* ``spectral``: ``spectral_16``, clean + 22 low/high-pass versions of the GraySplit images
  (values: low- and high-frequency bias of the 16-class decisions);
* ``critical_band``: ``critical_band_16``, the 29 conditions on GraySplit (values: centre
  frequency, bandwidth and peak noise sensitivity with the absolute 50% criterion: Subramanian
  et al.'s protocol on their own images);
* ``classify``: ``stylized``'s 16-class decision, one forward pass per GraySplit image (value:
  16-class accuracy);
* ``pgd``: ``pgd_low`` with ``PGD_STEPS`` steps at the study's eps toward each image's float32
  decision (value: fraction of decisions the attack flips); steps + 2 forward and ``steps``
  backward passes per image.

GraySplit (1,100 grayscale ImageNet validation images of the 16 categories, ``GRAYSPLIT``) stands
in for the ImageNet validation set, which is not available here; its labels are categories, so
the values use the 16-class decision (mean probability over each category's classes).

Agreement: the fraction of changed decisions (1000-class argmax, and the 16-class one where the
stage decides so, of all forward passes the loop makes) and, per value, the float32 and
bfloat16 values, their difference and the float32 value's own 95% sampling interval (percentile
bootstrap over images of the measurement's own scorer, ``BOOTSTRAP`` resamples, seed 0; Wilson
for a plain proportion). A stage's bfloat16 is acceptable only where every value of the bfloat16
run lies inside that interval.

Resource use per stage: wall seconds, user and system CPU seconds (``resource.getrusage``), so
the allocator's share (system time from page faults) is visible.
"""

from __future__ import annotations

import copy
import json
import math
import os
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from repro.base import atomic
from repro.base.allocator import keep_freed_memory
from repro.base.errors import DataError
from repro.base.numbers import fmt_num
from repro.base.registry import resolve_lazy
from repro.base.results import ConditionCount, ProbeResult
from repro.base.settings import user_cache_dir
from repro.base.stats import binomial_interval
from repro.datasets import open_dataset
from repro.datasets.base import ArraySource
from repro.datasets.specs import CATEGORIES16
from repro.measurements.registry import get
from repro.scoring import shape_bias as sbs

from . import autotune

#: the measurement each stage runs on the harness's data (its ``stage`` in the registry is the key)
STAGE_MEASUREMENTS = {
    "shape_bias": "shape_bias",
    "spectral": "spectral_16",
    "critical_band": "critical_band_16",
    "classify": "stylized",
    "pgd": "pgd_low",
}
STAGES = tuple(STAGE_MEASUREMENTS)
PRECISIONS = ("float32", "bfloat16")
CUE_CONFLICT = "texture-vs-shape/cue-conflict"
GRAYSPLIT = "critical-band-masking/GraySplit"
PGD_STEPS = 5
BOOTSTRAP = 200


@dataclass
class StageRun:
    """One stage in one precision: work done, time taken, what was decided, what it gives."""

    stage: str
    precision: str
    images: int
    forward: int = 0  # forward passes (one per stimulus)
    backward: int = 0
    seconds: float = 0.0
    user_s: float = 0.0
    system_s: float = 0.0
    argmax: list[np.ndarray] = field(default_factory=list, repr=False)  # per forward call
    decisions16: list[np.ndarray] = field(default_factory=list, repr=False)
    values: dict[str, float | None] = field(default_factory=dict)
    intervals: dict[str, tuple[float, float] | None] = field(default_factory=dict)

    @property
    def images_per_s(self) -> float:
        return self.images / self.seconds if self.seconds else float("nan")

    @property
    def passes_per_s(self) -> float:
        return (self.forward + self.backward) / self.seconds if self.seconds else float("nan")

    def as_json(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "precision": self.precision,
            "images": self.images,
            "forward": self.forward,
            "backward": self.backward,
            "seconds": round(self.seconds, 3),
            "user_s": round(self.user_s, 3),
            "system_s": round(self.system_s, 3),
            "images_per_s": round(self.images_per_s, 3),
            "passes_per_s": round(self.passes_per_s, 3),
            "values": self.values,
            "intervals": {k: (list(v) if v else None) for k, v in self.intervals.items()},
        }


class Precise:
    """``model`` run in one precision; its logits come back as float32.

    float32 as it is, or bfloat16 autocast on input and weights in ``channels_last``."""

    def __init__(self, model: Any, precision: str, device: Any, channels_last: bool):
        import torch

        self.device = torch.device(device)
        self.precision, self.channels_last = precision, channels_last
        self.model = model.to(memory_format=torch.channels_last) if channels_last else model

    def __call__(self, x: Any) -> Any:
        import torch

        if self.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if self.precision == "bfloat16":
            with torch.autocast(self.device.type, dtype=torch.bfloat16):
                logits = self.model(x)
        else:
            logits = self.model(x)
        return logits.float()

    # nn.Module surface that the probe loop uses
    def eval(self) -> Precise:
        self.model.eval()
        return self

    def to(self, *args: Any, **kwargs: Any) -> Precise:
        return self

    def parameters(self) -> Any:
        return self.model.parameters()

    @property
    def training(self) -> bool:
        return bool(self.model.training)

    def train(self, mode: bool = True) -> Precise:
        self.model.train(mode)
        return self


# ----------------------------------------------------------------------------- data


def read_graysplit(data_dir: Path, limit: int | None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """GraySplit's images, 16-class labels and names, the first ``limit`` in sorted path order.

    The images are uint8 (N, 3, 224, 224), grey replicated; the sorted path order runs over splits
    0-4 and train."""
    from PIL import Image

    root = data_dir / GRAYSPLIT
    files = sorted(root.glob("*/*.JPEG"))
    if not files:
        raise DataError(
            f"{root}: no GraySplit images (<split>/<i>_color_gray_g_<category>.JPEG); "
            "see SOURCES.md (critical-band-masking/GraySplit)"
        )
    files = files[:limit] if limit else files
    images = np.empty((len(files), 3, 224, 224), dtype=np.uint8)
    labels = np.empty(len(files), dtype=np.int64)
    for i, f in enumerate(files):
        category = f.stem.rsplit("_", 1)[-1]
        if category not in CATEGORIES16:
            raise DataError(
                f"{f}: category {category!r} (the last _ token of the name) is not one of the 16"
            )
        with Image.open(f) as im:
            arr = np.asarray(im.convert("RGB"))
        if arr.shape != (224, 224, 3):
            raise DataError(f"{f}: expected 224 x 224 pixels, got {arr.shape[1]} x {arr.shape[0]}")
        images[i] = arr.transpose(2, 0, 1)
        labels[i] = CATEGORIES16.index(category)
    return images, labels, [f"{f.parent.name}/{f.name}" for f in files]


def read_cue_conflict(data_dir: Path, limit: int | None) -> Any:
    """The cue-conflict images as an in-memory ImageSource (the first ``limit``)."""
    source = open_dataset("cue_conflict", data_dir / CUE_CONFLICT, cache=False)
    images, labels, names = [], [], []
    for batch in source.batches(64):
        images.append(batch.images)
        labels.extend(batch.labels.tolist())
        names.extend(batch.names)
        if limit and len(names) >= limit:
            break
    n = min(limit or len(names), len(names))
    return ArraySource("cue_conflict", np.concatenate(images)[:n], labels[:n], names[:n])


# ----------------------------------------------------------------------------- values and intervals


def bootstrap_interval(
    fn: Callable[[np.ndarray], float | None], n: int, resamples: int = BOOTSTRAP, seed: int = 0
) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of ``fn(indices)`` over ``n`` images.

    None when any resample leaves the value undefined (the value's interval is then undefined too).
    """
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(resamples):
        v = fn(rng.integers(0, n, n))
        if v is None or not math.isfinite(v):
            return None
        vals.append(v)
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return float(lo), float(hi)


def bootstrap_values(
    fn: Callable[[np.ndarray], dict[str, float | None]],
    n: int,
    keys: Sequence[str],
    resamples: int = BOOTSTRAP,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """``bootstrap_interval`` of each value ``fn`` gives, from one set of resamples.

    Each value's interval is the one ``bootstrap_interval`` gives it alone: the same seed, the same
    resamples."""
    rng = np.random.default_rng(seed)
    draws = [fn(rng.integers(0, n, n)) for _ in range(resamples)]
    out: dict[str, tuple[float, float] | None] = {}
    for key in keys:
        vals = [d[key] for d in draws]
        if any(v is None or not math.isfinite(v) for v in vals):
            out[key] = None
            continue
        lo, hi = np.percentile(vals, [2.5, 97.5])
        out[key] = (float(lo), float(hi))
    return out


def scored_values(
    measurement: Any, correct: np.ndarray, keys: Sequence[str]
) -> dict[str, float | None]:
    """The values ``keys`` the measurement's own scorer gives for a correctness matrix.

    The matrix is (images, conditions), its columns in the measurement's condition order."""
    counts = [
        ConditionCount(name, int(correct[:, j].sum()), correct.shape[0])
        for j, name in enumerate(measurement.conditions())
    ]
    result = resolve_lazy(measurement.score)(ProbeResult(measurement.name, "", None, counts), {})
    return {key: result.values.get(key) for key in keys}


# ----------------------------------------------------------------------------- stages


class _Clock:
    def __init__(self, run: StageRun, device: Any):
        self.run, self.device = run, device

    def __enter__(self) -> _Clock:
        self._sync()
        self.t, self.r = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
        return self

    def __exit__(self, *exc: object) -> None:
        self._sync()
        r = resource.getrusage(resource.RUSAGE_SELF)
        self.run.seconds += time.perf_counter() - self.t
        self.run.user_s += r.ru_utime - self.r.ru_utime
        self.run.system_s += r.ru_stime - self.r.ru_stime

    def _sync(self) -> None:
        import torch

        if torch.device(self.device).type == "cuda":
            torch.cuda.synchronize()


#: the values each stage reports (from the measurement's result)
_KEYS = {
    "spectral": ("low_frequency_bias", "high_frequency_bias"),
    "critical_band": ("cf", "bw", "pns"),
}


def run_stage(
    stage: str,
    model: Precise,
    data: dict[str, Any],
    device: Any,
    batch_size: int,
    seed: int,
    *,
    score: bool = True,
) -> StageRun:
    """Run one stage's measurement through the probe loop with ``model`` (its precision).

    Returns what it did and gave; ``score=False`` (the warm-up) returns after the passes, without
    values or intervals."""
    from repro.measurements import loop

    if stage not in STAGE_MEASUREMENTS:
        raise ValueError(f"unknown stage {stage!r} (known: {', '.join(STAGES)})")
    m = get(STAGE_MEASUREMENTS[stage])
    source = data[
        "cue_conflict" if stage == "shape_bias" else "pgd" if stage == "pgd" else "graysplit"
    ]
    overrides = {"steps": PGD_STEPS} if stage == "pgd" else {}
    run = StageRun(stage, model.precision, len(source))
    passes = m.stimuli.passes({**m.kwargs, **overrides})
    run.forward, run.backward = passes.forward * len(source), passes.backward * len(source)
    correct: dict[str, list[np.ndarray]] = {}

    def observe(condition: Any, batch: Any, logits: Any, decisions: np.ndarray) -> None:
        run.argmax.append(logits.argmax(1).cpu().numpy())
        if stage != "pgd":  # the others decide among the 16 categories
            run.decisions16.append(decisions)
        correct.setdefault(condition, []).append(decisions == batch.labels)

    with _Clock(run, device):
        result = loop.run(
            m,
            model,
            source,
            device=device,
            batch_size=batch_size,
            seed=seed,
            observe=observe,
            **overrides,
        )
    if not score:
        return run
    if stage == "shape_bias":
        rows = [r for r in result.records if sbs.texture_class(r["imagename"]) != r["category"]]
        shape = np.array([r["object_response"] == r["category"] for r in rows])
        texture = np.array(
            [r["object_response"] == sbs.texture_class(r["imagename"]) for r in rows]
        )

        def sb(idx: np.ndarray) -> float | None:
            s, t = int(shape[idx].sum()), int(texture[idx].sum())
            return s / (s + t) if s + t else None

        run.values = {"shape_bias": result.value}
        run.intervals = {"shape_bias": bootstrap_interval(sb, len(rows))}
    elif stage == "classify":
        (top1,) = result.conditions
        run.values = {"accuracy16": top1.k / top1.n}
        run.intervals = {"accuracy16": binomial_interval(top1.k, top1.n)}
    elif stage == "pgd":
        robust = next(c for c in result.conditions if c.condition == "robust")
        run.values = {"flipped": (robust.n - robust.k) / robust.n}
        run.intervals = {"flipped": binomial_interval(robust.n - robust.k, robust.n)}
    else:
        keys = _KEYS[stage]
        matrix = np.stack([np.concatenate(correct[name]) for name in m.conditions()], axis=1)
        run.values = {key: result.values.get(key) for key in keys}
        run.intervals = bootstrap_values(
            lambda idx: scored_values(m, matrix[idx], keys), matrix.shape[0], keys
        )
    return run


# ----------------------------------------------------------------------------- the whole harness


def first_batch(data: dict[str, Any], batch_size: int) -> dict[str, Any]:
    """The first ``batch_size`` images of each data set in ``data`` (the warm-up's data)."""
    return {
        key: ArraySource(
            src.name, src.images[:batch_size], src.labels[:batch_size], src.names[:batch_size]
        )
        for key, src in data.items()
    }


@dataclass
class Report:
    model: str
    device: str
    batch_size: int
    channels_last_float32: bool
    runs: dict[tuple[str, str], StageRun]
    autotune: Any = None
    allocator_tuned: bool = False
    decode: dict[str, Any] | None = None  # repro.planner.decode_rate.measure on this machine
    data_major: list[dict[str, Any]] | None = None  # repro.planner.throughput_data_major runs

    def agreement(self, stage: str) -> dict[str, Any]:
        a, b = self.runs[(stage, "float32")], self.runs[(stage, "bfloat16")]
        out: dict[str, Any] = {}
        for name, xs, ys in (
            ("argmax", a.argmax, b.argmax),
            ("decision16", a.decisions16, b.decisions16),
        ):
            if xs and ys:
                x, y = np.concatenate(xs), np.concatenate(ys)
                out[f"changed_{name}"] = [int((x != y).sum()), int(len(x))]
        values = {}
        ok = True
        for key, v32 in a.values.items():
            v16 = b.values.get(key)
            iv = a.intervals.get(key)
            inside = (
                None if (v32 is None or v16 is None or iv is None) else bool(iv[0] <= v16 <= iv[1])
            )
            ok = ok and bool(inside)
            values[key] = {
                "float32": v32,
                "bfloat16": v16,
                "delta": (None if v32 is None or v16 is None else v16 - v32),
                "interval95": list(iv) if iv else None,
                "bfloat16_inside": inside,
            }
        out["values"] = values
        out["bfloat16_acceptable"] = ok
        return out

    def as_json(self) -> dict[str, Any]:
        import torch

        return {
            "model": self.model,
            "device": self.device,
            "batch_size": self.batch_size,
            "channels_last_float32": self.channels_last_float32,
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "allocator_tuned": self.allocator_tuned,
            "autotune": None
            if self.autotune is None
            else {"table": [list(r) for r in self.autotune.table], "cached": self.autotune.cached},
            "runs": [r.as_json() for r in self.runs.values()],
            "agreement": {
                s: self.agreement(s)
                for s in {k[0] for k in self.runs}
                if (s, "float32") in self.runs and (s, "bfloat16") in self.runs
            },
            "decode": self.decode,
            "data_major": self.data_major,
        }


def measure(
    model: Any,
    model_name: str,
    device: Any,
    data_dir: Path,
    *,
    stages: Sequence[str] = STAGES,
    limit: int | None = None,
    batch_size: int | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    partial: Callable[[Report], None] | None = None,
) -> Report:
    """Run ``stages`` in float32 and bfloat16 (``channels_last``) and collect the report.

    ``batch_size`` None: the autotuned choice for (model, device) (``repro.planner.autotune``).
    ``partial`` is called with the report so far after each stage and precision."""
    import torch

    tuned = keep_freed_memory() if torch.device(device).type == "cpu" else False
    model = model.to(device).eval()
    choice = None
    if batch_size is None:
        choice = autotune.tune(model, model_name, device)
        batch_size, cl32 = choice.batch_size, choice.channels_last
    else:
        cl32 = False

    data: dict[str, Any] = {}
    if "shape_bias" in stages:
        data["cue_conflict"] = read_cue_conflict(data_dir, limit)
    if any(s != "shape_bias" for s in stages):
        images, labels, names = read_graysplit(data_dir, limit)
        data["graysplit"] = ArraySource("graysplit", images, labels, names)
    if (
        "pgd" in stages
    ):  # the attack's target: each image's float32 decision (classified by the probe loop)
        from repro.measurements.loop import run

        unlabelled = ArraySource("graysplit", images, np.full(len(images), -1), names)
        decided = [
            r["predicted_class"]
            for r in run(
                "imagenet", model, unlabelled, device=device, batch_size=batch_size
            ).records
        ]
        data["pgd"] = ArraySource("graysplit", images, decided, names)
    runs: dict[tuple[str, str], StageRun] = {}
    variants = {
        "float32": Precise(model, "float32", device, cl32),
        "bfloat16": Precise(copy.deepcopy(model), "bfloat16", device, True),
    }
    warm = first_batch(data, batch_size)
    for stage in stages:
        for precision in PRECISIONS:
            if progress:
                progress(f"{stage} {precision} ...")
            # untimed: one batch first, so that kernel selection, lazy loading and the allocator's
            # first touch of its memory are not in the rates (they are steady-state rates)
            run_stage(stage, variants[precision], warm, device, batch_size, seed, score=False)
            runs[(stage, precision)] = run_stage(
                stage, variants[precision], data, device, batch_size, seed
            )
            if partial is not None:  # what is measured so far survives a crash or a time limit
                partial(
                    Report(
                        model_name, str(device), int(batch_size), cl32, dict(runs), choice, tuned
                    )
                )
    return Report(model_name, str(device), int(batch_size), cl32, runs, choice, tuned)


def default_out(model_name: str, device: Any) -> Path:
    """Where ``python -m repro throughput`` writes a measurement unless told.

    ``<cache>/throughput/<model>-<device kind>.json`` (``REPRO_CACHE_DIR``)."""
    import torch

    return user_cache_dir() / "throughput" / f"{model_name}-{torch.device(device).type}.json"


def write_json(report: Report, path: Path) -> None:
    """Write ``report.as_json()`` to ``path`` atomically.

    A reader, e.g. ``python -m repro plan``, never sees half a file; the mode follows the umask."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = atomic.temp_file(path)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(report.as_json(), indent=1, allow_nan=False, default=float))
        atomic.publish(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fmt(x: float | None) -> str:
    return fmt_num(x, 4, none="undefined")


def format_report(report: Report) -> str:
    """The tables ``python -m repro throughput`` prints."""
    lines = [
        f"throughput of {report.model} on {report.device}: batch {report.batch_size}, float32 "
        f"{'channels_last' if report.channels_last_float32 else 'contiguous'}, bfloat16 autocast "
        "channels_last"
        + ("; allocator: glibc keeps freed memory (mallopt)" if report.allocator_tuned else "")
    ]
    if report.autotune is not None:
        lines.append(
            "autotune (images/s on random input, batch x format): "
            + ", ".join(f"{b}{' cl' if cl else ''} {v:.1f}" for b, cl, v in report.autotune.table)
            + (" [cached]" if report.autotune.cached else "")
        )
    head = (
        f"{'stage':<14} {'precision':<9} {'images':>6} {'fwd':>7} {'bwd':>6} {'seconds':>8} "
        f"{'images/s':>9} {'passes/s':>9} {'sys/user':>8}"
    )
    lines += ["", head, "-" * len(head)]
    for r in report.runs.values():
        ratio = r.system_s / r.user_s if r.user_s else float("nan")
        lines.append(
            f"{r.stage:<14} {r.precision:<9} {r.images:>6d} {r.forward:>7d} {r.backward:>6d} "
            f"{r.seconds:>8.1f} {r.images_per_s:>9.2f} {r.passes_per_s:>9.1f} {ratio:>8.2f}"
        )
    lines += [
        "",
        "agreement of bfloat16 with float32 (changed decisions of all forward passes; values with "
        "the float32 value's 95% interval):",
    ]
    for stage in dict.fromkeys(k[0] for k in report.runs):
        if (stage, "bfloat16") not in report.runs or (stage, "float32") not in report.runs:
            continue
        ag = report.agreement(stage)
        changed = "; ".join(
            f"{k.removeprefix('changed_')} {v[0]}/{v[1]} ({v[0] / v[1]:.2%})"
            for k, v in ag.items()
            if k.startswith("changed_") and v[1]
        )
        lines.append(
            f"  {stage}: changed {changed or '-'}; bfloat16 "
            f"{'acceptable' if ag['bfloat16_acceptable'] else 'NOT acceptable'}"
        )
        for key, v in ag["values"].items():
            iv = v["interval95"]
            inside = v["bfloat16_inside"]
            lines.append(
                f"    {key}: float32 {_fmt(v['float32'])}, bfloat16 {_fmt(v['bfloat16'])}, delta "
                f"{_fmt(v['delta'])}, interval [{_fmt(iv[0]) if iv else '-'}, "
                f"{_fmt(iv[1]) if iv else '-'}] -> "
                f"{'inside' if inside else 'outside' if inside is False else 'undefined'}"
            )
    return "\n".join(lines)

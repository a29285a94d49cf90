"""Runner, cost model: each measurement's forward and backward passes and the hours they take.

The hours are for the study's models on a device, for this suite's pipeline and for the study's own
pipeline as published (``python -m repro plan``). Pure arithmetic.

Work per model and measurement (``workload``), from the measurement registry
(``repro.measurements.registry``: which dataset, the passes per image and the throughput stage
each measurement declares, ``Measurement.passes`` and ``stage``) and the dataset specs
(``repro.datasets.specs``: images, and conditions of the corruption sets):

* classification (ImageNet, -V2, -ReaL, -A, -R, -Sketch, Stylized) and shape bias: 1 forward
  pass per image; ImageNet-C / -C-bar: 1 per image and corruption x severity;
* spectral: 1 + 22 (clean and the filtered conditions, ``repro.scoring.spectral.CUTOFFS``);
* critical band: 29 (SD 0 once, then 7 bands x 4 SDs) stimuli, each synthesised (noise drawn,
  pyramid) and passed forward;
* PGD: per image a clean pass, ``steps`` attack steps (forward and backward each) and the final
  pass: ``steps + 2`` forward and ``steps`` backward (the study's rule, success judged at the
  final point). Under the early-stop rule (a protocol variant: ``pgd_low_early_stop``)
  an image stops at its first misclassified iterate: ``early_stop_work`` counts its passes per
  model family (``PGD_FAMILIES``) from the share of images the attack never flips (robust: all
  passes) and the MEASURED mean passes of an image it flips (``repro.benchmarks.pgd``'s
  ``early_stop_passes`` over the first-success distributions measured per model,
  ``data/pgd_first_success.toml``, see docs/performance.md); a family without a measurement
  takes the full passes.

Time per model and measurement: ``(forward + backward_cost * backward) / rate``, ``rate`` the
forward passes per second of the measurement's stage on the device:

* measured: the ``passes_per_s`` of each stage in a ``python -m repro throughput`` JSON (what
  that model did on that device; it includes the stimulus synthesis of the spectral and
  critical-band stages and, for PGD, the mix of forward and backward passes, so
  ``backward_cost`` is 1 there);
* stated (``PROFILES``): one forward rate per device kind and precision, an ASSUMPTION with
  its source; the synthesis on the device is assumed hidden behind the forward passes;
* a backward pass costs ``BACKWARD_COST`` forward passes (the usual 2x: two matrix products per
  layer instead of one).

Decoding: this suite decodes each image ONCE into the crop cache (``repro.datasets.cache``) for
all models and measurements; the study decoded every image again for each model, measurement
and condition. Decoding runs on ``cpu_workers`` CPU cores at ``decode_per_s`` images per second
each (stated), overlapped with the device: a measurement takes the longer of the two.

The study's pipeline as published (``pipeline="published"``): float32 forward passes, the
critical-band noise synthesised per image on the CPU (``cpu_stimulus_s`` seconds per stimulus
and core, the per-image reference measured in ``nox -s bench``, in ``cpu_workers`` workers,
overlapped with the device), decoding per model, measurement and condition.

Models in parallel on ``gpus`` devices: the (model, measurement) jobs are independent, so wall
hours = device hours / gpus (perfect scaling assumed: there are 48 x 14 jobs).
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from repro.base.errors import ConfigError
from repro.measurements import registry as ms

#: ASSUMPTION: a backward pass costs this many forward passes
BACKWARD_COST = 2.0


@dataclass(frozen=True)
class Profile:
    """Stated forward rates of a device kind (ResNet-50 at 224 px), with where they come from."""

    name: str
    forward_fp32: float  # forward passes per second, float32 (TF32 off)
    forward_bf16: float  # forward passes per second, bfloat16 autocast, channels_last
    source_fp32: str
    source_bf16: str


#: ASSUMPTIONS (no measurement on such a device yet). ResNet-50 costs 4.1
#: GMAC = 8.2 GFLOP per 224 px image forward.
PROFILES: dict[str, Profile] = {
    "h200": Profile(
        "h200",
        4_000.0,
        20_000.0,
        "49% of the H200's 67 TFLOPS FP32 (NVIDIA H200 datasheet) at 8.2 GFLOP per image",
        "a round figure for a current GPU on ResNet-50 (20,000 images/s, not measured here): 17% "
        "of the H200's 989 TFLOPS dense BF16 (NVIDIA H200 datasheet) at 8.2 GFLOP per image",
    ),
    "a100": Profile(
        "a100",
        1_200.0,
        6_300.0,
        "the H200's assumed FP32 utilisation (49%) of the A100's 19.5 TFLOPS FP32 (NVIDIA A100 "
        "datasheet)",
        "the H200's assumed BF16 utilisation (17%) of the A100's 312 TFLOPS dense BF16 (datasheet)",
    ),
}

#: ASSUMPTIONS for the CPU side of a GPU node
DECODE_PER_S = 400.0  # JPEG decode + resize + crop per second per core (PIL, ImageNet-size images)
CPU_WORKERS = 8  # data-loading / synthesis workers per GPU
#: the study's per-image critical-band synthesis: seconds per stimulus per core (per-image NumPy
#: reference incl. drawing the noise; nox -s bench measured 22.8 s for 64 x 29 on a loaded core
#: and 8.4 s idle: about 4.5 ms idle, the value used)
CPU_STIMULUS_S = 0.0045


@dataclass(frozen=True)
class Work:
    """One measurement's work for one model."""

    measurement: str
    dataset: str
    stage: str
    images: int  # images of the dataset (all conditions)
    forward: int
    backward: int
    synthesized: int  # stimuli synthesised from noise (critical band)
    decodes_published: int  # image decodes of the study's pipeline (per model)


def forward_per_image(measurement: str) -> int:
    """Forward passes per dataset image of a registered measurement (the critical band: 29)."""
    return ms.get(measurement).passes().forward


def workload(names: Sequence[str] | None = None) -> list[Work]:
    """The work of each registered measurement (or of ``names``) for one model."""
    from repro.datasets.specs import get_spec

    out = []
    for name in names or ms.names():
        m = ms.get(name)
        spec = get_spec(m.dataset)
        images = spec.total * len(spec.conditions)
        p = m.passes()
        # ASSUMPTION: the study decoded each image once per condition it was shown in (a data
        # loader per condition, transforms on the fly; an attack's steps reuse the decoded image);
        # this suite decodes it once for all
        decodes = p.forward if m.stimuli.derived else 1
        out.append(
            Work(
                name,
                m.dataset,
                m.stage,
                images,
                p.forward * images,
                p.backward * images,
                p.synthesized * images,
                images * decodes,
            )
        )
    return out


@dataclass(frozen=True)
class PgdFamily:
    """The study's models of one family under PGD's early-stop rule.

    How many, the share of images the attack never flips (they take every step under either rule),
    and the mean (forward, backward) passes of an image it flips, measured (None: not measured, the
    full passes)."""

    name: str
    models: int
    robust: float
    flipped_passes: tuple[float, float] | None
    source: str


#: PGD_STEPS of the study's rule, and its passes per image (a clean pass, steps + 1 forward)
PGD_STEPS = 40
PGD_FULL = (PGD_STEPS + 2, PGD_STEPS)

#: MEASURED: the first misclassified iterate of each image, per model, with the command that
#: measured it (docs/performance.md#pgd-early-stop)
FIRST_SUCCESS_FILE = Path(__file__).parent / "data" / "pgd_first_success.toml"


@dataclass(frozen=True)
class FirstSuccessRun:
    model: str
    images: int
    first_success: dict[int, int]  # {iterate: images}; -1: never misclassified

    @property
    def flipped(self) -> int:
        return sum(c for k, c in self.first_success.items() if k >= 0)


def read_first_success(path: Path = FIRST_SUCCESS_FILE) -> list[FirstSuccessRun]:
    """The measured runs of ``path``.

    A ConfigError naming the file, the run and the field for a wrong one (counts that do not sum to
    the run's images, an iterate that is not a number)."""
    try:
        runs = tomllib.loads(path.read_text(encoding="utf-8"))["run"]
        out = []
        for i, r in enumerate(runs):
            where = f"{path}: [[run]] {i + 1} ({r.get('model', '?')})"
            dist = {int(k): int(v) for k, v in r["first_success"].items()}
            if sum(dist.values()) != int(r["images"]):
                raise ConfigError(
                    f"{where}: first_success sums to {sum(dist.values())}, expected images = "
                    f"{r['images']}"
                )
            out.append(FirstSuccessRun(str(r["model"]), int(r["images"]), dist))
    except (OSError, tomllib.TOMLDecodeError, KeyError, ValueError, TypeError) as exc:
        raise ConfigError(f"{path}: cannot read the PGD first-success runs: {exc!r}") from None
    return out


def pooled_first_success(runs: Sequence[FirstSuccessRun]) -> dict[int, int]:
    """{iterate: images} of the flipped images of every run (iterate >= 0), pooled."""
    out: dict[int, int] = {}
    for r in runs:
        for k, c in r.first_success.items():
            if k >= 0:
                out[k] = out.get(k, 0) + c
    return dict(sorted(out.items()))


LITE_RUNS = read_first_success()
LITE_FIRST_SUCCESS = pooled_first_success(LITE_RUNS)


def flipped_passes(first_success: Mapping[int, int], steps: int = 40) -> tuple[float, float]:
    """Mean (forward, backward) passes of a flipped image from ``{first iterate: images}``.

    The clean pass, one forward per judged iterate and the judgment pass (k + 3), k + 1 backward
    (the batched count: the stop step's backward is spent on the batch); flipped at the last
    iterate: the full passes (``repro.benchmarks.pgd.early_stop_passes``, without importing torch).
    """
    n = sum(first_success.values())
    each = [
        ((k + 3, min(k + 1, steps)) if k < steps else (steps + 2, steps), c)
        for k, c in first_success.items()
    ]
    return sum(f * c for (f, _), c in each) / n, sum(b * c for (_, b), c in each) / n


LITE_FLIPPED_PASSES = flipped_passes(LITE_FIRST_SUCCESS)
LITE_SOURCE = (
    "measured on EfficientNet-"
    + ", ".join(
        f"{r.model.removeprefix('efficientnet_').capitalize()} ({r.images:,})" for r in LITE_RUNS
    )
    + " seeded GraySplit images (docs/performance.md): "
    + f"{sum(r.flipped for r in LITE_RUNS):,} of {sum(r.images for r in LITE_RUNS):,} flipped, "
    + "a flipped image {f:.2f} forward + {b:.2f} backward passes; NOT measured on the study's "
    + "ResNet-50s"
)

#: The study's 48 models in two families (r50_categories.json: 15 adversarially trained, 33 others),
#: robust share = the mean published PGD-40/low accuracy of the family (benchmark.csv: 53.6% and
#: 27.0%, denominator 50,048, Q2)
PGD_FAMILIES: tuple[PgdFamily, ...] = (
    PgdFamily(
        "not adversarially trained",
        33,
        0.2698,
        LITE_FLIPPED_PASSES,
        "robust 27.0% (mean published PGD-40/low accuracy of the 33); a flipped image: "
        + LITE_SOURCE.format(f=LITE_FLIPPED_PASSES[0], b=LITE_FLIPPED_PASSES[1]),
    ),
    PgdFamily(
        "adversarially trained",
        15,
        0.5358,
        None,
        "robust 53.6% (mean published PGD-40/low accuracy of the 15); a flipped image: not "
        "measured, so the full 42 forward + 40 backward",
    ),
)


def early_stop_per_image(family: PgdFamily, steps: int = PGD_STEPS) -> tuple[float, float]:
    """Mean (forward, backward) passes per image of a family under the early-stop rule."""
    full = (steps + 2.0, float(steps))
    flipped = family.flipped_passes or full
    r = family.robust
    return (r * full[0] + (1 - r) * flipped[0], r * full[1] + (1 - r) * flipped[1])


def early_stop_passes(
    families: Sequence[PgdFamily] = PGD_FAMILIES, steps: int = PGD_STEPS
) -> tuple[float, float]:
    """Mean (forward, backward) passes per image over the families' models."""
    total = sum(f.models for f in families)
    per = [(f.models, early_stop_per_image(f, steps)) for f in families]
    return (sum(m * p[0] for m, p in per) / total, sum(m * p[1] for m, p in per) / total)


def early_stop_work(
    work: Sequence[Work], families: Sequence[PgdFamily] = PGD_FAMILIES
) -> list[Work]:
    """``work`` with each attack's passes under the early-stop rule.

    Each attack's forward and backward passes are the families' mean per image; the other
    measurements stay as they are."""
    from dataclasses import replace

    out = []
    for w in work:
        if not w.backward:
            out.append(w)
            continue
        steps = round(w.backward / w.images)
        fwd, bwd = early_stop_passes(families, steps)
        out.append(replace(w, forward=round(fwd * w.images), backward=round(bwd * w.images)))
    return out


def format_pgd_rules(
    work: Sequence[Work],
    early: Sequence[Work],
    device_s: Mapping[str, float],
    early_device_s: Mapping[str, float],
    *,
    models: int,
    families: Sequence[PgdFamily] = PGD_FAMILIES,
) -> str:
    """PGD's passes and device hours under the study's rule and the early-stop variant.

    In float32, for ``models`` models on one device, with the families the variant's passes come
    from."""
    lines = [
        f"PGD under both rules ({models} models, float32, device hours on one device; the "
        "early-stop rule is a protocol variant, pgd_low_early_stop: its values are not the "
        "study's PGD-40 column)"
    ]
    for f in families:
        fw, bw = early_stop_per_image(f)
        lines.append(
            f"  {f.name} ({f.models} models): {fw:.2f} forward + {bw:.2f} backward per "
            f"image; {f.source}"
        )
    for w, e in zip(work, early, strict=True):
        if not w.backward:
            continue
        full_h = models * device_s[w.measurement] / 3600
        early_h = models * early_device_s[w.measurement] / 3600
        lines += [
            f"  {w.measurement}, final point (the study's): {w.forward / w.images:.2f} forward + "
            f"{w.backward / w.images:.2f} backward per image, {full_h:.2f} h",
            f"  {w.measurement}, early stop (variant):      {e.forward / e.images:.2f} forward + "
            f"{e.backward / e.images:.2f} backward per image, {early_h:.2f} h "
            f"({early_h / full_h:.1%} of the study's rule)",
        ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Rates:
    """Forward passes per second per stage, and how backward passes count."""

    per_stage: Mapping[str, float]
    backward_cost: Mapping[str, float]
    source: str

    def rate(self, stage: str) -> float:
        if stage not in self.per_stage:
            raise ConfigError(
                f"no throughput for stage {stage!r} ({self.source}); have "
                f"{sorted(self.per_stage)}: run `python -m repro throughput --stages` with {stage} "
                "too"
            )
        return float(self.per_stage[stage])


def stated_rates(profile: str, precision: str) -> Rates:
    """Every stage at the profile's stated forward rate (backward = BACKWARD_COST forward)."""
    if profile not in PROFILES:
        raise ConfigError(
            f"unknown device {profile!r}: stated profiles are {', '.join(PROFILES)} "
            "(or pass --throughput FILE from python -m repro throughput)"
        )
    p = PROFILES[profile]
    bf16 = precision == "bfloat16"
    r, src = (p.forward_bf16, p.source_bf16) if bf16 else (p.forward_fp32, p.source_fp32)

    stages = {ms.get(name).stage for name in ms.names()}
    return Rates(
        {s: r for s in stages},
        {s: BACKWARD_COST for s in stages},
        f"{p.name} {precision}, {r:,.0f} forward passes/s, ASSUMED: {src}",
    )


def _rate(value: object, stage: str) -> float:
    """A measured passes-per-second: a finite positive number.

    NaN, 0, a negative or a bool is no rate."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"stage {stage!r}: passes_per_s = {value!r}, expected a positive number")
    return float(value)


def _backward_stages() -> set[str]:
    """The stages of measurements with backward passes (the attack's).

    Their measured passes per second already mix forward and backward passes, so a backward pass
    counts as one there."""
    return {m.stage for m in (ms.get(name) for name in ms.names()) if m.passes().backward}


def measured_rates(path: str | Path, precision: str) -> Rates:
    """Per-stage rates from a ``python -m repro throughput`` JSON file."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
        runs = [r for r in doc["runs"] if r["precision"] == precision]
        per = {r["stage"]: _rate(r["passes_per_s"], r["stage"]) for r in runs}
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError, RecursionError) as exc:
        raise ConfigError(
            f"{path}: not a throughput file of python -m repro throughput ({type(exc).__name__}: "
            f"{exc}); expected the JSON it writes (run it again, or check the path)"
        ) from None
    if not per:
        raise ConfigError(f"{path}: no {precision} runs in the throughput file")
    back = {s: (1.0 if s in _backward_stages() else BACKWARD_COST) for s in per}
    return Rates(
        per,
        back,
        f"measured: {doc.get('model')} on {doc.get('device')}, {precision}, batch "
        f"{doc.get('batch_size')} ({path})",
    )


@dataclass(frozen=True)
class Row:
    measurement: str
    forward: int
    backward: int
    device_s: float  # per model
    cpu_s: float  # per model (decoding, CPU synthesis), already divided by the workers
    hours_all: float  # all models, one device: max(device, cpu) per model x models


def plan(
    work: Sequence[Work],
    rates: Rates,
    *,
    models: int = 48,
    pipeline: str = "ours",
    decode_per_s: float = DECODE_PER_S,
    cpu_workers: int = CPU_WORKERS,
    cpu_stimulus_s: float = CPU_STIMULUS_S,
) -> list[Row]:
    """Hours per measurement for ``models`` models (see the module docstring)."""
    if pipeline not in ("ours", "published"):
        raise ConfigError(f"pipeline must be ours or published, got {pipeline!r}")
    rows = []
    decoded_once: set[str] = set()
    for w in work:
        equivalent = w.forward + rates.backward_cost.get(w.stage, BACKWARD_COST) * w.backward
        device_s = equivalent / rates.rate(w.stage)
        if pipeline == "ours":
            first = w.dataset not in decoded_once  # decoded once for all models and measurements
            decoded_once.add(w.dataset)
            cpu_total = (w.images / decode_per_s / cpu_workers) if first else 0.0
            total = models * device_s + cpu_total  # the one-off decode is not hidden behind a model
            rows.append(
                Row(
                    w.measurement, w.forward, w.backward, device_s, cpu_total / models, total / 3600
                )
            )
        else:
            if (
                w.synthesized
            ):  # the study synthesised on the CPU: the device only runs the forward passes
                device_s = equivalent / rates.rate("classify")
            cpu_s = (
                w.decodes_published / decode_per_s + w.synthesized * cpu_stimulus_s
            ) / cpu_workers
            rows.append(
                Row(
                    w.measurement,
                    w.forward,
                    w.backward,
                    device_s,
                    cpu_s,
                    models * max(device_s, cpu_s) / 3600,
                )
            )
    return rows


def format_plan(columns: Mapping[str, tuple[Sequence[Row], str]], *, models: int, gpus: int) -> str:
    """The table ``python -m repro plan`` prints: one column of hours per pipeline variant.

    The columns are ``{title: (rows, source)}``; hours per measurement and in total."""
    titles = list(columns)
    first = columns[titles[0]][0]
    head = f"{'measurement':<16} {'forward':>10} {'backward':>9} " + " ".join(
        f"{t:>16}" for t in titles
    )
    lines = [
        f"projected device hours for {models} models (wall hours on {gpus} device(s): the last "
        "line)"
    ]
    lines += [f"  {t}: {src}" for t, (_, src) in columns.items()]
    lines += ["", head, "-" * len(head)]
    for i, r in enumerate(first):
        lines.append(
            f"{r.measurement:<16} {r.forward / 1e6:>9.3f}M {r.backward / 1e6:>8.3f}M "
            + " ".join(f"{columns[t][0][i].hours_all:>16.2f}" for t in titles)
        )
    totals = {t: sum(r.hours_all for r in rows) for t, (rows, _) in columns.items()}
    fwd, bwd = sum(r.forward for r in first), sum(r.backward for r in first)
    lines += [
        "-" * len(head),
        f"{'per model':<16} {fwd / 1e6:>9.3f}M {bwd / 1e6:>8.3f}M "
        + " ".join(f"{totals[t] / models:>16.3f}" for t in titles),
        f"{'total':<16} {fwd * models / 1e6:>9.1f}M {bwd * models / 1e6:>8.1f}M "
        + " ".join(f"{totals[t]:>16.2f}" for t in titles),
        f"{'wall, ' + str(gpus) + ' device(s)':<16} {'':>10} {'':>9} "
        + " ".join(f"{totals[t] / gpus:>16.2f}" for t in titles),
    ]
    return "\n".join(lines)

"""Measurements, the registry: each measurement the suite can run on a model, as data.

THE one registry the runner, the ``probe`` command, the cost model, autotune, the throughput
harness and the claims' needs read.

A ``Measurement`` carries its facts: the dataset it reads (the one place that says which dataset
a probe reads), its stimuli (``repro.measurements.stimuli``: the conditions each image is shown
as, how they are made, the forward and backward passes per image, the throughput stage), its
decision rule (a lazy ``"module:Class"``, torch: from logits to decisions, counts and per-item
records), its scorer (a lazy ``"module:function"``, pure: counts to values), fixed keyword
arguments, the summarizer that turns the result into benchmark.csv columns
(``repro.measurements.columns``) and its version. ONE loop runs any of them
(``repro.measurements.loop``); nothing here imports torch or NumPy. ``kind = "probe"`` marks the
bias probes the ``probe`` command offers; a probe measurement with ``variant_of`` set is that
probe under another protocol on another stimulus set (the 16-class protocol of Subramanian et al.
2023 on GraySplit / CBMSplit, METHODS.md section 3), which the ``probe`` command picks by the
stimuli it is given; the study's protocol stays each probe's default. Its version is the
``VERSION`` of the module it names (``versioned_by``) joined with the spec's own version, so a
change on either side makes stored records stale.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from repro.base.errors import ConfigError
from repro.base.registry import Registry, resolve_lazy
from repro.measurements.source_version import read_version
from repro.measurements.stimuli import (
    CRITICAL_BAND,
    CRITICAL_BAND_ONE,
    CUE_CONFLICT,
    IMAGES,
    PARTS,
    PGD,
    SPECTRAL,
    Passes,
    Stimuli,
)


@dataclass(frozen=True)
class Lazy:
    """A keyword argument resolved at run time (``"module:attr"``), e.g. a class subset."""

    ref: str

    def resolve(self) -> Any:
        return resolve_lazy(self.ref)


@dataclass(frozen=True)
class Measurement:
    name: str
    dataset: (
        str  # dataset name for repro.datasets.open_dataset (and repro.datasets.roots.dataset_root)
    )
    summarize: str  # lazy "module:function" (result, context) -> list[ColumnValue]
    description: str
    decision: str = (
        ""  # lazy "module:Class": the decision rule (repro.measurements.loop says what it does)
    )
    stimuli: Stimuli = IMAGES
    score: str = (
        ""  # lazy "module:function" (result, params) -> result, pure; "": the counts as they are
    )
    counted: (
        str | tuple[str, ...]
    ) = ()  # what is counted, in order (lazy function or names); (): the stimuli's
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    spec_version: str = "1"
    seed: int = 0
    # the result records its seed, torch's generator is seeded with it (noise, random starts)
    seeded: bool = False
    columns: tuple[str, ...] = ()  # the benchmark.csv columns it produces (headline ones)
    kind: str = "benchmark"  # "probe": a bias probe, offered by `python -m repro probe`
    # a probe under another protocol / stimulus set: the name of the probe's default measurement
    variant_of: str = ""
    protocol: str = ""  # how a probe decides and on what (named in the probe command's output)
    versioned_by: str = ""  # the module whose VERSION this measurement's stored version carries
    # lazy "module:function" (result, path): what `probe --out` writes ("": counts per condition)
    writes: str = ""
    # an Environment's own run(model, source, *, device, batch_size, seed, progress, **kwargs);
    # "": the loop
    run: str = ""
    # run only when named (a protocol variant such as PGD's early stop): never in `all`
    opt_in: bool = False

    def resolve_kwargs(self) -> dict[str, Any]:
        return {k: (v.resolve() if isinstance(v, Lazy) else v) for k, v in self.kwargs.items()}

    def conditions(self) -> tuple[str, ...]:
        """What the decision rule counts, in order (empty: the rule's own, e.g. top-1 and top-5)."""
        if isinstance(self.counted, str):
            return tuple(resolve_lazy(self.counted)())  # type: ignore[operator]
        return tuple(self.counted) or self.stimuli.names()

    def passes(self) -> Passes:
        """Forward and backward passes per image.

        Read by ``repro.planner.cost``, autotune and the throughput harness."""
        return self.stimuli.passes(self.kwargs)

    @property
    def stage(self) -> str:
        return self.stimuli.stage

    def version(self) -> str:
        """The measurement's version: the VERSION of the module it names and the spec version.

        ``<VERSION of versioned_by (or of the run function's module)>+<spec version>``; the
        VERSION is read from the module's source where it can be (``source_version``: no torch
        import for the interactive commands), else the module is imported; ``?`` where it names
        none or has no VERSION."""
        ref = self.versioned_by or self.run.partition(":")[0]
        version = read_version(ref) if ref else None
        if version is None:
            module = importlib.import_module(ref) if ref else None
            version = getattr(module, "VERSION", "?")
        return f"{version}+{self.spec_version}"


MEASUREMENTS: Registry[Measurement] = Registry("measurement")

_COLS = "repro.measurements.columns"
_P, _B, _S = "repro.probes", "repro.benchmarks", "repro.scoring"
#: top-1 and top-5 over the 1000 classes (or a class subset), one prediction record per image
_CLASSIFY: dict[str, Any] = {
    "decision": f"{_B}.classify:Classify",
    "score": f"{_S}.benchmarks:score_classify",
    "versioned_by": f"{_B}.classify",
}
#: the top-1 counts of each part (corruption/severity); no records (95 x 50,000 per model)
_PARTS: dict[str, Any] = {"decision": f"{_B}.classify:Classify", "stimuli": PARTS}


def _add(m: Measurement) -> None:
    MEASUREMENTS.register(m.name, m)


def _top1(name: str, dataset: str, description: str, *, subset: str = "", **facts: Any) -> None:
    """Register a top-1 benchmark whose one benchmark.csv column is ``top1_acc/<name with ->``.

    ``subset``: the class subset (a name in repro.datasets.class_subsets) it is scored over."""
    kwargs = {"class_subset": Lazy(f"repro.datasets.class_subsets:{subset}")} if subset else {}
    column = "top1_acc/" + name.replace("_", "-")
    _add(
        Measurement(
            name, dataset, f"{_COLS}:{name}", description, kwargs=kwargs, columns=(column,), **facts
        )
    )


_top1("imagenet", "imagenet_val", "ImageNet val top-1 (50,000)", **_CLASSIFY)
_top1("imagenet_v2", "imagenet_v2", "ImageNetV2 matched-frequency top-1 (10,000)", **_CLASSIFY)
_top1(
    "imagenet_real",
    "imagenet_val",
    "ImageNet val top-1 against ReaL labels (standard; published variant: last batch, Q1)",
    **_CLASSIFY,
)
_top1(
    "imagenet_a",
    "imagenet_a",
    "ImageNet-A top-1 over the 200 ImageNet-A classes (7,500)",
    subset="IMAGENET_A_CLASSES",
    **_CLASSIFY,
)
_top1(
    "imagenet_r",
    "imagenet_r",
    "ImageNet-R top-1 over the 200 ImageNet-R classes (30,000)",
    subset="IMAGENET_R_CLASSES",
    **_CLASSIFY,
)
_top1("imagenet_sketch", "imagenet_sketch", "ImageNet-Sketch top-1 (50,889)", **_CLASSIFY)
# versioned_by "": "?", the version these have always been stored under (their run function's
# module had no VERSION); naming one would make every stored ImageNet-C record stale
_top1(
    "imagenet_c",
    "imagenet_c",
    "ImageNet-C top-1 per corruption x severity; published: mean over 19 corruptions (Q3)",
    **_PARTS,
)
_top1(
    "imagenet_cbar",
    "imagenet_cbar",
    "ImageNet-C-bar top-1, mean over 10 corruptions x 5 severities",
    **_PARTS,
)
_add(
    Measurement(
        "stylized",
        "stylized",
        f"{_COLS}:stylized",
        "model-vs-human Stylized-ImageNet, 16-class decision accuracy (800)",
        columns=("top1_acc/stylized",),
        decision=f"{_B}.stylized:Stylized",
        score=f"{_S}.benchmarks:score_stylized",
        versioned_by=f"{_B}.stylized",
    )
)
_add(
    Measurement(
        "pgd_low",
        "imagenet_val",
        f"{_COLS}:pgd_low",
        "ImageNet val under L-inf PGD-40, eps 0.5/255 (published: denominator 50,048, Q2)",
        decision=f"{_B}.pgd:Robust",
        stimuli=PGD,
        score=f"{_S}.benchmarks:score_pgd",
        kwargs={"eps": 0.5 / 255, "steps": 40, "step_size": 2 / 255},
        seeded=True,
        columns=("top1_acc/PGD-40/low",),
        versioned_by=f"{_B}.pgd",
    )
)
# The early-stop rule: a protocol variant of pgd_low, never a study's measurement and
# never in `all`; its column is its own, so no comparison or claim counts it as the study's column
_add(
    Measurement(
        "pgd_low_early_stop",
        "imagenet_val",
        f"{_COLS}:pgd_low_early_stop",
        "pgd_low with each image's attack stopped at its first misclassified iterate (protocol "
        "variant, rule early_stop; its own column)",
        decision=f"{_B}.pgd:Robust",
        stimuli=PGD,
        score=f"{_S}.benchmarks:score_pgd_early_stop",
        kwargs={"eps": 0.5 / 255, "steps": 40, "step_size": 2 / 255, "rule": "early_stop"},
        seeded=True,
        columns=("top1_acc/PGD-40-early-stop/low",),
        variant_of="pgd_low",
        protocol="early_stop",
        versioned_by=f"{_B}.pgd",
        opt_in=True,
    )
)
_IMAGENET_1000 = (
    "imagenet-1000class"  # top-1 over 1000 classes on ImageNet val (METHODS.md sections 2-3)
)
_SPECTRAL_CUTOFFS = ("0.01", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.99")
_add(
    Measurement(
        "shape_bias",
        "cue_conflict",
        f"{_COLS}:shape_bias",
        "cue-conflict shape bias S / (S + T) (1,280 images, 80 dropped)",
        columns=("shape-bias",),
        decision=f"{_P}.shape_bias:ShapeBias",
        stimuli=CUE_CONFLICT,
        score=f"{_S}.shape_bias:score",
        seeded=True,
        kind="probe",
        protocol="model-vs-human-16class",
        versioned_by=f"{_P}.shape_bias",
        writes=f"{_P}.shape_bias:write_decisions_csv",
    )
)
#: what the two spectral probes share (the 1000-class and the 16-class protocol)
_SPECTRAL: dict[str, Any] = {"stimuli": SPECTRAL, "score": f"{_S}.spectral:score", "kind": "probe"}


def _bandpass(prefix: str) -> tuple[str, ...]:
    """The spectral probe's columns: ``<prefix>/<LFC or HFC>/<cut-off>``."""
    return tuple(f"{prefix}/{k}/{c}" for k in ("LFC", "HFC") for c in _SPECTRAL_CUTOFFS)


_add(
    Measurement(
        "spectral",
        "imagenet_val",
        f"{_COLS}:spectral",
        "low-/high-pass filtered top-1 relative to clean (11 cut-offs each)",
        decision=f"{_P}._common:Top1",
        columns=_bandpass("metric/bandpass"),
        protocol=_IMAGENET_1000,
        **_SPECTRAL,
        versioned_by=f"{_P}.spectral",
    )
)
# noise="philox": the counter-based generator of probe VERSION 4; "pcg64" (VERSION 3's
# per-image NumPy streams) stays selectable by name (python -m repro probe --noise pcg64)
_add(
    Measurement(
        "critical_band",
        "imagenet_val",
        f"{_COLS}:critical_band",
        "critical band: noise thresholds per band, Gaussian fit (bw, cf, pns; _norm used by the "
        "paper)",
        decision=f"{_P}._common:Top1",
        stimuli=CRITICAL_BAND,
        score=f"{_S}.critical_band:score",
        kwargs={"noise": "philox"},
        seeded=True,
        columns=tuple(
            f"metric/criticalband/{k}"
            for k in ("bw_norm", "cf_norm", "pns_norm", "bw", "cf", "pns")
        ),
        kind="probe",
        protocol=_IMAGENET_1000,
        versioned_by=f"{_P}.critical_band",
    )
)

# The critical band's original protocol (Subramanian et al. 2023; METHODS.md section 3): 16-class
# decisions (mean softmax per category, as shape bias) on their stimuli, splits 0-4, images as
# they are; columns of their own (repro.measurements.columns), never benchmark.csv's.
_P16 = f"{_P}.sixteen_class"
_SUBRAMANIAN = "subramanian2023-16class"
_CB16_KEYS = ("bw", "cf", "pns", "bw_norm", "cf_norm", "pns_norm")
#: what the two critical-band measurements of the original protocol share
_CB16: dict[str, Any] = {
    "score": f"{_S}.critical_band:score_16",
    "kind": "probe",
    "variant_of": "critical_band",
    "protocol": _SUBRAMANIAN,
    "versioned_by": _P16,
}
_add(
    Measurement(
        "critical_band_16",
        "graysplit",
        f"{_COLS}:critical_band_16",
        "critical band, original protocol: our 29-condition synthesis on GraySplit (1,050 images), "
        "16-class decisions, absolute and _norm thresholds, the same fit",
        decision=f"{_P16}:SixteenRecorded",
        stimuli=CRITICAL_BAND,
        seeded=True,
        columns=tuple(f"metric/criticalband-16class/{k}" for k in _CB16_KEYS),
        **_CB16,
    )
)
_add(
    Measurement(
        "critical_band_16_premade",
        "cbmsplit",
        f"{_COLS}:critical_band_16_premade",
        "critical band, original protocol: the authors' pre-made CBMSplit stimuli (1,050, one (SD, "
        "band) cell each, SD 0 pooled), 16-class decisions, the same thresholds and fit",
        decision=f"{_P16}:Premade",
        counted=f"{_S}.critical_band:condition_names",
        columns=tuple(f"metric/criticalband-16class-premade/{k}" for k in _CB16_KEYS),
        **_CB16,
    )
)
_add(
    Measurement(
        "spectral_16",
        "graysplit",
        f"{_COLS}:spectral_16",
        "spectral probe with 16-class decisions on GraySplit (clean + 22 filtered conditions)",
        decision=f"{_P16}:Sixteen",
        columns=_bandpass("metric/bandpass-16class"),
        variant_of="spectral",
        **_SPECTRAL,
        protocol=_SUBRAMANIAN,
        versioned_by=_P16,
    )
)

#: not registered (it fills no column): our synthesis of ONE named condition per image, e.g. that of
#: the CBMSplit file the authors made from it, for the paired comparison of the two stimulus sets
#: (``repro.measurements.loop.run_matched``)
CRITICAL_BAND_MATCHED = Measurement(
    "critical_band_16_matched",
    "graysplit",
    "",
    "critical_band_16's stimuli of one named condition per image",
    decision=f"{_P16}:SixteenRecorded",
    stimuli=CRITICAL_BAND_ONE,
    counted=f"{_S}.critical_band:condition_names",
    score=f"{_S}.critical_band:score_16",
    seeded=True,
    protocol=_SUBRAMANIAN,
    versioned_by=_P16,
)


def get(name: str) -> Measurement:
    return MEASUREMENTS.get(name)


def names() -> list[str]:
    return MEASUREMENTS.names()


#: the PGD measurement of each rule (``repro.benchmarks.pgd.RULES``): the study's, then the variant
PGD_BY_RULE = {"final_point": "pgd_low", "early_stop": "pgd_low_early_stop"}


def with_pgd_rule(names: Sequence[str], rule: str) -> list[str]:
    """``names`` with the PGD measurement of the other rule replaced by ``rule``'s.

    Used by ``python -m repro measure --pgd-early-stop``; a ConfigError when none of them is a
    PGD measurement."""
    if rule not in PGD_BY_RULE:
        raise ConfigError(f"PGD rule: expected one of {', '.join(PGD_BY_RULE)}, got {rule!r}")
    pgd = set(PGD_BY_RULE.values())
    if not pgd & set(names):
        raise ConfigError(
            f"--pgd-early-stop: no PGD measurement among {', '.join(names) or 'none'} (expected "
            "pgd_low, e.g. --measurements pgd_low)"
        )
    return list(dict.fromkeys(PGD_BY_RULE[rule] if n in pgd else n for n in names))


def current_versions(measurements: list[str] | None = None) -> dict[str, str]:
    """The current version of each measurement whose probe module imports (others are left out)."""
    out: dict[str, str] = {}
    for name in measurements or names():
        try:
            out[name] = MEASUREMENTS.get(name).version()
        except (ImportError, AttributeError):
            continue
    return out


def probes() -> dict[str, Measurement]:
    """The bias probes, by their command-line name, each as its default measurement.

    The command-line name is ``shape-bias`` for ``shape_bias``; the default measurement is the
    study's protocol."""
    return {
        name.replace("_", "-"): m
        for name, m in MEASUREMENTS.items()
        if m.kind == "probe" and not m.variant_of
    }


def probe_variants(probe: str) -> list[Measurement]:
    """The measurements of the probe ``probe``: its default, then its variants.

    ``probe`` is the command-line name."""
    default = probes().get(probe)
    if default is None:
        raise ConfigError(f"unknown probe {probe!r} (known: {', '.join(probes())})")
    return [default] + [m for _, m in MEASUREMENTS.items() if m.variant_of == default.name]


def probe_datasets() -> list[str]:
    """Every dataset some probe measurement reads (the probe command's ``--stimuli`` choices)."""
    return list(dict.fromkeys(m.dataset for p in probes() for m in probe_variants(p)))


def probe_measurement(probe: str, dataset: str | None = None) -> Measurement:
    """The measurement of ``probe`` that reads ``dataset`` (None: the probe's default).

    A ConfigError names the datasets the probe reads."""
    variants = probe_variants(probe)
    if dataset is None:
        return variants[0]
    for m in variants:
        if m.dataset == dataset:
            return m

    raise ConfigError(
        f"probe {probe} does not read {dataset!r} stimuli (it reads: "
        f"{', '.join(m.dataset for m in variants)})"
    )


def configured_roots(
    datasets: Sequence[str], data_dir: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """``{dataset: root}`` for the datasets that have a root.

    A root as ``repro.datasets.roots.dataset_root`` finds it: configured, or -- for the datasets
    that lie in the data directory -- there, when the caller passes the data directory it
    resolved."""
    # imported here: repro.datasets imports numpy, which building the probe command's parser
    # must not
    from repro.datasets.roots import dataset_root

    out = {}
    for name in dict.fromkeys(datasets):
        root = dataset_root(name, data_dir)
        if root is not None:
            out[name] = str(root)
    return out


def split_configured(
    names: Sequence[str],
    measurement: Callable[[str], Measurement] = get,
    data_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """(the measurements whose dataset has a root, {measurement: dataset} of the others)."""
    datasets = {n: measurement(n).dataset for n in names}
    roots = configured_roots(list(datasets.values()), data_dir)
    return [n for n in names if datasets[n] in roots], {
        n: d for n, d in datasets.items() if d not in roots
    }


def measurements_for_columns(columns: Sequence[str]) -> list[str]:
    """The registered measurements that produce any of these benchmark.csv columns."""
    wanted = set(columns)
    out = []
    for name in MEASUREMENTS.names():
        spec = MEASUREMENTS.get(name)
        cells = name == "imagenet_c" and any(
            c.startswith("top1_acc/") and c.rsplit("_", 1)[-1].isdigit() for c in wanted
        )
        if wanted & set(spec.columns) or cells:
            out.append(name)
    return out

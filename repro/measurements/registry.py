"""Measurements, the registry: each measurement the suite can run on a model, as data. THE
one registry the runner, the ``probe`` command and the claims' needs read.

A ``Measurement`` names the dataset it reads (the one place that says which dataset a probe
reads), the probe/benchmark ``run`` function that does the model work (lazy
``"module:function"``, so listing does not import torch), fixed keyword arguments, and the
summarizer that turns the probe's ``ProbeResult`` into benchmark.csv columns
(``repro.measurements.columns``). ``kind = "probe"`` marks the bias probes the ``probe``
command offers; a probe measurement with ``variant_of`` set is that probe under another
protocol on another stimulus set (the 16-class protocol of Subramanian et al. 2023 on GraySplit
/ CBMSplit, METHODS.md section 3), which the ``probe`` command picks by the stimuli it is given;
the study's protocol stays each probe's default. Its version is the probe module's ``VERSION``
joined with the spec's own version, so a change on either side makes stored records stale.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from repro.base.registry import Registry, resolve_lazy


@dataclass(frozen=True)
class Lazy:
    """A keyword argument resolved at run time (``"module:attr"``), e.g. a class subset."""

    ref: str

    def resolve(self) -> Any:
        return resolve_lazy(self.ref)


@dataclass(frozen=True)
class Measurement:
    name: str
    dataset: str  # dataset name for repro.datasets.open_dataset (and repro.datasets.roots.dataset_root)
    run: str  # lazy "module:function" with the probe signature run(model, source, *, device, batch_size, seed, progress, **kwargs)
    summarize: str  # lazy "module:function" (result, context) -> list[ColumnValue]
    description: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    spec_version: str = "1"
    seed: int = 0
    columns: tuple[str, ...] = ()  # the benchmark.csv columns it produces (headline ones)
    kind: str = "benchmark"  # "probe": a bias probe, offered by `python -m repro probe`
    variant_of: str = ""  # a probe under another protocol / stimulus set: the name of the probe's default measurement
    protocol: str = ""  # how a probe decides and on what (named in the probe command's output)

    def resolve_run(self):
        return resolve_lazy(self.run)

    def resolve_kwargs(self) -> dict[str, Any]:
        return {k: (v.resolve() if isinstance(v, Lazy) else v) for k, v in self.kwargs.items()}

    def version(self) -> str:
        """``<probe VERSION>+<spec version>`` (imports the probe module)."""
        fn = self.resolve_run()
        module = sys.modules.get(getattr(fn, "__module__", ""), None)
        probe_version = getattr(module, "VERSION", "?")
        return f"{probe_version}+{self.spec_version}"


MEASUREMENTS: Registry[Measurement] = Registry("measurement")

_CLASSIFY = "repro.benchmarks.classify:run"
_COLS = "repro.measurements.columns"


def _add(m: Measurement) -> None:
    MEASUREMENTS.register(m.name, m)


_add(Measurement("imagenet", "imagenet_val", _CLASSIFY, f"{_COLS}:imagenet", "ImageNet val top-1 (50,000)",
                 columns=("top1_acc/imagenet",)))
_add(Measurement("imagenet_v2", "imagenet_v2", _CLASSIFY, f"{_COLS}:imagenet_v2",
                 "ImageNetV2 matched-frequency top-1 (10,000)", columns=("top1_acc/imagenet-v2",)))
_add(Measurement("imagenet_real", "imagenet_val", _CLASSIFY, f"{_COLS}:imagenet_real",
                 "ImageNet val top-1 against ReaL labels (standard; published variant: last batch, Q1)",
                 columns=("top1_acc/imagenet-real",)))
_add(Measurement("imagenet_a", "imagenet_a", _CLASSIFY, f"{_COLS}:imagenet_a",
                 "ImageNet-A top-1 over the 200 ImageNet-A classes (7,500)",
                 kwargs={"class_subset": Lazy("repro.datasets.class_subsets:IMAGENET_A_CLASSES")},
                 columns=("top1_acc/imagenet-a",)))
_add(Measurement("imagenet_r", "imagenet_r", _CLASSIFY, f"{_COLS}:imagenet_r",
                 "ImageNet-R top-1 over the 200 ImageNet-R classes (30,000)",
                 kwargs={"class_subset": Lazy("repro.datasets.class_subsets:IMAGENET_R_CLASSES")},
                 columns=("top1_acc/imagenet-r",)))
_add(Measurement("imagenet_sketch", "imagenet_sketch", _CLASSIFY, f"{_COLS}:imagenet_sketch",
                 "ImageNet-Sketch top-1 (50,889)", columns=("top1_acc/imagenet-sketch",)))
_add(Measurement("imagenet_c", "imagenet_c", "repro.benchmarks.multi:run_conditions", f"{_COLS}:imagenet_c",
                 "ImageNet-C top-1 per corruption x severity; published: mean over 19 corruptions (Q3)",
                 kwargs={"inner": _CLASSIFY}, columns=("top1_acc/imagenet-c",)))
_add(Measurement("imagenet_cbar", "imagenet_cbar", "repro.benchmarks.multi:run_conditions", f"{_COLS}:imagenet_cbar",
                 "ImageNet-C-bar top-1, mean over 10 corruptions x 5 severities",
                 kwargs={"inner": _CLASSIFY}, columns=("top1_acc/imagenet-cbar",)))
_add(Measurement("stylized", "stylized", "repro.benchmarks.stylized:run", f"{_COLS}:stylized",
                 "model-vs-human Stylized-ImageNet, 16-class decision accuracy (800)", columns=("top1_acc/stylized",)))
_add(Measurement("pgd_low", "imagenet_val", "repro.benchmarks.pgd:run", f"{_COLS}:pgd_low",
                 "ImageNet val under L-inf PGD-40, eps 0.5/255 (published: denominator 50,048, Q2)",
                 kwargs={"eps": 0.5 / 255, "steps": 40, "step_size": 2 / 255}, columns=("top1_acc/PGD-40/low",)))
_IMAGENET_1000 = "imagenet-1000class"  # top-1 over 1000 classes on ImageNet val (METHODS.md sections 2-3)
_SPECTRAL_CUTOFFS = ("0.01", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "0.99")
_add(Measurement("shape_bias", "cue_conflict", "repro.probes.shape_bias:run", f"{_COLS}:shape_bias",
                 "cue-conflict shape bias S / (S + T) (1,280 images, 80 dropped)", columns=("shape-bias",),
                 kind="probe", protocol="model-vs-human-16class"))
_add(Measurement("spectral", "imagenet_val", "repro.probes.spectral:run", f"{_COLS}:spectral",
                 "low-/high-pass filtered top-1 relative to clean (11 cut-offs each)",
                 columns=tuple(f"metric/bandpass/{k}/{c}" for k in ("LFC", "HFC")
                               for c in _SPECTRAL_CUTOFFS),
                 kind="probe", protocol=_IMAGENET_1000))
# noise="philox": the counter-based generator of probe VERSION 4 (issue 14); "pcg64" (VERSION 3's
# per-image NumPy streams) stays selectable by name (python -m repro probe --noise pcg64)
_add(Measurement("critical_band", "imagenet_val", "repro.probes.critical_band:run", f"{_COLS}:critical_band",
                 "critical band: noise thresholds per band, Gaussian fit (bw, cf, pns; _norm used by the paper)",
                 kwargs={"noise": "philox"},
                 columns=tuple(f"metric/criticalband/{k}" for k in ("bw_norm", "cf_norm", "pns_norm", "bw", "cf", "pns")),
                 kind="probe", protocol=_IMAGENET_1000))

# The critical band's original protocol (Subramanian et al. 2023; METHODS.md section 3): 16-class
# decisions (mean softmax per category, as shape bias) on their stimuli, splits 0-4, images as
# they are; columns of their own (repro.measurements.columns), never benchmark.csv's.
_P16 = "repro.probes.sixteen_class"
_SUBRAMANIAN = "subramanian2023-16class"
_CB16_KEYS = ("bw", "cf", "pns", "bw_norm", "cf_norm", "pns_norm")
_add(Measurement("critical_band_16", "graysplit", f"{_P16}:critical_band", f"{_COLS}:critical_band_16",
                 "critical band, original protocol: our 29-condition synthesis on GraySplit (1,050 images), "
                 "16-class decisions, absolute and _norm thresholds, the same fit",
                 columns=tuple(f"metric/criticalband-16class/{k}" for k in _CB16_KEYS),
                 kind="probe", variant_of="critical_band", protocol=_SUBRAMANIAN))
_add(Measurement("critical_band_16_premade", "cbmsplit", f"{_P16}:critical_band_premade",
                 f"{_COLS}:critical_band_16_premade",
                 "critical band, original protocol: the authors' pre-made CBMSplit stimuli (1,050, one (SD, band) "
                 "cell each, SD 0 pooled), 16-class decisions, the same thresholds and fit",
                 columns=tuple(f"metric/criticalband-16class-premade/{k}" for k in _CB16_KEYS),
                 kind="probe", variant_of="critical_band", protocol=_SUBRAMANIAN))
_add(Measurement("spectral_16", "graysplit", f"{_P16}:spectral", f"{_COLS}:spectral_16",
                 "spectral probe with 16-class decisions on GraySplit (clean + 22 filtered conditions)",
                 columns=tuple(f"metric/bandpass-16class/{k}/{c}" for k in ("LFC", "HFC") for c in _SPECTRAL_CUTOFFS),
                 kind="probe", variant_of="spectral", protocol=_SUBRAMANIAN))


def get(name: str) -> Measurement:
    return MEASUREMENTS.get(name)


def names() -> list[str]:
    return MEASUREMENTS.names()


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
    """The bias probes, by their command-line name (``shape-bias`` for ``shape_bias``), each as its
    default measurement (the study's protocol)."""
    return {name.replace("_", "-"): m for name, m in MEASUREMENTS.items() if m.kind == "probe" and not m.variant_of}


def probe_variants(probe: str) -> list[Measurement]:
    """The measurements of the probe ``probe`` (command-line name): its default, then its variants."""
    default = probes().get(probe)
    if default is None:
        from repro.base.errors import ConfigError

        raise ConfigError(f"unknown probe {probe!r} (known: {', '.join(probes())})")
    return [default] + [m for _, m in MEASUREMENTS.items() if m.variant_of == default.name]


def probe_datasets() -> list[str]:
    """Every dataset some probe measurement reads (the probe command's ``--stimuli`` choices)."""
    return list(dict.fromkeys(m.dataset for p in probes() for m in probe_variants(p)))


def probe_measurement(probe: str, dataset: str | None = None) -> Measurement:
    """The measurement of ``probe`` that reads ``dataset`` (None: the probe's default); a
    ConfigError names the datasets the probe reads."""
    variants = probe_variants(probe)
    if dataset is None:
        return variants[0]
    for m in variants:
        if m.dataset == dataset:
            return m
    from repro.base.errors import ConfigError

    raise ConfigError(f"probe {probe} does not read {dataset!r} stimuli (it reads: "
                      f"{', '.join(m.dataset for m in variants)})")


def configured_roots(datasets: Sequence[str], data_dir: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """``{dataset: root}`` for the datasets that have a root (``repro.datasets.roots.dataset_root``:
    configured, or -- for the datasets that lie in the data directory -- there, when the caller
    passes the data directory it resolved)."""
    # imported here: repro.datasets imports numpy, which building the probe command's parser must not
    from repro.datasets.roots import dataset_root

    out = {}
    for name in dict.fromkeys(datasets):
        root = dataset_root(name, data_dir)
        if root is not None:
            out[name] = str(root)
    return out


def split_configured(names: Sequence[str], measurement: Callable[[str], Measurement] = get,
                     data_dir: str | os.PathLike[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """(the measurements whose dataset has a root, {measurement: dataset} of the others)."""
    datasets = {n: measurement(n).dataset for n in names}
    roots = configured_roots(list(datasets.values()), data_dir)
    return [n for n in names if datasets[n] in roots], {n: d for n, d in datasets.items() if d not in roots}


def measurements_for_columns(columns: Sequence[str]) -> list[str]:
    """The registered measurements that produce any of these benchmark.csv columns."""
    wanted = set(columns)
    out = []
    for name in MEASUREMENTS.names():
        spec = MEASUREMENTS.get(name)
        cells = name == "imagenet_c" and any(c.startswith("top1_acc/") and c.rsplit("_", 1)[-1].isdigit()
                                             for c in wanted)
        if wanted & set(spec.columns) or cells:
            out.append(name)
    return out

"""Probe stage: which probe function measures which stimulus set, under which protocol, and
``measure`` (one model x one stimulus set -> ProbeResult), the call a measuring session makes.

Protocols (data, not branches):
- ``gavrikov2024-1000class`` (the default): top-1 over 1000 classes on ImageNet validation
  images (Resize 256 + CenterCrop 224), METHODS.md sections 2-3;
- ``model-vs-human-16class``: shape bias on the 1,280 cue-conflict images (224 px, as they are);
- ``subramanian2023-16class``: 16-class decisions on GraySplit (our noise) or on the pre-made
  CBMSplit stimuli (224 px, as they are; splits 0-4 by default), ``repro.probes.sixteen_class``.

No torch import at module level: listing the variants stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.errors import ConfigError
from repro.registry import resolve_lazy


@dataclass(frozen=True)
class ProbeVariant:
    """One (probe, stimulus set) pair: the run function and what its result is stored as."""

    probe: str  # CLI probe name: shape-bias | spectral | critical-band
    stimuli: str  # dataset (repro.datasets.specs) or stimulus set (critical_band_stimuli) name
    run: str  # lazy "module:function" with the probe signature (model, source, *, device, batch_size, seed, progress)
    measurement: str  # ProbeResult.measurement it returns
    protocol: str
    layout: str  # what the folder must look like (for messages)

    def resolve_run(self) -> Callable[..., Any]:
        return resolve_lazy(self.run)  # type: ignore[return-value]


_SIXTEEN = "repro.probes.sixteen_class"
VARIANTS: tuple[ProbeVariant, ...] = (
    ProbeVariant("shape-bias", "cue_conflict", "repro.probes.shape_bias:run", "shape_bias",
                 "model-vs-human-16class",
                 "the 1,280 model-vs-human cue-conflict images, <category>/<shape><n>-<texture><n>.png"),
    ProbeVariant("spectral", "imagenet_val", "repro.probes.spectral:run", "spectral", "gavrikov2024-1000class",
                 "ImageNet validation images in class folders, <wnid>/<image>.JPEG"),
    ProbeVariant("critical-band", "imagenet_val", "repro.probes.critical_band:run", "critical_band",
                 "gavrikov2024-1000class", "ImageNet validation images in class folders, <wnid>/<image>.JPEG"),
    ProbeVariant("critical-band", "graysplit", f"{_SIXTEEN}:critical_band", "critical_band_16",
                 "subramanian2023-16class", "GraySplit, <split>/<i>_color_gray_g_<category>.JPEG"),
    ProbeVariant("critical-band", "cbmsplit", f"{_SIXTEEN}:critical_band_premade", "critical_band_16_premade",
                 "subramanian2023-16class", "CBMSplit, <split>/<i>_cbm_noise<sd>_freq<band>_gray_g_<category>.JPEG"),
    ProbeVariant("spectral", "graysplit", f"{_SIXTEEN}:spectral", "spectral_16",
                 "subramanian2023-16class", "GraySplit, <split>/<i>_color_gray_g_<category>.JPEG"),
)
STIMULUS_SET_NAMES = ("graysplit", "cbmsplit")  # read by repro.datasets.critical_band_stimuli


def probes() -> list[str]:
    return list(dict.fromkeys(v.probe for v in VARIANTS))


def default_variant(probe: str) -> ProbeVariant:
    """The probe's study protocol (the first variant listed for it)."""
    for v in VARIANTS:
        if v.probe == probe:
            return v
    raise ConfigError(f"unknown probe {probe!r} (known: {', '.join(probes())})")


def variant(probe: str, stimuli: str) -> ProbeVariant:
    """The variant of ``probe`` on ``stimuli``; ConfigError listing the sets the probe reads."""
    default_variant(probe)
    for v in VARIANTS:
        if v.probe == probe and v.stimuli == stimuli:
            return v
    known = ", ".join(v.stimuli for v in VARIANTS if v.probe == probe)
    raise ConfigError(f"probe {probe} does not read {stimuli!r} stimuli (it reads: {known})")


def resolve_stimuli(probe: str, folder: str | Path, stimuli: str = "auto") -> ProbeVariant:
    """The variant for ``folder``: ``stimuli`` when given, else detected from the layout (split
    folders with GraySplit or CBMSplit file names), else the probe's study dataset."""
    if stimuli != "auto":
        return variant(probe, stimuli)
    from repro.datasets.critical_band_stimuli import detect

    found = detect(folder)
    return variant(probe, found) if found else default_variant(probe)


def open_stimuli(v: ProbeVariant, folder: str | Path | None, *, splits: Sequence[str] | None = None,
                 cache: bool = False) -> Any:
    """The ImageSource of ``folder`` for variant ``v`` (validated; errors name the file)."""
    from repro.errors import DataError

    if v.stimuli in STIMULUS_SET_NAMES:
        from repro.datasets.critical_band_stimuli import PROBE_SPLITS, open_stimulus_set

        return open_stimulus_set(v.stimuli, folder, splits=tuple(splits) if splits else PROBE_SPLITS, cache=cache)
    if splits:
        raise ConfigError(f"splits apply to GraySplit/CBMSplit only, not to {v.stimuli}")
    from repro.datasets import open_dataset

    try:
        return open_dataset(v.stimuli, folder, cache=cache)
    except DataError as exc:
        raise DataError(f"probe {v.probe} cannot use {folder}: {exc}") from None


def measure(model: Any, probe: str, stimuli: str, *, root: str | Path | None = None,
            splits: Sequence[str] | None = None, device: str = "cpu", batch_size: int = 16, seed: int = 0,
            progress: Callable[[int], None] | None = None, cache: bool = False) -> Any:
    """Measure one model (a zoo name or a loaded, normalizing nn.Module) on one stimulus set with
    ``probe``; returns the probe's ProbeResult (measurement name per ``VARIANTS``).

    ``root``: the set's folder (default: the configured root; GraySplit/CBMSplit default to the
    data directory). ``batch_size`` 16: on 2 CPU cores it is faster than 64 for EfficientNet-Lite.
    """
    v = variant(probe, stimuli)
    source = open_stimuli(v, root, splits=splits, cache=cache)
    if isinstance(model, str):
        from repro.zoo import load_model

        model = load_model(model, device=device)
    return v.resolve_run()(model, source, device=device, batch_size=batch_size, seed=seed, progress=progress)

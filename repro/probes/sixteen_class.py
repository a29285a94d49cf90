"""Probe stage, the 16-class protocol of Subramanian et al. 2023 (the critical band's origin),
a named variant next to the study's 1000-class ImageNet-val protocol (which stays the default).

The decision is the shape-bias probe's: softmax over the 1000 logits (float32), then the
MEAN probability over each of the 16 model-vs-human categories' ImageNet classes
(``repro.datasets.categories16``), argmax (ties to the first category). Labels are category
indices (``repro.datasets.specs.CATEGORIES16``), as the GraySplit/CBMSplit readers give them.
Images go in as they are (224 px, no resize); the model normalizes inside (its zoo spec).

- ``critical_band``: the 29 conditions of ``repro.probes.critical_band`` synthesised by our
  code (grayscale, contrast 0.2, band-limited noise, seeded per image and condition) on
  GraySplit; thresholds absolute and ``_norm`` and the same Gaussian fit; one record per
  (image, condition), so that the cells can be compared image by image with the pre-made ones.
- ``critical_band_matched``: our synthesis of ONE named condition per image (e.g. the condition
  of the CBMSplit file the authors made from it): the same stimuli as ``critical_band``'s for
  those (image, condition) pairs (the noise is keyed by seed, image and condition alone), at
  1/29 of the cost; for the paired comparison with the pre-made stimuli.
- ``critical_band_premade``: the same 5 x 7 grid from the authors' pre-made CBMSplit stimuli,
  classified as they are; each file is one (SD, band) cell, read from its name; the SD-0 files
  of all bands pool into ``sd=0``. About 30 images per cell over splits 0-4.
- ``spectral``: the spectral probe's clean + 22 filtered conditions with 16-class decisions.

Each returns the usual ProbeResult (conditions named as the 1000-class probes name them),
under its own measurement name, so a store never mixes the two protocols.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import torch

from repro.base.errors import DataError
from repro.base.results import ConditionCount, ProbeResult
from repro.datasets.base import ImageBatch, ImageSource
from repro.datasets.categories16 import CategoryMapping, get_mapping
from repro.scoring.critical_band import CLEAN, condition_name, score_16

from . import critical_band as cb
from . import spectral as sp
from ._common import iter_batches, resolve_device, to_unit_float

OWN_VERSION = "2"  # the 16-class decision and the grids' bookkeeping; 2: the synthesised grid keeps per-image records
# what a stored 16-class record depends on (``repro.measurements`` reads it): this module and the
# noise synthesis / spectral filters it reuses, so a change of either makes stored records stale
VERSION = f"16c{OWN_VERSION}.cb{cb.VERSION}.sp{sp.VERSION}"
PROTOCOL = "subramanian2023-16class"
CRITICAL_BAND = "critical_band_16"
CRITICAL_BAND_PREMADE = "critical_band_16_premade"
SPECTRAL = "spectral_16"


def _mapping(mapping: CategoryMapping | str | None) -> CategoryMapping:
    if mapping is None:
        return get_mapping()
    return get_mapping(mapping) if isinstance(mapping, str) else mapping


def _prepare(model: torch.nn.Module, device: str | torch.device,
             mapping: CategoryMapping | str | None) -> tuple[torch.nn.Module, torch.device, CategoryMapping]:
    """What every 16-class probe does first: the model on its device in eval mode, the device, the
    category mapping."""
    dev = resolve_device(device)
    return model.to(dev).eval(), dev, _mapping(mapping)


@torch.no_grad()
def decide(logits: torch.Tensor, mapping: CategoryMapping) -> np.ndarray:
    """Category indices (N,) from (N, 1000) logits: float32 softmax, mean per category, argmax
    (exactly the shape-bias probe's ``decision_from_probabilities``)."""
    if logits.ndim != 2 or logits.shape[1] != 1000:
        raise ValueError(f"model must return (N, 1000) logits, got {tuple(logits.shape)}")
    probs = torch.softmax(logits.float(), dim=1).cpu().numpy()
    return np.argmax(mapping.category_scores(probs), axis=1)


def _labels(batch: ImageBatch, source: ImageSource, n_categories: int) -> np.ndarray:
    labels = np.asarray(batch.labels, dtype=np.int64)
    bad = [n for n, y in zip(batch.names, labels, strict=True) if not 0 <= y < n_categories]
    if bad:
        raise DataError(f"{source.name}: items without a 16-class label (0..{n_categories - 1}), e.g. {bad[:3]}; "
                        "the 16-class protocol reads GraySplit/CBMSplit (labels from the file names)")
    return labels


class _Tally16:
    """Correct 16-class decisions per condition, in insertion order."""

    def __init__(self, names: list[str], mapping: CategoryMapping):
        self.mapping = mapping
        self.k = dict.fromkeys(names, 0)
        self.n = dict.fromkeys(names, 0)

    def add(self, name: str, logits: torch.Tensor, labels: np.ndarray) -> np.ndarray:
        decisions = decide(logits, self.mapping)
        self.k[name] += int((decisions == labels).sum())
        self.n[name] += int(labels.shape[0])
        return decisions

    def counts(self) -> list[ConditionCount]:
        return [ConditionCount(name, self.k[name], self.n[name]) for name in self.k]


def critical_band(
    model: torch.nn.Module,
    source: ImageSource,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    mapping: CategoryMapping | str | None = None,
) -> ProbeResult:
    """16-class correct counts in the 29 critical-band conditions synthesised by our code on
    ``source`` (GraySplit), plus thresholds and fits (absolute and ``_norm``)."""
    model, dev, m = _prepare(model, device, mapping)
    tally = _Tally16([name for name, _, _ in cb.conditions()], m)
    records: list[dict[str, object]] = []
    with torch.no_grad():
        for batch in iter_batches(source, batch_size, progress):
            labels = _labels(batch, source, len(m.categories))
            images = torch.from_numpy(np.ascontiguousarray(batch.images))
            for cond, x in cb.stimuli(images, batch.names, seed, dev, reuse=True):
                decisions = tally.add(cond, model(x), labels)
                records += _records(batch.names, cond, labels, decisions, m)
    return _synthesised_result(CRITICAL_BAND, seed, tally, records)


def _synthesised_result(measurement: str, seed: int, tally: _Tally16, records: list[dict[str, object]]) -> ProbeResult:
    """The result of a probe on our synthesis: counts, per-image records, thresholds and fits."""
    result = ProbeResult(measurement, f"{cb.VERSION}.16c{OWN_VERSION}", int(seed), tally.counts(), records=records)
    return score_16(result)


def _records(names: list[str], condition: str, labels: np.ndarray, decisions: np.ndarray,
             m: CategoryMapping) -> list[dict[str, object]]:
    """One record per image of a synthesised condition (name, condition, category, decision)."""
    return [{"imagename": n, "condition": condition, "category": m.categories[y], "object_response": m.categories[d]}
            for n, y, d in zip(names, labels.tolist(), decisions.tolist(), strict=True)]


def _one_condition(images: torch.Tensor, names: list[str], condition: str, seed: int,
                   dev: torch.device) -> torch.Tensor:
    """Our stimuli of ``condition`` for uint8 RGB ``images``: exactly what ``cb.stimuli`` yields
    for that condition (float32 synthesis, the Philox field of (seed, image, condition))."""
    from . import noise as nz

    spec = {name: (band, sd) for name, band, sd in cb.conditions()}
    if condition not in spec:
        raise ValueError(f"unknown critical-band condition {condition!r}")
    band, sd = spec[condition]
    base = nz.reduce_contrast(nz.grayscale(images.to(dev)), dtype=torch.float32)
    if band is None:
        return nz.model_input(base)
    shape = (int(base.shape[-2]), int(base.shape[-1]))
    gen, white = nz.PhiloxNoise(seed, names, [condition], shape, dev).condition(condition)
    return nz.model_input(nz.noisy_images(base, band, [sd], [white], [gen])[0])


def critical_band_matched(
    model: torch.nn.Module,
    source: ImageSource,
    conditions: Mapping[str, str],
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    mapping: CategoryMapping | str | None = None,
) -> ProbeResult:
    """16-class decisions on our synthesis of one condition per image: ``conditions`` maps each
    item name of ``source`` (GraySplit) to a condition name (``sd=0`` or ``f=<band>/sd=<sd>``);
    items it does not name are skipped. Counts per condition (in ``cb.conditions()`` order) and
    one record per image, as ``critical_band`` gives for those pairs. Images of one condition are
    forwarded together (batches of up to ``batch_size``)."""
    known = {name for name, _, _ in cb.conditions()}
    bad = sorted(set(conditions.values()) - known)
    if bad:
        raise ValueError(f"unknown critical-band conditions {bad[:3]} (known: sd=0, f=<band>/sd=<sd>)")
    model, dev, m = _prepare(model, device, mapping)
    tally = _Tally16([name for name, _, _ in cb.conditions()], m)
    records: list[dict[str, object]] = []
    pending: dict[str, tuple[list[torch.Tensor], list[str], list[int]]] = {}

    def flush(cond: str) -> None:
        xs, names, ys = pending.pop(cond)
        labels = np.asarray(ys, dtype=np.int64)
        x = _one_condition(torch.cat(xs), names, cond, seed, dev)
        records.extend(_records(names, cond, labels, tally.add(cond, model(x), labels), m))

    with torch.no_grad():
        for batch in iter_batches(source, batch_size, progress):
            labels = _labels(batch, source, len(m.categories))
            images = torch.from_numpy(np.ascontiguousarray(batch.images))
            for i, name in enumerate(batch.names):
                cond = conditions.get(name)
                if cond is None:
                    continue
                xs, names, ys = pending.setdefault(cond, ([], [], []))
                xs.append(images[i : i + 1])
                names.append(name)
                ys.append(int(labels[i]))
                if len(names) >= batch_size:
                    flush(cond)
        for cond in list(pending):
            flush(cond)
    missing = sorted(set(conditions) - {str(r["imagename"]) for r in records})
    if missing:
        raise DataError(f"{source.name}: {len(missing)} named item(s) not in the source, e.g. {missing[:3]}")
    return _synthesised_result(CRITICAL_BAND + "_matched", seed, tally, records)


def premade_condition(name: str) -> tuple[str, float, int]:
    """(condition, SD, band) of a pre-made CBMSplit stimulus, the condition named as the
    1000-class probe names it: ``sd=0`` for every SD-0 file (whatever its band), else
    ``f=<band>/sd=<sd>``."""
    from repro.datasets.critical_band_stimuli import cbm_condition

    sd, band = cbm_condition(name)
    return (CLEAN if sd == 0 else condition_name(band, sd)), sd, band


def critical_band_premade(
    model: torch.nn.Module,
    source: ImageSource,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    mapping: CategoryMapping | str | None = None,
) -> ProbeResult:
    """16-class correct counts per (SD, band) cell of the pre-made CBMSplit stimuli, classified
    as they are, plus thresholds and fits. Deterministic (no noise is drawn here: the result
    records seed None). ``records``: one row per image (name, condition, band, SD, category,
    decision), for comparisons image by image."""
    model, dev, m = _prepare(model, device, mapping)
    names = [name for name, _, _ in cb.conditions()]
    k = dict.fromkeys(names, 0)
    n = dict.fromkeys(names, 0)
    records: list[dict[str, object]] = []
    with torch.no_grad():
        for batch in iter_batches(source, batch_size, progress):
            labels = _labels(batch, source, len(m.categories))
            decisions = decide(model(to_unit_float(batch.images, dev)), m)
            for name, label, decision in zip(batch.names, labels.tolist(), decisions.tolist(), strict=True):
                cond, sd, band = premade_condition(name)
                k[cond] += int(decision == label)
                n[cond] += 1
                records.append({"imagename": name, "condition": cond, "band": band, "sd": sd,
                                "category": m.categories[label], "object_response": m.categories[decision]})
    counts = [ConditionCount(c, k[c], n[c]) for c in names]
    result = ProbeResult(CRITICAL_BAND_PREMADE, f"16c{OWN_VERSION}", None, counts, records=records)
    return score_16(result)


def spectral(
    model: torch.nn.Module,
    source: ImageSource,
    *,
    device: str | torch.device = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    mapping: CategoryMapping | str | None = None,
) -> ProbeResult:
    """16-class correct counts on clean and the 22 low-/high-pass conditions of the spectral
    probe on ``source`` (GraySplit), the LFC/HFC ratios and the low-/high-frequency biases.
    Deterministic (seed None)."""
    from repro.scoring import spectral as scoring

    model, dev, m = _prepare(model, device, mapping)
    tally = _Tally16(["clean"] + [name for name, _, _ in scoring.conditions()], m)
    with torch.no_grad():
        for batch in iter_batches(source, batch_size, progress):
            labels = _labels(batch, source, len(m.categories))
            x = to_unit_float(batch.images, dev)
            tally.add("clean", model(x), labels)
            for name, xf in sp.filtered(x, reuse=True):
                tally.add(name, model(xf), labels)
    return scoring.score(ProbeResult(SPECTRAL, f"{sp.VERSION}.16c{OWN_VERSION}", None, tally.counts()))

"""Measurements, the probe loop (torch): the one loop that runs any registered measurement.

THE one loop that runs any measurement of the registry on a model (``run``), through ``Probe``,
one measurement bound to one model, fed batch by batch.

Per batch, the measurement's decision rule reads the labels (``rule.labels``: validated, one-line
errors naming the source), its stimulus maker turns the batch into (condition, stimulus) pairs
(none: the images as they are, in [0, 1]), each stimulus goes through the model once and its logits
to the rule (``rule.add``: decisions, counts per condition, per-item records). After the last
batch the counts and records become a ``ProbeResult`` (named after the measurement, its version the
maker's and the rule's joined, its seed where the measurement uses one) and the scorer adds the
values. The registry's lazy references name the pieces:

* ``stimuli.make``: ``make(**params) -> (version, stimuli)``, parameters validated once;
  ``stimuli(batch, part, *, model, labels, device)`` yields the pairs (``part``: the batch's part
  of a multi-part dataset, else None; ``model`` and ``labels``: for an attack);
* ``decision``: a class ``Rule(source, model, **params)`` with ``version``, ``labels(batch)``,
  ``add(condition, batch, labels, logits) -> decisions`` (NumPy, one per image), ``counts()`` and
  ``records``;
* ``score``: ``score(result, params) -> result``, pure (``repro.scoring``).

``params`` are the measurement's keyword arguments with the caller's overrides, plus ``seed``,
``batch_size`` and ``conditions`` (what the rule counts, in order); each piece takes the ones it
names. The model runs in eval mode with its parameters frozen (an attack differentiates the input
only) and without gradients (an attack enables them for itself); both are restored afterwards.

A batch source is any iterable of (part, batch) pairs (``batches``: the source's own batches, or
one part after another). A sweep that decodes each batch once can feed it to several ``Probe`` s,
one per model (``step``), and, where the stimuli do not depend on the model (every maker but the
attack's), make them once and hand each pair to every probe (``take``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import torch

from repro.base.errors import ConfigError, DataError, ReproError
from repro.base.registry import resolve_lazy
from repro.base.results import ProbeResult
from repro.datasets.base import ImageBatch, ImageSource
from repro.measurements.registry import CRITICAL_BAND_MATCHED, Measurement, get
from repro.probes._common import resolve_device, to_unit_float

Observer = Callable[[Any, ImageBatch, torch.Tensor, np.ndarray], None]


def condition_sources(source: Any) -> Mapping[str, ImageSource]:
    """``{condition: ImageSource}`` of a multi-condition dataset.

    The conditions are the ``parts`` of a ``repro.datasets`` ``ConcatSource``, its ``subsets()``,
    or its ``conditions()`` + ``subset(name)``."""
    if isinstance(getattr(source, "parts", None), Mapping):
        return dict(source.parts)
    if hasattr(source, "subsets"):
        return dict(source.subsets())
    if hasattr(source, "conditions") and hasattr(source, "subset"):
        return {name: source.subset(name) for name in source.conditions()}
    raise ReproError(
        f"dataset {getattr(source, 'name', source)!r} has no conditions "
        "(expected subsets() or conditions()/subset(name))"
    )


def _check_batch_size(batch_size: int) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ConfigError(f"batch_size: expected a positive integer, got {batch_size}")


def batches(
    source: ImageSource, batch_size: int, parts: Mapping[str, ImageSource] | None = None
) -> Iterator[tuple[str | None, ImageBatch]]:
    """(part, batch) pairs: the source's batches (part None), or each part's after the other's.

    A batch never spans two parts; a part's item list is released once it is read."""
    _check_batch_size(batch_size)
    if parts is None:
        for batch in source.batches(batch_size):
            yield None, batch
        return
    for name, part in parts.items():
        for batch in part.batches(batch_size):
            yield name, batch
        release = getattr(part, "release", None)
        if release is not None:
            release()


def by_condition(
    source: ImageSource, conditions: Mapping[str, str], batch_size: int
) -> Iterator[tuple[str, ImageBatch]]:
    """The items of ``source`` that ``conditions`` names, regrouped by their condition.

    A batch of up to ``batch_size`` items of one condition comes as soon as it is full, the rest at
    the end (so the images of a condition go through the model together, whatever the source's
    order)."""
    _check_batch_size(batch_size)
    pending: dict[str, list[tuple[np.ndarray, int, str]]] = {}

    def flush(cond: str) -> tuple[str, ImageBatch]:
        items = pending.pop(cond)
        return cond, ImageBatch(
            np.concatenate([x for x, _, _ in items]),
            np.asarray([y for _, y, _ in items], dtype=np.int64),
            [n for _, _, n in items],
        )

    for batch in source.batches(batch_size):
        for i, name in enumerate(batch.names):
            cond = conditions.get(name)
            if cond is None:
                continue
            pending.setdefault(cond, []).append(
                (batch.images[i : i + 1], int(batch.labels[i]), name)
            )
            if len(pending[cond]) >= batch_size:
                yield flush(cond)
    for cond in list(pending):
        yield flush(cond)


def _as_is(
    batch: ImageBatch, part: str | None, *, device: torch.device, **_: Any
) -> Iterator[tuple[Any, torch.Tensor]]:
    yield part, to_unit_float(batch.images, device)


def _accepted(fn: Any) -> set[str]:
    target = fn.__init__ if inspect.isclass(fn) else fn
    return {
        p.name for p in inspect.signature(target).parameters.values() if p.kind is p.KEYWORD_ONLY
    }


class Probe:
    """One measurement bound to one model (and the source it reads, for its messages and parts)."""

    def __init__(
        self,
        measurement: Measurement,
        model: Any,
        source: ImageSource,
        *,
        device: Any = "cpu",
        batch_size: int = 64,
        seed: int | None = None,
        observe: Observer | None = None,
        **overrides: Any,
    ):
        m = measurement
        self.m, self.model, self.observe = m, model, observe
        self.seed = m.seed if seed is None else int(seed)
        self.device = resolve_device(device)
        self.parts = condition_sources(source) if m.stimuli.by_part and source is not None else None
        given = {**m.resolve_kwargs(), **overrides}
        make = resolve_lazy(m.stimuli.make) if m.stimuli.make else None
        rule = resolve_lazy(m.decision)
        score = resolve_lazy(m.score) if m.score else None
        unknown = sorted(
            set(given) - set().union(*(_accepted(f) for f in (make, rule, score) if f is not None))
        )
        if unknown:
            raise ConfigError(f"{m.name}: unknown parameter(s) {', '.join(unknown)}")
        self.params = {
            **given,
            "seed": self.seed,
            "batch_size": batch_size,
            "conditions": m.conditions() or tuple(self.parts or ()),
        }
        version, self.stimuli = make(**self.params) if make is not None else ("", _as_is)  # type: ignore[operator]
        self.rule = rule(source, model, **self.params)  # type: ignore[operator]
        self.version = ".".join(v for v in (version, self.rule.version) if v)
        self.score = score

    def __enter__(self) -> Probe:
        self.model = self.model.to(self.device)
        self._training = self.model.training
        self._flags = [(p, p.requires_grad) for p in self.model.parameters()]
        self.model.eval()
        for p, _ in self._flags:
            p.requires_grad_(False)
        if self.m.seeded:
            torch.manual_seed(self.seed)
        self._no_grad = torch.no_grad()
        self._no_grad.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._no_grad.__exit__(*exc)
        for p, flag in self._flags:
            p.requires_grad_(flag)
        self.model.train(self._training)

    def batches(self, source: ImageSource) -> Iterator[tuple[str | None, ImageBatch]]:
        return batches(source, self.params["batch_size"], self.parts)

    def step(self, batch: ImageBatch, part: str | None = None) -> None:
        """Every stimulus of one batch through the model, each one's logits to the rule."""
        labels = self.rule.labels(batch)
        for condition, x in self.stimuli(
            batch, part, model=self.model, labels=labels, device=self.device
        ):
            self.take(condition, batch, labels, x)

    def take(self, condition: Any, batch: ImageBatch, labels: Any, x: torch.Tensor) -> np.ndarray:
        logits = self.model(x)
        decisions = self.rule.add(condition, batch, labels, logits)
        if self.observe is not None:
            self.observe(condition, batch, logits, decisions)
        return decisions

    def result(self) -> ProbeResult:
        result = ProbeResult(
            self.m.name,
            self.version,
            self.seed if self.m.seeded else None,
            self.rule.counts(),
            records=self.rule.records,
        )
        return self.score(result, self.params) if self.score is not None else result


def run(
    measurement: str | Measurement,
    model: Any,
    source: ImageSource,
    *,
    device: Any = "cpu",
    batch_size: int = 64,
    seed: int | None = None,
    progress: Callable[[int], Any] | None = None,
    observe: Observer | None = None,
    batch_source: Iterable[tuple[Any, ImageBatch]] | None = None,
    **overrides: Any,
) -> ProbeResult:
    """Run ``measurement`` (a registered name or a ``Measurement``) on ``model`` over ``source``.

    ``model`` takes [0, 1] input and normalizes inside. ``progress`` gets the running number of
    images done, ``observe`` every pass (condition, batch, logits, decisions); ``batch_source``
    replaces the source's own batches; ``overrides`` replace the measurement's keyword arguments.
    A measurement with its own ``run`` function (an Environment's) is handed to it."""
    m = get(measurement) if isinstance(measurement, str) else measurement
    if m.run:
        return resolve_lazy(m.run)(
            model,
            source,
            device=device,
            batch_size=batch_size,  # type: ignore[operator]
            seed=m.seed if seed is None else seed,
            progress=progress,
            **{**m.resolve_kwargs(), **overrides},
        )
    probe = Probe(
        m,
        model,
        source,
        device=device,
        batch_size=batch_size,
        seed=seed,
        observe=observe,
        **overrides,
    )
    done = 0
    with probe:
        for part, batch in probe.batches(source) if batch_source is None else batch_source:
            probe.step(batch, part)
            done += len(batch.images)
            if progress is not None:
                progress(done)
    return probe.result()


def run_matched(
    model: Any,
    source: ImageSource,
    conditions: Mapping[str, str],
    *,
    device: Any = "cpu",
    batch_size: int = 64,
    seed: int = 0,
    progress: Callable[[int], Any] | None = None,
) -> ProbeResult:
    """16-class decisions on our synthesis of ONE named condition per image.

    ``CRITICAL_BAND_MATCHED``: ``conditions`` maps item names of ``source`` (GraySplit) to a
    condition (``sd=0`` or ``f=<band>/sd=<sd>``, e.g. that of the CBMSplit file the authors made
    from it); items it does not name are skipped. The same stimuli as ``critical_band_16``'s for
    those pairs (the noise is keyed by seed, image and condition alone) at 1/29 of the cost, the
    images of one condition through the model together; counts in the 29 conditions' order and one
    record per image."""
    known = set(CRITICAL_BAND_MATCHED.conditions())
    bad = sorted(set(conditions.values()) - known)
    if bad:
        raise ValueError(
            f"unknown critical-band conditions {bad[:3]} (known: sd=0, f=<band>/sd=<sd>)"
        )
    result = run(
        CRITICAL_BAND_MATCHED,
        model,
        source,
        device=device,
        batch_size=batch_size,
        seed=seed,
        progress=progress,
        batch_source=by_condition(source, conditions, batch_size),
    )
    missing = sorted(set(conditions) - {str(r["imagename"]) for r in result.records})
    if missing:
        raise DataError(
            f"{source.name}: {len(missing)} named item(s) not in the source, e.g. {missing[:3]}"
        )
    return result

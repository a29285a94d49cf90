"""Benchmark, multi-condition datasets: run one probe over every condition of a dataset that is
a family of sources (ImageNet-C ``<corruption>/<severity>``, ImageNet-C-bar).

The dataset object offers its conditions as ``parts`` (``{condition: ImageSource}``, the
``ConcatSource`` of ``repro.datasets``), ``subsets()`` or ``conditions()`` + ``subset(name)``. Each condition's counts are pooled into one
``ConditionCount`` named after the condition; per-item records are not kept (95 x 50,000
predictions per model would dwarf the rest of the store). ``progress`` gets the running number of
images over all conditions (a condition's probe counts from 0 again; its count is offset by the
images of the conditions before it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from repro.base.errors import ReproError
from repro.base.registry import resolve_lazy
from repro.base.results import ConditionCount, ProbeResult, top1_count


def condition_sources(source: Any) -> Mapping[str, Any]:
    """``{condition: ImageSource}`` of a multi-condition dataset (see the module docstring)."""
    if isinstance(getattr(source, "parts", None), Mapping):  # repro.datasets ConcatSource
        return dict(source.parts)
    if hasattr(source, "subsets"):
        return dict(source.subsets())
    if hasattr(source, "conditions") and hasattr(source, "subset"):
        return {name: source.subset(name) for name in source.conditions()}
    raise ReproError(f"dataset {getattr(source, 'name', source)!r} has no conditions "
                     "(expected subsets() or conditions()/subset(name))")


def run_conditions(model: Any, source: Any, *, inner: str, device: str = "cpu", batch_size: int = 64, seed: int = 0,
                   progress: Callable[[int], None] | None = None, **kwargs: Any) -> ProbeResult:
    run: Callable[..., ProbeResult] = resolve_lazy(inner)  # type: ignore[assignment]
    conditions: list[ConditionCount] = []
    version = None
    before = 0  # images of the conditions done: ``progress`` gets one running count over all of them
    for name, sub in condition_sources(source).items():
        seen = [0]

        def report(n: int, base: int = before, seen: list[int] = seen) -> None:
            seen[0] = n
            progress(base + n)  # type: ignore[misc]  # only passed when progress is set

        r = run(model, sub, device=device, batch_size=batch_size, seed=seed,
                progress=report if progress is not None else None, **kwargs)
        before += seen[0]
        version = r.version
        k, n = top1_count(r)
        conditions.append(ConditionCount(name, k, n))
    return ProbeResult(measurement="conditions", version=version or "?", seed=seed, conditions=conditions)

"""Benchmark, Stylized-ImageNet (model work): 16-class decisions on model-vs-human's
stylized images, correct when the decision is the image's category (``top1_acc/stylized``).

Same decision rule as the shape-bias probe (softmax over 1000 classes, mean probability per
16-class category, argmax; ``repro.scoring.shape_bias.decision_from_probabilities``), but
scored against the label (the category index of ``repro.datasets.specs.CATEGORIES16``),
since stylized file names carry no texture class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from repro.base.errors import DataError
from repro.base.results import ConditionCount, ProbeResult

VERSION = "1"
MEASUREMENT = "stylized"


def run(model: Any, source: Any, *, device: str = "cpu", batch_size: int = 64, seed: int = 0,
        progress: Callable[[int], Any] | None = None) -> ProbeResult:
    import torch

    from repro.datasets.categories16 import get_mapping
    from repro.scoring.shape_bias import decision_from_probabilities

    mapping = get_mapping()
    categories = list(mapping.categories)
    model = model.eval().to(device)
    records: list[dict[str, Any]] = []
    k = 0
    with torch.inference_mode():
        for batch in source.batches(batch_size):
            x = torch.from_numpy(batch.images).to(device).float().div_(255.0)
            probs = torch.softmax(model(x).float(), dim=1).cpu().numpy()
            decisions = decision_from_probabilities(probs, mapping)
            for name, label, decision in zip(batch.names, batch.labels.tolist(), decisions, strict=True):
                if not 0 <= label < len(categories):
                    raise DataError(f"{source.name}: image {name}: label {label} is not a 16-class index "
                                    f"(0..{len(categories) - 1})")
                category = categories[label]
                k += decision == category
                records.append({"file_name": name, "category": category, "decision": decision})
            if progress is not None:
                progress(len(records))
    return ProbeResult(MEASUREMENT, VERSION, None, [ConditionCount("top1", int(k), len(records))],
                       value=100.0 * k / len(records) if records else None, records=records)

"""Golden logits for the REAL weights (marker ``full``; skipped with a reason when absent).

Two checks per model whose weights are in ``weights_dir()``:
1. against recorded golden logits (``golden_logits.json`` beside this file, written by
   ``python -m tests.full.test_golden_logits --record [NAME ...]`` on a machine with the
   verified weights; the record keeps the weights file's sha256, so a different file fails
   loudly instead of comparing against the wrong numbers), at rtol 1e-3 / atol 1e-4;
2. for timm and torchvision models, against the library's own loading of the same file
   (needs no record).
The input is a deterministic 2-image 224 px pattern (pure arithmetic, no RNG, no dataset).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from repro.zoo import cache_status, specs

pytestmark = pytest.mark.full

GOLDEN = Path(__file__).with_name("golden_logits.json")
RECORD_HINT = "python -m tests.full.test_golden_logits --record {name}"
REAL = [s for s in specs(include_config=False) if s.source != "random"]
RTOL, ATOL = 1e-3, 1e-4


def golden_input():
    """Two 224x224 RGB images in [0, 1]: smooth sinusoid gratings of different frequencies."""
    import torch

    i = torch.arange(224, dtype=torch.float64).view(224, 1)
    j = torch.arange(224, dtype=torch.float64).view(1, 224)
    images = []
    for k, (fy, fx) in enumerate([(3.0, 5.0), (11.0, 2.0)]):
        chans = [
            0.5 + 0.5 * torch.sin(2 * math.pi * (fy * i + fx * j) / 224 + c + k) for c in range(3)
        ]
        images.append(torch.stack(chans))
    return torch.stack(images).float()


def _weights_or_skip(spec):
    from repro.base.settings import weights_dir

    status = cache_status(spec, weights_dir())
    if status not in ("yes", "local"):
        where = weights_dir() / spec.name
        pytest.skip(
            f"weights of {spec.name} not present (expected under {where}, or a [models] entry "
            "in repro.toml); download them with repro.zoo.load_model on a machine with network"
        )


def _logits(model):
    import torch

    with torch.no_grad():
        return model(golden_input())


def _golden() -> dict:
    return json.loads(GOLDEN.read_text()) if GOLDEN.is_file() else {}


@pytest.mark.parametrize("spec", REAL, ids=[s.name for s in REAL])
def test_recorded_golden_logits(spec, torch_threads):
    _weights_or_skip(spec)
    record = _golden().get(spec.name)
    if record is None:
        pytest.skip(
            f"no golden logits recorded for {spec.name} in {GOLDEN.name}: run "
            f"`{RECORD_HINT.format(name=spec.name)}`"
        )
    import torch

    from repro.zoo import load_model
    from repro.zoo.fetch import sha256_of

    model = load_model(spec.name)
    shas = {role: sha256_of(path) for role, path in model.weight_files.items()}
    assert shas == record["sha256"], (
        f"{spec.name}: weights differ from the ones the golden logits were recorded with"
    )
    got = _logits(model)
    torch.testing.assert_close(
        got[:, : len(record["logits"][0])], torch.tensor(record["logits"]), rtol=RTOL, atol=ATOL
    )
    assert got.topk(5, dim=1).indices.tolist() == record["top5"]


@pytest.mark.parametrize(
    "spec",
    [s for s in REAL if s.source in ("timm", "torchvision")],
    ids=[s.name for s in REAL if s.source in ("timm", "torchvision")],
)
def test_same_logits_as_the_library_loading_the_same_file(spec, torch_threads):
    _weights_or_skip(spec)
    import torch

    from repro.zoo import load_model

    ours = load_model(spec.name)
    path = ours.weight_files["checkpoint"]
    if spec.source == "timm":
        import timm

        ref = timm.create_model(
            spec.reference, pretrained=True, pretrained_cfg_overlay={"file": str(path)}
        )
    else:
        import torchvision

        ref = torchvision.models.resnet50(weights=None)
        ref.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    ref.eval()
    mean = torch.tensor(spec.normalization.mean).view(1, 3, 1, 1)
    std = torch.tensor(spec.normalization.std).view(1, 3, 1, 1)
    x = golden_input()
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref((x - mean) / std), rtol=RTOL, atol=ATOL)


def record(names: list[str]) -> None:
    """Write golden logits (first 10 logits, top-5) for ``names`` (default: every present model)."""
    from repro.base.settings import weights_dir
    from repro.zoo import get_spec, load_model
    from repro.zoo.fetch import sha256_of

    data = _golden()
    todo = (
        [get_spec(n) for n in names]
        if names
        else [s for s in REAL if cache_status(s, weights_dir()) in ("yes", "local")]
    )
    for spec in todo:
        model = load_model(spec.name)
        logits = _logits(model)
        data[spec.name] = {
            "sha256": {role: sha256_of(p) for role, p in model.weight_files.items()},
            "logits": [[round(float(v), 6) for v in row[:10]] for row in logits],
            "top5": logits.topk(5, dim=1).indices.tolist(),
        }
        print(f"recorded {spec.name}")
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "--record":
        raise SystemExit("usage: python -m tests.full.test_golden_logits --record [NAME ...]")
    record(sys.argv[2:])

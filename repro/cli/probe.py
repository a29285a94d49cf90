"""``python -m repro probe <shape-bias|spectral|critical-band>``: run one bias probe on one
model and one local image folder (probe stage; torch is imported only inside the handler).

The model is a zoo name (``repro.zoo.load_model``) or a path to a local file holding a whole
``nn.Module`` (TorchScript or ``torch.save``); it maps [0, 1] images to 1000 logits with its
normalization inside. The data folder is opened with ``repro.datasets.open_dataset``: ImageNet
validation layout (``<wnid>/<image>``) for spectral and critical-band, the cue-conflict
stimuli for shape-bias (generated mini copies are accepted and flagged as such).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from repro.errors import CheckpointError, ConfigError, DataError

PROBES = {
    # probe name: (module, dataset the probe reads, what the folder must look like)
    "shape-bias": ("repro.probes.shape_bias", "cue_conflict",
                   "the 1,280 model-vs-human cue-conflict images, <category>/<shape><n>-<texture><n>.png"),
    "spectral": ("repro.probes.spectral", "imagenet_val",
                 "ImageNet validation images in class folders, <wnid>/<image>.JPEG"),
    "critical-band": ("repro.probes.critical_band", "imagenet_val",
                      "ImageNet validation images in class folders, <wnid>/<image>.JPEG"),
}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "probe", help="run a bias probe (shape-bias, spectral, critical-band) on a model",
        description="Run one bias probe on one model and a local data folder; prints counts per "
                    "condition and the probe's summary values.")
    p.add_argument("probe", choices=list(PROBES), help="which probe")
    p.add_argument("--model", required=True, metavar="NAME_OR_PATH",
                   help="a zoo name (python -m repro models) or a file with a saved nn.Module / TorchScript")
    p.add_argument("--data", required=True, metavar="DIR", help="the probe's image folder")
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:1, ... (default: cuda if available)")
    p.add_argument("--batch-size", default="auto",
                   help="images per batch, or auto (default): the fastest batch size and memory format measured "
                        "once for this model and device (repro.runner.autotune, cached)")
    p.add_argument("--seed", type=int, default=0, help="noise seed (critical-band; recorded by all) (default 0)")
    p.add_argument("--noise", choices=["philox", "pcg64"], default="philox",
                   help="critical-band noise generator: philox (version 4, default) or pcg64 (version 3's "
                        "per-image NumPy streams, to reproduce earlier results)")
    p.add_argument("--weights-dir", default=None, help="weights folder for zoo models (default: settings)")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--out", default=None, metavar="CSV",
                   help="write per-trial decisions (shape-bias) or counts per condition (others) to this CSV")
    p.set_defaults(handler=_handle)


def open_probe_data(probe: str, folder: str | Path) -> Any:
    """The probe's ImageSource for ``folder`` (swap point for other readers)."""
    _, dataset, layout = PROBES[probe]
    path = Path(folder).expanduser()
    if not path.exists():
        raise DataError(f"{path}: data folder not found (probe {probe} expects {layout})")
    if not path.is_dir():
        raise DataError(f"{path}: is a file, not a folder (probe {probe} expects {layout})")
    from repro.datasets import open_dataset

    try:
        return open_dataset(dataset, path, cache=False)
    except DataError as exc:
        raise DataError(f"probe {probe} cannot use {path}: {exc}") from None


def load_probe_model(spec: str, *, device: Any, weights_dir: str | None = None) -> Any:
    """A zoo model by name, or a whole nn.Module from a local TorchScript / torch.save file."""
    import torch

    path = Path(spec).expanduser()
    if path.is_file():
        try:
            with warnings.catch_warnings():  # torch 2.x marks TorchScript deprecated; still supported
                warnings.simplefilter("ignore", FutureWarning)
                model = torch.jit.load(str(path), map_location=device)
        except Exception:  # not TorchScript: a pickled nn.Module
            try:
                model = torch.load(str(path), map_location=device, weights_only=False)
            except Exception as exc:
                raise CheckpointError(f"{path}: neither a TorchScript file nor a torch.save'd nn.Module "
                                      f"({type(exc).__name__}: {exc})") from None
        if not isinstance(model, torch.nn.Module):
            raise CheckpointError(f"{path}: holds a {type(model).__name__}, expected a whole nn.Module "
                                  "(a state_dict needs a zoo entry: see python -m repro models)")
        return model.to(device).eval()
    if any(sep in spec for sep in ("/", "\\")) or path.suffix in (".pt", ".pth", ".ckpt", ".bin"):
        raise CheckpointError(f"{path}: model file not found")
    from repro.zoo import load_model

    return load_model(spec, weights_dir=weights_dir, device=device)


def _batch_size(args: argparse.Namespace, model: Any, device: Any) -> tuple[int, str]:
    """--batch-size as given, or the autotuned (batch size, memory format) of this model and device
    (the model is then put in that memory format; on a CPU glibc is told to keep freed memory)."""
    import torch

    if args.batch_size != "auto":
        return int(args.batch_size), "contiguous"
    from repro.runner import autotune

    if device.type == "cpu":
        autotune.keep_freed_memory()
    choice = autotune.tune(model, Path(args.model).stem if Path(args.model).is_file() else args.model, device)
    if choice.channels_last:
        model.to(memory_format=torch.channels_last)
    return choice.batch_size, "channels_last" if choice.channels_last else "contiguous"


def _write_counts(result: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["measurement", "version", "seed", "condition", "k", "n", "rate"])
        for c in result.conditions:
            w.writerow([result.measurement, result.version, result.seed, c.condition, c.k, c.n, f"{c.rate:.6f}"])


def _fmt(v: Any) -> str:
    return "undefined" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


def _handle(args: argparse.Namespace) -> int:
    if args.batch_size != "auto" and (not str(args.batch_size).isdigit() or int(args.batch_size) <= 0):
        raise ConfigError(f"--batch-size must be a positive integer or auto, got {args.batch_size}")
    source = open_probe_data(args.probe, args.data)  # data errors before the (slow) model load
    import importlib

    import torch

    from repro.probes._common import resolve_device

    device = resolve_device(args.device)
    model = load_probe_model(args.model, device=device, weights_dir=args.weights_dir)
    module = importlib.import_module(PROBES[args.probe][0])
    batch_size, layout = _batch_size(args, model, device)
    start = time.perf_counter()
    with torch.no_grad():
        extra = {"noise": args.noise} if args.probe == "critical-band" else {}
        result = module.run(model, source, device=str(device), batch_size=batch_size, seed=args.seed, **extra)
    elapsed = time.perf_counter() - start
    if args.out:
        out = Path(args.out)
        if args.probe == "shape-bias":
            module.write_decisions_csv(result, out)
        else:
            _write_counts(result, out)
    mini = bool(getattr(source, "mini", False))
    if args.json:
        payload = result.to_dict()
        payload.pop("records", None)
        payload.update({"model": args.model, "data": str(args.data), "device": str(device), "images": len(source),
                        "mini": mini, "seconds": round(elapsed, 3), "batch_size": batch_size, "memory_format": layout})
        json.dump(payload, sys.stdout, indent=2, allow_nan=False)
        print()
        return 0
    print(f"{args.probe} probe v{result.version}: model {args.model} on {len(source)} images of {args.data} "
          f"({device}, seed {result.seed}, {elapsed:.1f} s){' [MINI data: not evidence]' if mini else ''}")
    width = max(len(c.condition) for c in result.conditions)
    for c in result.conditions:
        lo, hi = c.rate, c.rate
        if c.n:
            from repro.stats import binomial_interval

            lo, hi = binomial_interval(c.k, c.n)
        print(f"  {c.condition:<{width}}  {c.k:>6d} / {c.n:<6d}  {c.rate:7.2%}  [{lo:6.2%}, {hi:6.2%}]")
    keys = [k for k in result.values if not k.startswith(("LFC/", "HFC/", "threshold"))]
    for k in keys:
        print(f"  {k} = {_fmt(result.values[k])}")
    th = [result.values.get(f"threshold_norm/f={f}") for f in range(7)]
    if all(t is not None for t in th):
        print(f"  thresholds_norm = {[int(t) for t in th]}")  # type: ignore[arg-type]
    if args.out:
        print(f"  wrote {args.out}")
    return 0

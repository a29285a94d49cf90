"""``python -m repro probe <shape-bias|spectral|critical-band>``: run one bias probe on one model.

The probe reads one local image folder (probe stage; torch is imported only inside the handler).

The probes and the datasets each reads are those of the measurement registry
(``repro.measurements.registry.probes`` / ``probe_variants``): the folder is read as the
probe's study dataset, unless ``--stimuli`` names another dataset the probe reads or the
folder's layout shows GraySplit / CBMSplit split folders, which are measured under the 16-class
protocol of Subramanian et al. 2023 (``repro.measurements.probe_data.select``). The model is a zoo
name, a ResNet-50 state dict file (read as data, like ``file://PATH``), or, with
``--allow-torchscript``, a TorchScript file (code, so only one you made); a whole pickled
``nn.Module`` is never loaded, unpickling it would run code from the file
(``repro.zoo.load_model_file``). The data folder is opened with ``repro.datasets.open_dataset`` as
that dataset (generated mini copies are accepted and flagged as such).

``--batch-size auto`` (the default) takes the batch size and memory format measured once per
(model, device, measurement) (``repro.planner.autotune.layout_for``: for the critical band and
the spectral filter the whole per-batch step, stimulus synthesis plus one pass per condition);
``--noise`` overrides the registered critical-band noise generator (``pcg64`` reproduces version 3's
stimuli). The JSON output records both, and the result records the probe version the generator
gives.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from repro.analysis.chance import result_test
from repro.base.errors import ConfigError
from repro.base.numbers import fmt_num
from repro.cli.common import (
    MAX_BATCH,
    add_device_option,
    add_model_file_options,
    add_seed_option,
)
from repro.cli.paths import output_file
from repro.measurements.registry import probe_datasets, probes

#: the critical-band noise generators (``repro.probes.noise.NOISES``; written out here so that
#: building the parser imports no torch, tests/cli/test_critical_band_cli.py checks they agree)
NOISE_CHOICES = ("philox", "pcg64")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "probe",
        help="run a bias probe (shape-bias, spectral, critical-band) on a model",
        description="Run one bias probe on one model and a local data folder; prints counts per "
        "condition and the probe's summary values.",
    )

    p.add_argument("probe", choices=list(probes()), help="which probe")
    add_model_file_options(p)
    p.add_argument("--data", required=True, metavar="DIR", help="the probe's image folder")
    add_device_option(p, "cpu, cuda, cuda:1, ... (default: cuda if available)", default="auto")
    p.add_argument(
        "--batch-size",
        default="auto",
        help="images per batch, or auto (default): the fastest batch size and memory format "
        "measured once for this model and device (repro.planner.autotune, cached)",
    )
    add_seed_option(p, "noise seed (critical-band; recorded by all)")
    p.add_argument(
        "--noise",
        choices=NOISE_CHOICES,
        default=None,
        help="critical-band noise generator: philox (version 4, the registered default) or pcg64 "
        "(version 3's per-image NumPy streams, to reproduce earlier results)",
    )
    p.add_argument(
        "--stimuli",
        default="auto",
        choices=["auto", *probe_datasets()],
        help="dataset of --data (default auto: GraySplit/CBMSplit split folders are detected and "
        "measured with 16-class decisions, Subramanian et al. 2023; else the probe's study "
        "dataset)",
    )
    p.add_argument(
        "--splits",
        default=None,
        metavar="S,S,...",
        help="GraySplit/CBMSplit splits to read (default 0,1,2,3,4; 'train' is the protocol's "
        "threshold-fitting split)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument(
        "--out",
        default=None,
        metavar="CSV",
        help="write per-trial decisions (shape-bias) or counts per condition (others) to this CSV",
    )
    p.set_defaults(handler=_handle)


def _fmt(v: Any) -> str:
    """A value for the text output: counts as integers, other floats to 4 decimals.

    Counts are whole numbers, stored as floats in ``values``."""
    return fmt_num(v, 4, none="undefined", only_floats=True, whole=(0, 2**53))


def _handle(args: argparse.Namespace) -> int:
    if args.batch_size != "auto" and (
        not str(args.batch_size).isdecimal() or not 0 < int(args.batch_size) <= MAX_BATCH
    ):
        raise ConfigError(
            f"--batch-size must be a positive integer (at most {MAX_BATCH}) or auto, got "
            f"{args.batch_size!r}"
        )
    if args.out:
        output_file(args.out, "--out")
    from repro.measurements.probe_data import open_data, select, write_out

    measurement = select(args.probe, args.data, args.stimuli)
    splits = [x.strip() for x in args.splits.split(",")] if args.splits is not None else None
    if splits is not None and not all(splits):
        raise ConfigError(
            f"--splits {args.splits!r}: an empty split name; expected comma-separated splits, e.g. "
            "0,1,2, or leave the option out for the default"
        )
    source = open_data(
        measurement, args.data, splits=splits
    )  # data errors before the (slow) model load
    from repro.base.device import resolve_device
    from repro.measurements.loop import run
    from repro.planner import autotune
    from repro.zoo import load_model_file

    overrides = {}
    if args.noise is not None:  # the registered generator, or the one asked for (pcg64: version 3)
        if "noise" not in measurement.kwargs:
            raise ConfigError(
                f"--noise: {measurement.name} draws no noise (only the critical-band probe on "
                "ImageNet val has a selectable generator)"
            )
        overrides["noise"] = args.noise
    device = resolve_device(args.device)
    model = load_model_file(
        args.model,
        device=device,
        weights_dir=args.weights_dir,
        allow_torchscript=args.allow_torchscript,
    )
    layout = autotune.layout_for(
        model,
        args.model,
        device,
        None if args.batch_size == "auto" else int(args.batch_size),
        measurement=measurement.name,
    )
    start = time.perf_counter()
    result = run(
        measurement,
        model,
        source,
        device=device,
        batch_size=layout.batch_size,
        seed=args.seed,
        **overrides,
    )
    elapsed = time.perf_counter() - start
    if args.out:
        write_out(measurement, result, args.out)
    mini = bool(getattr(source, "mini", False))
    chance = result_test(measurement.protocol, result.values, result.conditions)
    store_with = store_command(args.model, measurement, args.data)
    if args.json:
        payload = result.as_json()
        payload.pop("records", None)
        payload.update(
            {
                "model": args.model,
                "data": str(args.data),
                "stimuli": measurement.dataset,
                "protocol": measurement.protocol,
                "device": str(device),
                "images": len(source),
                "mini": mini,
                "seconds": round(elapsed, 3),
                "batch_size": layout.batch_size,
                "memory_format": layout.memory_format,
                "chance": None if chance is None else chance.as_json(),
                "stored": False,  # printed only; `store_with` measures it into the store
                "store_with": store_with,
            }
        )
        json.dump(payload, sys.stdout, indent=2, allow_nan=False)
        print()
        return 0
    print(
        f"{args.probe} probe v{result.version} ({measurement.dataset}, {measurement.protocol}): "
        f"model {args.model} on {len(source)} images of {args.data} ({device}, seed {result.seed}, "
        f"{elapsed:.1f} s){' [MINI data: not evidence]' if mini else ''}"
    )
    width = max(len(c.condition) for c in result.conditions)
    for c in result.conditions:
        lo, hi = c.rate, c.rate
        if c.n:
            from repro.base.stats import binomial_interval

            lo, hi = binomial_interval(c.k, c.n)
        print(
            f"  {c.condition:<{width}}  {c.k:>6d} / {c.n:<6d}  {c.rate:7.2%}  [{lo:6.2%}, "
            f"{hi:6.2%}]"
        )
    keys = [k for k in result.values if not k.startswith(("LFC/", "HFC/", "threshold"))]
    for k in keys:
        print(f"  {k} = {_fmt(result.values[k])}")
    th = [result.values.get(f"threshold_norm/f={f}") for f in range(7)]
    if all(t is not None for t in th):
        print(f"  thresholds_norm = {[int(t) for t in th]}")  # type: ignore[arg-type]
    if chance is not None:
        print(f"  {chance.text()}")
    if args.out:
        print(f"  wrote {args.out}")
    print(
        "not stored: a probe prints its result (and --out writes it) but keeps nothing in the "
        f"measurement store, where `place` and `compare` read; to store it, run `{store_with}`"
    )
    return 0


def store_command(model: str, measurement: Any, data: str) -> str:
    """The ``measure`` command that stores what the probe measured.

    The same model (a file as ``file://PATH``), the measurement, its dataset root set to the folder
    the probe read."""
    import shlex

    path = Path(model).expanduser()
    name = f"file://{path.resolve()}" if path.is_file() else model
    env = f"REPRO_{measurement.dataset.upper().replace('-', '_')}_ROOT"
    root = shlex.quote(str(Path(data).expanduser().resolve()))
    return (
        f"{env}={root} python -m repro measure --models {shlex.quote(name)} "
        f"--measurements {measurement.name}"
    )

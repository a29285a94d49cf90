"""``python -m repro score shape-bias | critical-band``: the bias scores from stored decisions
or thresholds (pure maths, no model, no torch).

- ``score shape-bias DECISIONS.csv [--json]``: shape bias of a per-trial decisions CSV in
  model-vs-human's schema (a human subject's file or one written by the shape-bias probe).
- ``score critical-band 0,0,0,0,2,2,0 [--json]``: the critical-band fit of 7 thresholds;
  ``null`` fields when the fit is undefined (all thresholds equal, or no convergence).
"""

from __future__ import annotations

import argparse
import json

from repro.base.errors import ConfigError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "shape-bias",
        help="shape bias of a per-trial cue-conflict decisions CSV",
        description="Shape bias S/(S+T) of a per-trial decisions CSV "
        "(subj,session,trial,rt,object_response,category,condition,imagename).",
    )
    p.add_argument("decisions", metavar="DECISIONS.csv")
    p.add_argument("--json", action="store_true", help='print {"n", "shape", "texture", "shape_bias"} as JSON')
    p.set_defaults(handler=_shape_bias)

    p = subparsers.add_parser(
        "critical-band",
        help="critical-band fit (bandwidth, centre frequency, peak noise sensitivity) of 7 thresholds",
        description="Fit A*exp(-(x-mu)^2/(2 sigma^2)) to 7 band thresholds (integers 0..4, bands 0..6).",
    )
    p.add_argument("thresholds", metavar="T0,T1,...,T6", help="7 comma-separated thresholds, e.g. 0,0,0,0,2,2,0")
    p.add_argument("--json", action="store_true",
                   help='print {"bandwidth", "center_frequency", "peak_noise_sensitivity"} as JSON (null if undefined)')
    p.set_defaults(handler=_critical_band)


def _shape_bias(args: argparse.Namespace) -> int:
    from repro.scoring.shape_bias import read_decisions_csv, shape_bias

    score = shape_bias(read_decisions_csv(args.decisions))
    if args.json:
        print(json.dumps(score.as_dict()))
        return 0
    if score.shape_bias is None:
        print(f"{args.decisions}: n={score.n} conflict trials, no shape or texture decision: shape bias undefined")
        return 0
    interval = score.interval()
    assert interval is not None  # defined shape bias: shape + texture > 0
    lo, hi = interval
    print(f"{args.decisions}: shape bias {score.shape_bias:.4f} (95% CI {lo:.4f}-{hi:.4f}): "
          f"{score.shape} shape, {score.texture} texture of n={score.n} conflict trials")
    return 0


def _critical_band(args: argparse.Namespace) -> int:
    from repro.scoring.critical_band import fit, parse_thresholds

    try:
        values = parse_thresholds(args.thresholds)
    except ValueError as exc:
        raise ConfigError(f"critical-band thresholds: {exc}") from None
    res = fit(values)
    if args.json:
        print(json.dumps(res.as_dict()))
        return 0
    if not res.defined:
        print(f"thresholds {values}: undefined ({res.reason})")
        return 0
    print(f"thresholds {values}: bandwidth {res.bandwidth:.2f} octaves, centre frequency "
          f"{res.center_frequency:.1f} cycles/image, peak noise sensitivity {res.peak_noise_sensitivity:.2f}")
    return 0

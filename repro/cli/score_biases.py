"""``python -m repro score shape-bias | critical-band``: bias scores from stored results.

The scores come from stored decisions or thresholds (pure maths, no model, no torch).

- ``score shape-bias DECISIONS.csv [--json]``: shape bias of a per-trial decisions CSV in
  model-vs-human's schema (a human subject's file or one written by the shape-bias probe).
- ``score critical-band 0,0,0,0,2,2,0 [--json]``: the critical-band fit of 7 thresholds;
  ``null`` fields when the fit is undefined (all thresholds equal, or no convergence).
- ``score critical-band --grid FILE [--json]``: thresholds (absolute and ``_norm``) and fits of a
  per-condition grid of 16-class decisions, a per-trial JSON in the layout of Subramanian et
  al.'s network files or a counts CSV (``condition,k,n``); ``repro.scoring.critical_band_grid``.
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
    p.add_argument(
        "--json", action="store_true", help='print {"n", "shape", "texture", "shape_bias"} as JSON'
    )
    p.set_defaults(handler=_shape_bias)

    p = subparsers.add_parser(
        "critical-band",
        help="critical-band fit of 7 thresholds, or thresholds and fit of a grid of decisions "
        "(--grid)",
        description="Fit A*exp(-(x-mu)^2/(2 sigma^2)) to 7 band thresholds (integers 0..4, bands "
        "0..6); with --grid FILE, first find the thresholds (absolute and _norm 50%% criterion) of "
        "a grid of 16-class decisions: a per-trial JSON {condition: [0/1, ...]} as in Subramanian "
        "et al.'s network files (35 conditions noise<sd>freq<band>, SD 0 split over the bands) or "
        "a counts CSV condition,k,n (conditions named that way or as the suite's sd=0, "
        "f=<band>/sd=<sd>; SD 0 split or pooled).",
    )
    p.add_argument(
        "thresholds",
        metavar="T0,T1,...,T6",
        nargs="?",
        help="7 comma-separated thresholds, e.g. 0,0,0,0,2,2,0 (or --grid)",
    )
    p.add_argument(
        "--grid", metavar="FILE", help="a per-trial JSON grid or a counts CSV (condition,k,n)"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"bandwidth", "center_frequency", "peak_noise_sensitivity"} as JSON (null if '
        "undefined); "
        "with --grid, the thresholds lists, both fits and the 29 suite conditions",
    )
    p.set_defaults(handler=_critical_band)


def _shape_bias(args: argparse.Namespace) -> int:
    from repro.scoring.shape_bias import read_decisions_csv, shape_bias

    score = shape_bias(read_decisions_csv(args.decisions))
    if args.json:
        print(json.dumps(score.as_json()))
        return 0
    if score.shape_bias is None:
        print(
            f"{args.decisions}: n={score.n} conflict trials, no shape or texture decision: shape "
            "bias undefined"
        )
        return 0
    interval = score.interval()
    assert interval is not None  # defined shape bias: shape + texture > 0
    lo, hi = interval
    print(
        f"{args.decisions}: shape bias {score.shape_bias:.4f} (95% CI {lo:.4f}-{hi:.4f}): "
        f"{score.shape} shape, {score.texture} texture of n={score.n} conflict trials"
    )
    return 0


def _fit_text(res) -> str:
    if not res.defined:
        return f"undefined ({res.reason})"
    return (
        f"bandwidth {res.bandwidth:.2f} octaves, centre frequency {res.center_frequency:.1f} "
        f"cycles/image, peak noise sensitivity {res.peak_noise_sensitivity:.2f}"
    )


def _critical_band_grid(args: argparse.Namespace) -> int:
    from repro.scoring.critical_band_grid import read_grid, score_grid

    score = score_grid(read_grid(args.grid))
    if args.json:
        print(json.dumps(score.as_json()))
        return 0
    g, base = score.grid, score.grid.baseline()
    layout = "SD 0 split over the 7 bands, pooled into sd=0" if g.split_clean else "SD 0 pooled"
    print(
        f"{args.grid}: {g.n_conditions} conditions, {g.trials:,} trials ({layout}: "
        f"{base.k}/{base.n} correct)"
    )
    print(
        f"thresholds (absolute 50%): {','.join(map(str, score.thresholds))} -> "
        f"{_fit_text(score.fit)}"
    )
    if score.thresholds_norm is None or score.fit_norm is None:
        print("thresholds (_norm, 50% of the sd=0 accuracy): undefined (no SD-0 trial correct)")
    else:
        print(
            "thresholds (_norm, 50% of the sd=0 accuracy): "
            f"{','.join(map(str, score.thresholds_norm))} -> {_fit_text(score.fit_norm)}"
        )
    return 0


def _critical_band(args: argparse.Namespace) -> int:
    from repro.scoring.critical_band import fit, parse_thresholds

    if (args.grid is None) == (args.thresholds is None):
        raise ConfigError(
            "score critical-band: give either 7 thresholds (e.g. 0,0,0,0,2,2,0) or --grid FILE, "
            "not both"
            if args.grid
            else "score critical-band: give 7 thresholds (e.g. 0,0,0,0,2,2,0) or --grid FILE"
        )
    if args.grid is not None:
        return _critical_band_grid(args)
    try:
        values = parse_thresholds(args.thresholds)
    except ValueError as exc:
        raise ConfigError(f"critical-band thresholds: {exc}") from None
    res = fit(values)
    if args.json:
        print(json.dumps(res.as_json()))
        return 0
    print(f"thresholds {values}: {_fit_text(res)}")
    return 0

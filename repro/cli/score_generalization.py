"""``python -m repro score benchmark|imagenet-x``: score a stored predictions file.

No model, no torch; pipeline stage: scoring.

All accuracies are FRACTIONS in [0, 1] (not percent), with the count (k, n) they rest on.

    score benchmark --predictions FILE.csv --benchmark imagenet|real|real_last_batch|... [--json]
        -> {"k": int, "n": int, "accuracy": float, "interval": [lo, hi], "benchmark": str}
    score imagenet-x --predictions FILE.csv [--which top|multi]
        [--correctness class|metaclass|real_class] [--json]
        -> {"overall_accuracy": float, "overall": {"k", "n"},
            "factors": {"<factor>": {"accuracy", "error_ratio", "k", "n"}}}
"""

from __future__ import annotations

import argparse
import json

# literal here so that building the parser imports no scoring module (scipy is slow to import);
# tests check they equal repro.scoring.accuracy.BENCHMARKS / imagenet_x.WHICH / CORRECTNESS
BENCHMARK_NAMES = (
    "imagenet",
    "imagenet_top5",
    "imagenet-v2",
    "imagenet-v2_top5",
    "imagenet-sketch",
    "imagenet-sketch_top5",
    "imagenet-a",
    "imagenet-r",
    "real",
    "real_last_batch",
)
WHICH = ("top", "multi")
CORRECTNESS = ("class", "metaclass", "real_class")


def _benchmark(args: argparse.Namespace) -> int:
    from repro.scoring.predictions import read_predictions

    predictions = read_predictions(args.predictions)  # bad input fails before the scorers load
    from repro.scoring.accuracy import score

    count = score(args.benchmark, predictions)
    lo, hi = count.interval()
    if args.json:
        print(
            json.dumps(
                {
                    "k": count.k,
                    "n": count.n,
                    "accuracy": count.rate,
                    "interval": [lo, hi],
                    "benchmark": args.benchmark,
                }
            )
        )
    else:
        print(
            f"{args.benchmark}: {count.k:,}/{count.n:,} = {100 * count.rate:.3f}% "
            f"(95% Wilson interval {100 * lo:.3f}-{100 * hi:.3f}%)"
        )
    return 0


def _imagenet_x(args: argparse.Namespace) -> int:
    from repro.scoring.predictions import read_predictions

    predictions = read_predictions(args.predictions)
    from repro.scoring.imagenet_x import FACTORS, counts_to_json, factor_accuracies

    result = factor_accuracies(predictions, which=args.which, correctness=args.correctness)
    if args.json:
        print(json.dumps(counts_to_json(result)))
        return 0
    o = result.overall
    print(
        f"ImageNet-X ({args.which} factor, {args.correctness} correctness): overall "
        f"{o.k:,}/{o.n:,} = {100 * o.rate:.2f}%"
    )
    print(f"{'factor':<18}{'k':>7}{'n':>7}{'accuracy':>10}{'error ratio':>13}")
    for f in sorted(FACTORS, key=lambda f: -result.error_ratio(f)):
        c = result.factors[f]
        print(f"{f:<18}{c.k:>7}{c.n:>7}{100 * c.rate:>9.2f}%{result.error_ratio(f):>13.3f}")
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "benchmark",
        help="accuracy (k/n, fraction) of a predictions file on a benchmark",
        description="Accuracy of a stored predictions file on a benchmark, as k/n "
        "(a fraction in [0, 1]) with its Wilson 95%% interval.",
    )
    p.add_argument(
        "--predictions",
        required=True,
        metavar="FILE.csv",
        help="per-image predictions "
        "(file_name,predicted_class,predicted_probability[,top5_class_1..5][,label])",
    )
    p.add_argument(
        "--benchmark",
        required=True,
        choices=BENCHMARK_NAMES,
        metavar="NAME",
        help="one of: " + ", ".join(BENCHMARK_NAMES),
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=_benchmark)

    q = sub.add_parser(
        "imagenet-x",
        help="ImageNet-X per-factor accuracy and error ratio of a predictions file",
        description="Per-factor accuracies (fractions) and error ratios "
        "(1 - acc_factor) / (1 - acc_overall) on the ImageNet-X annotations.",
    )
    q.add_argument(
        "--predictions",
        required=True,
        metavar="FILE.csv",
        help="predictions on all 50,000 ImageNet val images",
    )
    q.add_argument(
        "--which",
        choices=WHICH,
        default="top",
        help="top-factor (default) or multi-factor annotations",
    )
    q.add_argument(
        "--correctness",
        choices=CORRECTNESS,
        default="class",
        help="class (default), metaclass, or real_class (ReaL labels)",
    )
    q.add_argument("--json", action="store_true", help="print one JSON object")
    q.set_defaults(handler=_imagenet_x)

"""Gavrikov & Keuper 2024, the critical-band expected file: threshold vectors per study model.

For every study model, the integer threshold vector(s) in {0..4}^7 whose critical-band fit
(``repro.scoring.critical_band``) reproduces its published (bw_norm, cf_norm, pns_norm) triple;
``python -m repro.studies.gavrikov2024.critical_band_expected --generate-expected`` writes them
to ``expected/critical_band/threshold_vectors.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
from pathlib import Path

import numpy as np

from repro.base.settings import checkout_dir
from repro.base.study import get_study
from repro.published.fetch import require_file, sha256_of
from repro.published.study_data import study_categories, study_table
from repro.scoring.critical_band import all_fits, search, search_exhaustive

PUBLISHED_COLUMNS = (
    "metric/criticalband/bw_norm",
    "metric/criticalband/cf_norm",
    "metric/criticalband/pns_norm",
)
EXPECTED_PATH = "expected/critical_band/threshold_vectors.json"


def read_published(
    data_dir: str | os.PathLike[str] | None = None,
) -> dict[str, tuple[float, float, float]]:
    """The 48 study models' published (bw_norm, cf_norm, pns_norm), from the study's table."""
    study = get_study("gavrikov2024")
    table = study_table(study, data_dir)
    models = [
        m for group in study_categories(study, data_dir, table.models).values() for m in group
    ]
    return {
        m: (
            table.value(m, PUBLISHED_COLUMNS[0]),
            table.value(m, PUBLISHED_COLUMNS[1]),
            table.value(m, PUBLISHED_COLUMNS[2]),
        )
        for m in models
    }


def shared_groups(found: dict[str, list[tuple[list[int], float]]]) -> list[dict]:
    """Models grouped by their (first) recovered vector, largest group first."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for model, hits in found.items():
        if hits:
            groups.setdefault(tuple(hits[0][0]), []).append(model)
    return [
        {"vector": list(v), "models": ms}
        for v, ms in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


def generate_expected(
    out_path: str,
    data_dir: str | None = None,
    exhaustive_table: np.ndarray | None = None,
    screen_tol: float = 1e-2,
) -> dict:
    """Search every study model's vector(s) and write them, with a header, as JSON."""
    import scipy

    published = read_published(data_dir)
    found = search(published, screen_tol=screen_tol)
    method = (
        f"stationarity screen over all 78,125 vectors (gradient tolerance {screen_tol:g}), "
        "survivors confirmed by the exact fit"
    )
    if exhaustive_table is not None:
        full = search_exhaustive(published, exhaustive_table)
        if {m: [h[0] for h in hs] for m, hs in full.items()} != {
            m: [h[0] for h in hs] for m, hs in found.items()
        }:
            raise RuntimeError("screened search and exhaustive search disagree; not writing")
        method += "; cross-checked against all 78,125 exact fits (identical result)"
    csv_path = require_file(get_study("gavrikov2024").table["published"], data_dir)
    errors = [hs[0][1] for hs in found.values() if hs]
    doc = {
        "_header": {
            "what": "integer threshold vectors in {0..4}^7 whose critical-band fit reproduces each "
            "study model's published (bw_norm, cf_norm, pns_norm)",
            "generated_by": "python -m repro.studies.gavrikov2024.critical_band_expected "
            "--generate-expected"
            + (f" --screen-tol {screen_tol:g}" if screen_tol != 1e-2 else "")
            + (" --exhaustive" if exhaustive_table is not None else ""),
            "generated_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "source": "paulgavrikov/biases_vs_generalization @ 9168ac8, raw-data/benchmark.csv "
            f"(sha256 {sha256_of(csv_path)}), models of raw-data/r50_categories.json",
            "method": method,
            "fit": "scipy.optimize.curve_fit(A*exp(-(x-mu)^2/(2 sigma^2)), x=0..6, p0=[1,0,1], "
            "bounds A in [0,4]); bw = 2 sqrt(ln 4)|sigma|, cf = 1.75*2^mu, pns = 2^(A-4)",
            "rtol": 1e-6,
            "scipy": scipy.__version__,
            "numpy": np.__version__,
            "max_relative_error": max(errors) if errors else None,
            "models_without_vector": [m for m, hs in found.items() if not hs],
        },
        "models": {
            m: {
                "published": dict(
                    zip(("bw_norm", "cf_norm", "pns_norm"), published[m], strict=True)
                ),
                "vectors": [h[0] for h in hs],
                "relative_errors": [h[1] for h in hs],
            }
            for m, hs in found.items()
        },
        "shared_vectors": shared_groups(found),
    }
    path = Path(out_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    text = json.dumps(doc, indent=1)
    # one line per vector / error list, so a diff of the file reads model by model
    text = re.sub(
        r"\[\s+([-\d.e,\s]+?)\s+\]",
        lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]",
        text,
    )
    tmp.write_text(text + "\n")
    tmp.replace(path)
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m repro.studies.gavrikov2024.critical_band_expected",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument(
        "--generate-expected",
        action="store_true",
        help=f"search the vectors and write {EXPECTED_PATH}",
    )
    parser.add_argument(
        "--out", default=None, help=f"output path (default: <checkout>/{EXPECTED_PATH})"
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--exhaustive", action="store_true", help="also fit all 78,125 vectors and cross-check"
    )
    parser.add_argument("--workers", type=int, default=1, help="processes for --exhaustive")
    parser.add_argument(
        "--cache",
        default=None,
        help="npy file holding the all-fits table (read if present, else written)",
    )
    parser.add_argument(
        "--screen-tol",
        type=float,
        default=1e-2,
        help="gradient tolerance of the screen (larger: more exact fits, same answer; 1.0 fits "
        "~18,000)",
    )
    args = parser.parse_args(argv)
    if not args.generate_expected:
        parser.print_help()
        return 2

    table = None
    if args.exhaustive:
        cache = Path(args.cache) if args.cache else None
        if cache is not None and cache.is_file():
            table = np.load(cache)
        else:
            table = all_fits(args.workers)
            if cache is not None:
                np.save(cache, table)
    out = args.out or str(checkout_dir() / EXPECTED_PATH)
    doc = generate_expected(out, args.data_dir, table, args.screen_tol)
    h = doc["_header"]
    try:
        out = str(Path(out).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        pass
    print(
        f"wrote {out}: {len(doc['models'])} models, max relative error "
        f"{h['max_relative_error']:.3g}, without vector: {h['models_without_vector'] or 'none'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

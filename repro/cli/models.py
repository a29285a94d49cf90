"""``python -m repro models [--json] [--study]``: list the model zoo without importing torch.

Columns: name, category, source, whether its weights are in the weights directory
(``yes``/``no``; ``local`` when pointed at a local file; ``-`` for random test models), and its
names in other labs' tables (the studies' independent sources, ``repro.published.independent``)
with their identity: certain, probable, or not_same (a name that collides with other weights).
"""

from __future__ import annotations

import argparse
import json


def _rows(study_only: bool) -> list[dict[str, object]]:
    from repro.base.settings import weights_dir
    from repro.published.independent import study_aliases
    from repro.zoo.specs import cache_status, specs

    wdir = weights_dir()
    others = study_aliases()
    rows = []
    for spec in specs():
        if study_only and not spec.study:
            continue
        rows.append(
            {
                "name": spec.name,
                "category": spec.category,
                "source": spec.source,
                "reference": spec.reference,
                "study": spec.study,
                "cached": cache_status(spec, wdir),
                "normalization": spec.normalization.name,
                "aliases": list(spec.aliases),
                # its names in other labs' tables (the studies' independent sources)
                "other_sources": others.get(spec.name, []),
            }
        )
    return rows


def _handler(args: argparse.Namespace) -> int:
    from repro.base.settings import weights_dir

    rows = _rows(args.study)
    if args.json:
        print(json.dumps({"weights_dir": str(weights_dir()), "models": rows}, indent=1))
        return 0
    widths = [
        max([len(c)] + [len(str(r[c])) for r in rows]) for c in ("name", "category", "source")
    ]
    print(
        f"{'name':{widths[0]}}  {'category':{widths[1]}}  {'source':{widths[2]}}  cached  "
        "in other sources (identity)"
    )
    for r in rows:
        aliases = "; ".join(
            f"{a['source']}:{a['name']} ({a['identity']})"
            for a in r["other_sources"]  # type: ignore[attr-defined]
        )
        print(
            f"{r['name']:{widths[0]}}  {r['category']:{widths[1]}}  {r['source']:{widths[2]}}  "
            f"{r['cached']:<6}  {aliases or '-'}"
        )
    n_study = sum(bool(r["study"]) for r in rows)
    n_cached = sum(r["cached"] in ("yes", "local") for r in rows)
    print(
        f"{len(rows)} models ({n_study} of the study); weights present for {n_cached}; "
        f"weights directory: {weights_dir()}"
    )
    return 0


def register(sub) -> None:
    p = sub.add_parser("models", help="list the model zoo (name, category, source, cached)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--study", action="store_true", help="only the 48 models of the study")
    p.set_defaults(handler=_handler)

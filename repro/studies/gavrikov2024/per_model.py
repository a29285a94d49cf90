"""Report section: the per-model table of the population, the claims' input.

Each row holds the model category, every bias and every category accuracy: the table the claims are
computed from. The same rows, sortable, are in ``python -m repro claims --json`` under
``tables.<study>.per_model``."""

from __future__ import annotations

from repro.base.numbers import fmt_num


def _fmt(v: object) -> str:
    return fmt_num(v, 3 if isinstance(v, float) and abs(v) < 10 else 2, only_floats=True)


def render(ctx) -> str:
    analysis = ctx.claims.analysis
    spec = analysis.spec
    rows = analysis.per_model_rows()
    biases, cats = list(spec.biases), list(spec.categories)
    lines = [
        "## Per-model table",
        "",
        f"The {len(rows)} models of the population with their model category, biases and category "
        "accuracies (%), as the claims read them; sortable in `python -m repro claims --json` "
        f"(`tables.{ctx.claims.study.name}.per_model`).",
        "",
        "| model | model category | "
        + " | ".join(spec.biases[b].label for b in biases)
        + " | "
        + " | ".join(spec.categories[c].label for c in cats)
        + " |",
        "|---|---|" + "---:|" * (len(biases) + len(cats)),
    ]
    for r in rows:
        lines.append(
            f"| `{r['model']}` | {r['model_category']} | "
            + " | ".join(_fmt(r[k]) for k in [*biases, *cats])
            + " |"
        )
    return "\n".join(lines) + "\n"

"""Report section: "How robust are the claims", one row per claim of a study.

Each row (``repro.diagnostics.robustness``): verdict, the statistic's range when one model is
left out, the models and model categories whose removal changes the verdict, the same for the
claim's qualitative content, the permutation p of its headline correlation beside scipy's, and
the Holm / Benjamini-Hochberg status of the bias x category cells it reads."""

from __future__ import annotations

from repro.base.numbers import fmt_value
from repro.diagnostics.cells import verdict_text
from repro.diagnostics.robustness import FAST, PERMUTATION_SEED, PERMUTATIONS, robustness
from repro.report.markdown import row

SHOW = 4  # names shown per list; the rest is counted


def names(items: list[str] | None, of: int | None = None) -> str:
    """A short list of names (``-`` for none, ``n/a`` when not defined)."""
    if items is None:
        return "n/a"
    if not items:
        return "none"
    shown = ", ".join(f"`{m}`" for m in items[:SHOW])
    more = len(items) - SHOW
    count = f"{len(items)}" + (f" of {of}" if of else "")
    return (
        (f"{count}: " if len(items) > 1 else "") + shown + (f" (+{more} more)" if more > 0 else "")
    )


def _range(rob) -> str:
    rng = rob.range
    if rng is None:
        return "n/a" + (f" ({rob.note})" if rob.note else "")
    return f"[{fmt_value(rng[0])}, {fmt_value(rng[1])}]"


def _perm(rob) -> str:
    if rob.permutation_p is None:
        return "-"
    scipy_p = "< 1e-300" if rob.scipy_p == 0 else f"{rob.scipy_p:.2g}"
    return f"{rob.permutation_p:.2g} (scipy {scipy_p})"


def cell_status(rob, alpha: float) -> str:
    """How many of the claim's cells are significant at ``alpha``, before and after correction."""
    if not rob.cells:
        return "-"
    n = len(rob.cells)
    raw = sum(c["p"] < alpha for c in rob.cells)
    holm = sum(c["p_holm"] < alpha for c in rob.cells)
    bh = sum(c["p_bh"] < alpha for c in rob.cells)
    return f"p < {alpha:g}: {raw}/{n}; Holm: {holm}/{n}; BH: {bh}/{n}"


def _qualitative(rob) -> str:
    if rob.qualitative is None:
        return "n/a (no qualitative content declared)"
    cats = [v.left_out for v in (rob.categories or []) if v.qualitative != rob.qualitative_verdict]
    text = f"{rob.qualitative_verdict}; flips: {names(rob.qualitative_flips, len(rob.models))}"
    if rob.categories:  # none: the study has none, or none holds a model the claim reads
        text += f"; categories: {names(cats)}"
    return text


def render(ctx) -> str:
    c = ctx.claims
    alpha = c.spec.alpha if c.spec is not None else 0.05
    robs = [(o, robustness(o, c)) for o in ctx.outcomes]
    n_cats = len(c.model_categories) if c.model_categories else 0
    lines = [
        "## How robust are the claims",
        "",
        "Each claim recomputed from the same per-model table with one model left out (every model "
        "its statistic reads, in turn) and with one model category left out"
        + (
            f" (each of the {n_cats} categories)"
            if n_cats
            else " (this study has no model categories)"
        )
        + ", judged by the claim's own tolerance. *Range*: the statistic's minimum and maximum "
        "over the leave-one-model-out recomputations. *Flips*: the models (categories) whose "
        "removal changes the verdict; a recomputation that is undefined (e.g. a group left empty) "
        "counts as a change. *Qualitative*: for a claim judged by rounding the published value, "
        "the verdict of what it states beyond the printed digits (its `[claim.qualitative]`, e.g. "
        "sign and significance of the correlation), with the models whose removal changes that; a "
        "claim whose tolerance is already qualitative is its own. *Permutation p*: "
        f"{PERMUTATIONS:,} random pairings of the headline correlation's two variables (scipy "
        f"`permutation_test`, seed {PERMUTATION_SEED}; the smallest possible two-sided p is "
        f"2/{PERMUTATIONS + 1:,} = {2 / (PERMUTATIONS + 1):.2g}), beside scipy's p of Spearman's "
        "rho. *Cells*: the claim's bias x category cells significant before and after Holm "
        "(family-wise) and Benjamini-Hochberg (false discovery rate) correction over the whole "
        "bias x category table.",
        "",
        "| claim | verdict | range (leave one model out) | models that flip it | categories that "
        "flip it | qualitative | permutation p | cells |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o, rob in robs:
        lines.append(
            row(
                f"`{o.claim.id}`",
                verdict_text(o),
                _range(rob),
                names(rob.flips, len(rob.models)),
                "n/a (none holds a model it reads)"
                if rob.categories == []
                else names(rob.category_flips),
                _qualitative(rob),
                _perm(rob),
                cell_status(rob, alpha),
            )
        )
    fast = [f"`{o.claim.id}`" for o, rob in robs if rob.method == FAST]
    if fast:
        lines += [
            "",
            "Leave-one-model-out of "
            + ", ".join(fast)
            + ": the statistic's own exact leave-one-out, "
            "computed in one go (tested equal to recomputing without the model); "
            "the others are recomputed on the context without the model.",
        ]
    return "\n".join(lines) + "\n"

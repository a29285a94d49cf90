"""Claims: the table that ``claims`` and ``reproduce`` print, fitted to the terminal.

Both ``python -m repro claims`` and ``python -m repro reproduce`` print it (``claims_table``; one
function, so both print the same columns and intervals).

The default form fits ``width`` columns (the terminal's, ``COLUMNS``, else 100): a line naming every
study listed and what the interval is, then claim, published, recomputed, 95% interval, finding (its
verdict, and the digits' where they differ), P(finding), strength and evidence (the inputs'
provenance is in ``--wide`` and ``--json``); when the row does not fit, each claim id stands on its
own line above its values, and a cell still too wide wraps inside its column. The explanation lines
below the table are those of the wide form (``repro.diagnostics.output.format_table``), wrapped to
the width. ``wide=True`` is that wide form, unchanged.
"""

from __future__ import annotations

import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from repro.base.text_width import terminal_width, wrap
from repro.claims.check import ClaimOutcome
from repro.diagnostics.output import INTERVAL_LEGEND, format_table, interval_block, table
from repro.diagnostics.replication import Replication
from repro.diagnostics.strength import Strength


def _fit(widths: list[int], minimum: list[int], room: int) -> list[int]:
    """Column widths that sum (with two spaces between columns) to at most ``room``.

    The widest column is narrowed first, never below its longest word (``minimum``).
    """
    widths = list(widths)
    while sum(widths) + 2 * (len(widths) - 1) > room:
        shrinkable = [i for i, w in enumerate(widths) if w > minimum[i]]
        if not shrinkable:
            break
        i = max(shrinkable, key=lambda j: widths[j])
        widths[i] -= 1
    return widths


def _lines(cells: Sequence[str], widths: list[int], indent: str) -> list[str]:
    """One table row as lines: each cell wrapped to its column's width."""
    wrapped = [
        textwrap.wrap(c, w, break_on_hyphens=False) or [""]
        for c, w in zip(cells, widths, strict=True)
    ]
    return [
        (
            indent
            + "  ".join(
                (col[k] if k < len(col) else "").ljust(w)
                for col, w in zip(wrapped, widths, strict=True)
            )
        ).rstrip()
        for k in range(max(map(len, wrapped)))
    ]


def fitted_rows(
    header: list[str], body: list[list[str]], width: int, whole: Collection[str] = ()
) -> list[str]:
    """The table of ``header`` and ``body`` in at most ``width`` columns where its words allow.

    The first column of ``body`` is the claim id. The layout is one line per claim when it fits,
    else the claim id on a line of its own and its other cells below it, indented, wrapped inside
    their columns if need be (the columns named in ``whole`` never: a number or an interval stays on
    one line); when even the longest words do not fit, the last columns are left out (named under
    the table).
    """
    table = [header, *body]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    if sum(widths) + 2 * (len(widths) - 1) <= width:
        rule = ["-" * w for w in widths]
        return [line for r in [header, rule, *body] for line in _lines(r, widths, "")]
    indent = "  "
    rest = [r[1:] for r in table]
    longest_word = [
        max(
            len(r[i]) if header[i + 1] in whole else max(map(len, r[i].split()), default=0)
            for r in rest
        )
        for i in range(len(rest[0]))
    ]
    kept = len(longest_word)
    while kept > 1 and sum(longest_word[:kept]) + 2 * (kept - 1) > width - len(indent):
        kept -= 1
    widths = _fit(widths[1 : kept + 1], longest_word[:kept], width - len(indent))
    out = [
        header[0],
        *_lines(header[1 : kept + 1], widths, indent),
        indent + "  ".join("-" * w for w in widths),
    ]
    for r in body:
        out += [r[0], *_lines(r[1 : kept + 1], widths, indent)]
    if kept < len(longest_word):
        out += wrap(
            f"(left out at this width: {', '.join(header[kept + 1 :])}; --wide shows every column)",
            width,
        )
    return out


def claims_table(
    results: Sequence[tuple[Any, list[ClaimOutcome]]],
    *,
    wide: bool = False,
    width: int | None = None,
) -> str:
    """The claims table of ``results`` ([(claim context, its outcomes)]: every study's claims).

    It shows each claim's statements (``repro.diagnostics.statements``: the interval its estimand
    calls for) and replication (``repro.diagnostics.replication``: P(verdict)); ``wide``: the wide
    form (``repro.diagnostics.output.format_table``), else fitted to ``width`` (default: the
    terminal's).
    """
    from repro.diagnostics.registry import said_of

    outcomes = [o for _, os in results for o in os]
    said = said_of(results)  # every diagnostic with a column in the table
    statements, replications, strengths = (
        said[k] for k in ("statements", "replication", "strength")
    )
    if wide:
        return format_table(outcomes, statements, replications, strengths)
    return fitted_table(outcomes, statements, replications, strengths, studies(results), width)


def studies(results: Sequence[tuple[Any, list[ClaimOutcome]]]) -> str:
    """Every study listed, with its number of claims.

    E.g. ``claims of 2 studies: gavrikov2024 (17), imagenetx (9)``.
    """
    named = [f"{ctx.study.name} ({len(os)})" for ctx, os in results]
    n = len(named)
    return f"claims of {n} stud{'y' if n == 1 else 'ies'}: {', '.join(named)}"


def fitted_table(
    outcomes: list[ClaimOutcome],
    statements: Mapping[str, Any],
    replications: Mapping[str, Replication],
    strengths: Mapping[str, Strength],
    title: str,
    width: int | None = None,
) -> str:
    """The fitted form of ``claims_table``.

    ``title`` and the interval's kind, the table (the registry's columns but those of the wide
    form only), then the wide form's explanation lines, each wrapped to ``width``.
    """
    width = width or terminal_width()
    said = {"statements": statements, "replication": replications, "strength": strengths}
    header, body, whole = table(outcomes, said, wide=False)  # the inputs' provenance: --wide
    explanation = format_table(outcomes, statements, replications, strengths).split("\n")
    explanation = explanation[2 + len(outcomes) :]  # below the wide table's header, rule and rows
    block = interval_block(outcomes, statements)
    if INTERVAL_LEGEND in explanation:  # said once, above the table
        i = explanation.index(INTERVAL_LEGEND)
        del explanation[i - 1 : i + len(block)]  # with the blank line before it
    out = [*wrap(title, width), *(line for text in block for line in wrap(text, width)), ""]
    out += fitted_rows(header, body, width, whole)
    out += [line for text in explanation for line in wrap(text, width)]
    return "\n".join(out)

"""``python -m repro claims --source independent [--json OUT]``: claims on independent inputs.

Every claim recomputed with each published input replaced by another lab's same-protocol value of
the same checkpoint where one exists (``repro.diagnostics.independent_inputs``), its verdict printed
beside the re-analysis verdict, with the evidence ``independent (k of N inputs)`` and the inputs
that moved it. A study that declares no independent source says so. Exit status 0 once computed: the
claim files record the verdicts of the re-analysis, not of these inputs (a bad source file: one
line, exit 2)."""

from __future__ import annotations

import argparse
from typing import Any

from repro.cli.common import reject_options

HEADER = [
    "claim",
    "published",
    "re-analysis",
    "verdict (re-analysis)",
    "independent",
    "verdict (independent)",
    "evidence",
]


def _reject(args: argparse.Namespace) -> None:
    reject_options(
        {"--store": args.store, "--power": args.power, "--device": args.device},
        "--source independent",
        "it reads the published data and the study's independent sources, never the store",
    )


def rows(outcomes: list[Any]) -> list[list[str]]:
    from repro.base.numbers import fmt_value

    out = []
    for r in outcomes:
        claim = r.reanalysis.claim
        ind = r.independent
        out.append(
            [
                claim.id,
                f"{claim.published:g}" if claim.published is not None else "(qualitative)",
                fmt_value(r.reanalysis.result.value),
                r.reanalysis.verdict,
                "-" if ind is None else fmt_value(ind.result.value),
                r.verdict if ind is not None else f"{r.verdict} (re-analysis)",
                r.evidence_text(),
            ]
        )
    return out


def moved_lines(outcomes: list[Any], show: int) -> list[str]:
    """Per claim with independent inputs, the lines saying what they changed.

    How many changed, the shift of its statistic, and the inputs that alone move it (``show`` named,
    the rest counted)."""
    from repro.base.numbers import fmt_value

    lines = []
    for r in outcomes:
        if r.independent is None:
            continue
        changed, moved = r.changed, r.moved
        ids = r.by_identity()
        head = (
            f"  {r.reanalysis.claim.id}: {r.k} replaced ("
            + ", ".join(f"{n} {lvl}" for lvl, n in ids.items())
            + "; "
            + ", ".join(f"{src} {n}" for src, n in r.by_source().items())
            + f"), {len(changed)} changed, {len(r.differing)} differ beyond the margin; statistic "
            + ("undefined" if r.shift is None else f"{fmt_value(r.shift)} shift")
            + f"; tolerance on independent inputs: {r.independent.tolerance.policy}"
        )
        lines.append(head)
        if moved:
            named = "; ".join(s.text() for s in moved[:show])
            more = f"; +{len(moved) - show} more" if len(moved) > show else ""
            lines.append(f"    moved by: {named}{more}")
        elif changed and r.shift == 0.0:
            lines.append("    the statistic does not move: no changed input changes its value")
        elif changed:
            lines.append("    no changed input alone moves the statistic: they move it together")
    return lines


def run(args: argparse.Namespace) -> int:
    from repro.claims.context import published_contexts
    from repro.cli.common import split_names
    from repro.cli.paths import output_file, write_json
    from repro.diagnostics.independent_inputs import CHOICE_RULE, SHOW_MOVED, independent_outcomes

    _reject(args)
    if args.json:  # a bad path fails now, not after every claim was computed
        output_file(args.json, "--json")
    results = []
    for ctx in published_contexts(split_names(args.study), args.data_dir, args.analysis):
        results.append((ctx, independent_outcomes(ctx)))
    outcomes = [r for _, rs in results for r in rs]
    body = rows(outcomes)
    widths = [max(len(row[i]) for row in [HEADER, *body]) for i in range(len(HEADER))]

    def line(row: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()

    out = [line(HEADER), line(["-" * w for w in widths]), *map(line, body)]
    moved = moved_lines(outcomes, SHOW_MOVED)
    if moved:
        out += ["", "inputs replaced, changed and moving each claim:", *moved]
    undeclared = [ctx.study.name for ctx, rs in results if rs and not rs[0].declared]
    if undeclared:
        out += ["", f"no independent inputs declared: {', '.join(undeclared)}"]
    n_ind = sum(r.independent is not None for r in outcomes)
    same = sum(r.independent is not None and r.verdict == r.reanalysis.verdict for r in outcomes)
    out += [
        "",
        "choice rule: " + CHOICE_RULE,
        "",
        f"{n_ind} of {len(outcomes)} claims have independent inputs, {same} of them with the "
        "re-analysis verdict; the others are re-analysis verdicts, never independent evidence",
    ]
    print("\n".join(out))
    if args.json:
        doc = {
            "source": "independent",
            "choice_rule": CHOICE_RULE,
            "studies": [
                {"study": ctx.study.name, "declared": bool(rs and rs[0].declared)}
                for ctx, rs in results
            ],
            "claims": [r.as_json() for r in outcomes],
        }
        print(f"wrote {write_json(args.json, doc)}")
    return 0

"""Report section: our measurements (mini-run warning, values next to benchmark.csv with
intervals, where each claim's inputs came from). Rendered by the runner stage
(``repro.runner.report``); empty when the report was made without measuring."""

from __future__ import annotations


def render(ctx) -> str:
    from repro.runner.report import render as _render

    return _render(ctx)

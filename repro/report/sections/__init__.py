"""Report sections, in order. Each entry is a module with ``render(ctx: ReportContext) -> str``
(markdown); a module may save figures with ``ctx.save_figure(fig, name)``. To add a section,
write a module and add one line here."""

SECTIONS = [
    "repro.report.sections.header",
    "repro.report.sections.claims",
    "repro.report.sections.bias_category",
    "repro.report.sections.benchmarks",
    "repro.report.sections.imagenetx",
    "repro.report.sections.quirks",
    "repro.report.sections.provenance",
]

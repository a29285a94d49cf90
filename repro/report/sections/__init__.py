"""Report sections, in order, as lazy ``"module:attr"`` references to their render functions.

Each section is a ``render(ctx: ReportContext) -> str`` function. ``LEADING`` open the report,
``STUDY`` open each study's group (followed by the sections of the study's study.toml, then
those of ``STUDY_END`` the study does not list itself, e.g. where it wants them), ``TRAILING``
close it. To add a core section, write a module and add one line here (a diagnostic's section:
its registration in ``repro.diagnostics.registry``); a study's own sections go in its
study.toml."""

from repro.diagnostics.registry import report_sections

LEADING = [
    "repro.report.sections.header:document",
    "repro.report.sections.summary:render",  # every claim's finding and strength, one screen
    "repro.report.sections.measurements:render",  # our measurements (empty without measuring)
]
STUDY = [
    "repro.report.sections.header:render",
    "repro.report.sections.claims:render",
    # robustness, replication, power, statements (estimand, equivalence, derived, turning point,
    # quirk survival): each diagnostic's section, in the registry's order
    *report_sections(),
]
STUDY_END = [
    # models placed among the study's population ([placement])
    "repro.report.sections.placement:render",
    # other labs' values of the study's checkpoints (studies that declare independent sources)
    "repro.report.sections.independent:render",
]
TRAILING = [
    "repro.report.sections.provenance:render",
]

"""The layout of the fitted claims table (``repro.diagnostics.terminal.fitted_rows``, ``wrap``): on
a
synthetic table, so each rule shows on its own."""

from __future__ import annotations

import pytest

from repro.diagnostics.terminal import fitted_rows, wrap

HEADER = ["claim", "value", "interval", "verdict", "evidence"]
BODY = [
    [
        "a_rather_long_claim_identifier",
        "0.25",
        "[0.125, 0.375]",
        "not_reproduced (known)",
        "re-analysis",
    ],
    ["short", "1", "-", "reproduced", "mixed (3 of 192 measured)"],
]
WHOLE = ("value", "interval")

pytestmark = pytest.mark.unit


def test_a_table_that_fits_keeps_one_line_per_claim():
    lines = fitted_rows(HEADER, BODY, 200, WHOLE)
    assert len(lines) == 4 and lines[2].startswith("a_rather_long_claim_identifier  0.25")
    assert lines[1].split() == ["-" * 30, "-" * 5, "-" * 14, "-" * 22, "-" * 25]


def test_a_narrow_table_puts_each_id_on_its_own_line_and_wraps_cells():
    lines = fitted_rows(HEADER, BODY, 60, WHOLE)
    assert all(len(line) <= 60 for line in lines), lines
    assert lines[0] == "claim" and "a_rather_long_claim_identifier" in lines and "short" in lines
    first = lines.index("a_rather_long_claim_identifier")
    assert lines[first + 1].startswith("  0.25   [0.125, 0.375]")  # the interval stays whole
    second = lines.index("short")
    below = lines[second + 1 :]
    assert len(below) >= 2  # the evidence wrapped inside its column
    assert " ".join(" ".join(below).split()).endswith("mixed (3 of 192 measured)")
    assert not any("left out" in line for line in lines)


def test_too_narrow_for_the_longest_words_leaves_the_last_columns_out_and_says_so():
    lines = fitted_rows(HEADER, BODY, 40, WHOLE)
    assert all(len(line) <= 40 for line in lines), lines
    note = " ".join(" ".join(lines[lines.index("short") + 2 :]).split())
    assert note == "(left out at this width: evidence; --wide shows every column)", lines
    assert not any("re-analysis" in line for line in lines)


def test_wrap_keeps_the_indent_and_indents_continuations():
    text = "  claim_id: " + "word " * 30
    lines = wrap(text.rstrip(), 40)
    assert lines[0].startswith("  claim_id: ") and all(
        line.startswith("    ") for line in lines[1:]
    )
    assert all(len(line) <= 40 for line in lines) and " ".join(" ".join(lines).split()) == " ".join(
        text.split()
    )
    assert wrap("  short", 40) == ["  short"]

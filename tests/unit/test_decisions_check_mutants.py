"""Shape-bias decisions checks (repro.scoring.decisions_check): the list of offending lines.

The error names at most five lines, joined by ", ", and says how many more there are only when
there are more than five.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.base.errors import DataError
from repro.scoring.decisions_check import check_trials

pytestmark = pytest.mark.unit

_PATH = Path("decisions.csv")


def _rows(n: int) -> list[dict]:
    """``n`` trials whose category (``cat``) disagrees with the image's shape class (``bird``)."""
    return [
        {
            "subj": "s01",
            "session": 1,
            "trial": t,
            "imagename": f"{t:04d}_s_s01_0_cat_00_bird{t}-clock2.png",
            "category": "cat",
        }
        for t in range(1, n + 1)
    ]


def _message(n: int) -> str:
    rows = _rows(n)
    with pytest.raises(DataError) as exc:
        check_trials(_PATH, rows, list(range(2, n + 2)))
    return str(exc.value)


def _expected(lines: str) -> str:
    return (
        f"decisions.csv: line(s) {lines}: column category disagrees with the shape class of the "
        "image name (line 2: category 'cat', imagename '0001_s_s01_0_cat_00_bird1-clock2.png' "
        "has shape class 'bird'; expected category to be that shape class: fix those rows)"
    )


def test_five_wrong_lines_are_all_shown_with_no_count_of_more():
    assert _message(5) == _expected("2, 3, 4, 5, 6")


def test_more_than_five_wrong_lines_show_five_and_count_the_rest():
    # 7 wrong rows on lines 2..8: the first five shown, 7 - 5 = 2 more
    assert _message(7) == _expected("2, 3, 4, 5, 6 (and 2 more)")


def test_one_wrong_line_is_shown_alone():
    assert _message(1) == _expected("2")

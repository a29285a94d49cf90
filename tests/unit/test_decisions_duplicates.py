"""Shape-bias decisions checks (repro.scoring.decisions_check): duplicate trials and images.

A trial (subject, session, trial number) written twice, or an image (subject, session, image
stem) shown twice, is a DataError naming the duplicate lines (at most five, then "(and N
more)"), the first duplicate's label, subject and session, and the two lines it is on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.base.errors import DataError
from repro.scoring.decisions_check import check_trials

pytestmark = pytest.mark.unit

_PATH = Path("decisions.csv")


def _row(trial: int, stem: str, subj: str = "s01", session: int = 2) -> dict:
    """One trial whose category is the shape class of its image (the first word of the stem
    without digits), so only the duplicate checks can fail."""
    shape = "".join(ch for ch in stem.split("-")[0] if not ch.isdigit())
    return {
        "subj": subj,
        "session": session,
        "trial": trial,
        "imagename": f"{trial:04d}_s_{subj}_0_{shape}_00_{stem}.png",
        "category": shape,
    }


def _message(rows: list[dict]) -> str:
    # the header is line 1, so rows are on lines 2, 3, ...
    with pytest.raises(DataError) as exc:
        check_trials(_PATH, rows, list(range(2, len(rows) + 2)))
    return str(exc.value)


def test_one_duplicate_trial_names_its_two_lines_subject_and_session():
    # trial 3 on line 2 (row 1) and again on line 4 (row 3); different images
    rows = [_row(3, "bird1-clock2"), _row(4, "cat1-clock2"), _row(3, "dog1-clock2")]
    assert _message(rows) == (
        "decisions.csv: duplicate trials on line(s) 4: trial 3 of subject 's01', session 2 is "
        "on lines 2 and 4 (expected each trial once)"
    )


def test_seven_duplicate_trials_show_five_lines_and_the_first_duplicate():
    # trials 1..7 on lines 2..8, then trials 1..7 again (new images) on lines 9..15: seven
    # duplicates on lines 9..15, five shown and 7 - 5 = 2 more; the first is trial 1 (2 and 9)
    first = [_row(t, f"bird{t}-clock2") for t in range(1, 8)]
    again = [_row(t, f"cat{t}-clock2") for t in range(1, 8)]
    assert _message(first + again) == (
        "decisions.csv: duplicate trials on line(s) 9, 10, 11, 12, 13 (and 2 more): trial 1 of "
        "subject 's01', session 2 is on lines 2 and 9 (expected each trial once)"
    )


def test_same_image_in_two_trials_is_a_duplicate_image():
    # the stem bird1-clock2 for subject s01, session 2 in trials 5 (line 2) and 6 (line 4)
    rows = [_row(5, "bird1-clock2"), _row(7, "cat1-clock2"), _row(6, "bird1-clock2")]
    assert _message(rows) == (
        "decisions.csv: duplicate images on line(s) 4: image 'bird1-clock2' of subject 's01', "
        "session 2 is on lines 2 and 4 (expected each image once)"
    )


def test_same_trial_or_image_in_other_sessions_or_subjects_is_no_duplicate():
    rows = [
        _row(1, "bird1-clock2"),
        _row(1, "bird1-clock2", session=3),
        _row(1, "bird1-clock2", subj="s02"),
    ]
    assert check_trials(_PATH, rows, [2, 3, 4]) is None

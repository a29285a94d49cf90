"""The report's placement strip figure marks a placed value that rests on decisions at chance
(issue 37): a grey cross labelled AT CHANCE, never the placed models' colour and star; a value
above chance keeps them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from repro.report.sections import placement_figure as pf

pytestmark = pytest.mark.unit


def _figure(chance):
    column = SimpleNamespace(column="shape-bias", label="shape bias")
    population = SimpleNamespace(label="the 48", values={f"m{i}": i / 50 for i in range(48)})
    rows = [
        (
            "random",
            SimpleNamespace(kind="measured", label="measured", value=0.5, interval=(0.42, 0.58)),
        ),
        (
            "real",
            SimpleNamespace(kind="measured", label="measured", value=0.25, interval=(0.22, 0.28)),
        ),
    ]
    return pf.strip(column, population, rows, [], chance)


def _placed_markers(fig):
    """(y tick label, marker, colour) of each placed model's point."""
    from matplotlib.colors import to_hex

    ax = fig.axes[0]
    labels = ax.get_yticklabels()
    ticks = {round(t): lab.get_text() for t, lab in zip(ax.get_yticks(), labels, strict=True)}
    out = {}
    for line in ax.lines:
        (y,) = line.get_ydata()
        if line.get_marker() in ("X", "*"):
            out[ticks[round(y)]] = (line.get_marker(), to_hex(line.get_color()))
    return out


def test_a_value_at_chance_is_a_grey_cross_labelled_at_chance():
    from matplotlib.colors import to_hex

    marks = _placed_markers(_figure([True, False]))
    assert marks == {
        "random\n(AT CHANCE)": ("X", to_hex(pf.CHANCE_COLOR)),
        "real": ("*", to_hex(pf.PLACED_COLOR)),
    }


def test_without_flags_every_placed_value_keeps_the_placed_marker():
    from matplotlib.colors import to_hex

    marks = _placed_markers(_figure(()))
    assert set(marks) == {"random", "real"}
    assert set(marks.values()) == {("*", to_hex(pf.PLACED_COLOR))}

"""The probe command's text output: counts print as integers, other values to 4 decimals."""

import pytest

from repro.cli.probe import _fmt

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "value, text",
    [
        (1200.0, "1200"),
        (0.0, "0"),
        (197.0, "197"),
        (0.23937, "0.2394"),
        (4.7222, "4.7222"),
        (None, "undefined"),
        (3, "3"),
        (2.0**53, "9007199254740992.0000"),
    ],
)
def test_values_print_counts_as_integers_and_rates_with_decimals(value, text):
    assert _fmt(value) == text

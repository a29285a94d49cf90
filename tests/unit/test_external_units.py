"""The units of externally known values (``repro.zoo.external_units``): each value has one, stated
or that of its column; a stated unit must fit the column, and the value must lie in its unit's
range; each mistake is one ConfigError line naming the entry, the unit and the range."""

from __future__ import annotations

import pytest

from repro.base.errors import ConfigError
from repro.zoo.external import external_values
from repro.zoo.external_units import check_unit, column_unit
from tests.unit.test_external_values import LITE0, _config

pytestmark = pytest.mark.unit


def _entry(column: str, value: float, unit: str | None = None) -> str:
    stated = f', unit = "{unit}"' if unit is not None else ""
    return (
        f'[models.{LITE0}.external]\n"{column}" = {{ value = {value}, protocol = "p", '
        f'source = "s"{stated} }}\n'
    )


def test_the_columns_units():
    assert column_unit("top1_acc/imagenet") == column_unit("top1_acc/imagenet_c") == "percent"
    assert column_unit("shape-bias") == "fraction"
    assert column_unit("metric/criticalband-16class-premade/bw") == "octaves"
    assert column_unit("metric/criticalband/cf_norm") == "cycles/image"
    assert column_unit("metric/criticalband/pns") == "fraction"
    assert column_unit("metric/bandpass/LFC/0.1") == "ratio"
    assert column_unit("c") is None
    assert check_unit("top1_acc/imagenet", 100.0, None) == ("percent", "")
    assert check_unit("shape-bias", 0.0, "fraction") == ("fraction", "")
    assert check_unit("c", 3.0, "ratio") == ("ratio", "")


def test_a_value_gets_its_columns_unit_or_the_stated_one(tmp_path, monkeypatch):
    _config(tmp_path, monkeypatch, _entry("top1_acc/imagenet", 75.1))
    assert external_values()[LITE0]["top1_acc/imagenet"].unit == "percent"
    _config(tmp_path, monkeypatch, _entry("shape-bias", 0.21, "fraction"))
    assert external_values()[LITE0]["shape-bias"].unit == "fraction"
    _config(tmp_path, monkeypatch, _entry("my/column", 2.5, "ratio"))
    assert external_values()[LITE0]["my/column"].unit == "ratio"
    _config(
        tmp_path,
        monkeypatch,
        '[paths]\nexternal = "known.csv"\n',
        "model,column,value,protocol,source,unit\n"
        f"{LITE0},top1_acc/imagenet,75.1,p,s,percent\n"
        f"{LITE0},shape-bias,0.24,p,s,\n",
    )
    got = external_values()[LITE0]
    assert (got["top1_acc/imagenet"].unit, got["shape-bias"].unit) == ("percent", "fraction")


@pytest.mark.parametrize(
    "text, csv, message",
    [
        (
            _entry("shape-bias", 21),
            None,
            f"[models.{LITE0}.external] 'shape-bias': value 21 is outside 0 to 1, the range of "
            "fraction (a fraction: 0.21, not 21)",
        ),
        (
            _entry("top1_acc/imagenet", 175.1),
            None,
            "'top1_acc/imagenet': value 175.1 is outside 0 to 100, the range of percent",
        ),
        (
            _entry("top1_acc/imagenet", 0.751, "fraction"),
            None,
            "'top1_acc/imagenet': column 'top1_acc/imagenet' is in percent, not fraction",
        ),
        (
            _entry("metric/criticalband/bw", -1.0),
            None,
            "value -1 is outside at least 0, the range of octaves",
        ),
        (_entry("shape-bias", 0.2, "percents"), None, "unit 'percents' is not one of percent,"),
        (_entry("c", 1.0), None, "column 'c' has no known unit: state it (unit = one of percent"),
        (
            '[paths]\nexternal = "known.csv"\n',
            f"model,column,value,protocol,source,unit\n{LITE0},shape-bias,24,p,s,fraction\n",
            "known.csv:2: value 24 is outside 0 to 1, the range of fraction",
        ),
        (
            '[paths]\nexternal = "known.csv"\n',
            "model,column,value,protocol,source,units\n",
            "header must be model,column,value,protocol,source (and optionally ,unit)",
        ),
    ],
)
def test_a_value_outside_its_unit_is_one_config_error(tmp_path, monkeypatch, text, csv, message):
    _config(tmp_path, monkeypatch, text, csv)
    with pytest.raises(ConfigError) as err:
        external_values()
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)

"""A study's ``[placement]`` declaration (study.toml; docs/howto/add-study.md, "Placement"):
parsed with its defaults, every malformed field a one-line error naming the file and the table,
and the built-in study's declaration (shape bias only on its own scale; the 16-class columns
declared not comparable)."""

from __future__ import annotations

import fnmatch

import pytest

from repro.base.errors import ConfigError
from repro.base.study import get_study, read_study

pytestmark = pytest.mark.unit

BASE = (
    'name = "s"\ntitle = "T"\ncitation = "C"\nclaims = "claims.toml"\n[table]\nfile = "table.csv"\n'
)
COLUMN = '[[placement.columns]]\ncolumn = "x"\nprotocol = "how x is made"\n'


def _folder(tmp_path, placement: str):
    (tmp_path / "study.toml").write_text(BASE + placement)
    (tmp_path / "claims.toml").write_text("")
    (tmp_path / "table.csv").write_text("model,x\na,1\n")
    return tmp_path


def test_no_placement_table_no_placement(tmp_path):
    assert read_study(_folder(tmp_path, "")).placement is None


def test_a_placement_is_read_with_its_defaults(tmp_path):
    p = read_study(_folder(tmp_path, "[placement]\n" + COLUMN)).placement
    assert (p.population, p.inside, p.outside, p.references, p.fits, p.not_comparable) == (
        "table",
        (),
        "",
        None,
        (),
        (),
    )
    (c,) = p.columns
    assert (c.column, c.label, c.values, c.protocol, c.population, c.interval) == (
        "x",
        "x",
        ("x",),
        "how x is made",
        "",
        None,
    )


def test_a_full_placement(tmp_path):
    p = read_study(
        _folder(
            tmp_path,
            '[placement]\npopulation = "mod:pop"\npopulation_label = "76 networks"\n'
            'inside = ["timm:resnet50"]\noutside = "why"\nreferences = "mod:refs"\n'
            '[[placement.columns]]\ncolumn = "bw"\nlabel = "bandwidth"\n'
            'values = ["metric/a/bw", "metric/b/bw"]\nprotocol = "16-class"\n'
            'population = "mod:other"\ninterval = "mod:iv"\nlarger = "wider"\n'
            '[[placement.fits]]\nbias = "b"\ncategory = "c"\ndegree = 2\n'
            '[[placement.not_comparable]]\nvalues = ["metric/x/*"]\nreason = "r"\n',
        )
    ).placement
    assert (p.population, p.population_label, p.inside, p.outside, p.references) == (
        "mod:pop",
        "76 networks",
        ("timm:resnet50",),
        "why",
        "mod:refs",
    )
    (c,) = p.columns
    assert (c.label, c.values, c.population, c.interval, c.larger) == (
        "bandwidth",
        ("metric/a/bw", "metric/b/bw"),
        "mod:other",
        "mod:iv",
        "wider",
    )
    assert (p.fits[0].bias, p.fits[0].category, p.fits[0].degree) == ("b", "c", 2)
    assert p.not_comparable[0].values == ("metric/x/*",) and p.not_comparable[0].reason == "r"


@pytest.mark.parametrize(
    "body, message",
    [
        ("[placement]\n", r"\[placement\]: needs at least one \[\[placement.columns\]\]"),
        ("[placement]\nranking = 1\n" + COLUMN, r"\[placement\]: unknown field\(s\) ranking"),
        ('[placement]\npopulation = "the 48"\n' + COLUMN, r"population must be \"table\""),
        ('[placement]\nreferences = "refs"\n' + COLUMN, r"is not a lazy reference"),
        (
            '[[placement.columns]]\ncolumn = "x"\n',
            r"\[\[placement.columns\]\] #1: field 'protocol' must be",
        ),
        ('[[placement.columns]]\nprotocol = "p"\n', r"#1: field 'column' must be"),
        (COLUMN + "values = []\n", r"field 'values' must name at least one column"),
        (COLUMN + "weight = 2\n", r"#1: unknown field\(s\) weight"),
        (COLUMN + COLUMN, r"column names repeat \(x\)"),
        (
            COLUMN + '[[placement.fits]]\nbias = "b"\ncategory = "c"\ndegree = 7\n',
            r"'degree' must be 1, 2 or 3",
        ),
        (
            COLUMN + '[[placement.fits]]\nbias = "b"\n',
            r"\[\[placement.fits\]\] #1: field 'category'",
        ),
        (
            COLUMN + '[[placement.not_comparable]]\nvalues = ["a"]\n',
            r"not_comparable\]\] #1: field 'reason'",
        ),
    ],
)
def test_a_bad_placement_is_a_one_line_error_naming_file_and_table(tmp_path, body, message):
    with pytest.raises(ConfigError, match=message) as err:
        read_study(_folder(tmp_path, body))
    assert (
        "study.toml" in str(err.value)
        and "placement" in str(err.value)
        and "\n" not in str(err.value)
    )


def test_the_built_in_study_places_shape_bias_only_on_its_scale():
    p = get_study("gavrikov2024").placement
    assert [c.column for c in p.columns] == ["shape-bias"] and p.columns[0].values == (
        "shape-bias",
    )
    assert p.population == "table" and "timm:resnet50" in p.inside and p.outside
    assert [(f.bias, f.category) for f in p.fits] == [("shape_bias", "id")]
    patterns = [v for nc in p.not_comparable for v in nc.values]
    for column in (
        "metric/criticalband-16class/bw",
        "metric/criticalband-16class-premade/cf",
        "metric/bandpass-16class/LFC/0.5",
    ):
        assert any(fnmatch.fnmatchcase(column, pat) for pat in patterns), column
    assert not any(fnmatch.fnmatchcase("shape-bias", pat) for pat in patterns)

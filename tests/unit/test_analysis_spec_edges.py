"""An analysis definition read from TOML (``repro.analysis.spec``): model selectors, the columns
an analysis reads, ``extends`` (what is merged entry by entry, what is replaced whole, ``drop``,
relative paths, the depth limit) and the refusals whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.analysis.spec import Derived, Selector, load_spec
from repro.base.errors import ConfigError

pytestmark = pytest.mark.unit

CATS = {"at": ["a1", "a2"], "base": ["b1", "b2", "b3"], "ssl": ["s1"]}
CANDIDATES = ["b3", "a1", "s1", "b1", "a2", "b2"]

BASE = """
name = "base"
alpha = 0.01
[population]
model_categories = "all"
[groups.total]
model_categories = "all"
[groups.at]
label = "AT"
model_categories = ["at"]
[categories.id]
label = "ID"
columns = ["acc/a", "acc/b"]
[categories.ood]
columns = ["acc/c", "acc/a"]
[biases.shape]
label = "Shape"
columns = ["sb"]
[biases.freq]
columns = ["lf", "acc/b"]
[benchmarks]
in = "acc/a"
other = "bench/x"
[bootstrap]
resamples = 3000
seed = 7
confidence = 0.9
"""


def _write(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


# ------------------------------------------------------------------------------- the selectors


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        ({}, CANDIDATES),
        ({"model_categories": "all"}, CANDIDATES),
        ({"model_categories": ("base", "ssl")}, ["b3", "s1", "b1", "b2"]),  # candidates' order
        ({"models": ("b2", "a1", "zz")}, ["b2", "a1", "zz"]),  # a list: its own order
        ({"exclude_model_categories": ("at",)}, ["b3", "s1", "b1", "b2"]),
        ({"exclude_models": ("s1", "b3")}, ["a1", "b1", "a2", "b2"]),
        (
            {"model_categories": ("base",), "exclude_models": ("b1",)},
            ["b3", "b2"],
        ),
        (
            {"models": ("a1", "b1"), "exclude_model_categories": ("base",)},
            ["a1"],
        ),
    ],
)
def test_a_selector_selects_in_order_less_the_excluded(fields, want):
    assert Selector(**fields).select(CANDIDATES, CATS, "w") == want


@pytest.mark.parametrize(
    "fields",
    [
        {"model_categories": ("base", "nope")},
        {"exclude_model_categories": ("nope",)},
        {"models": ("a1",), "exclude_model_categories": ("nope",)},
    ],
)
def test_an_unknown_model_category_is_named_with_the_known_ones(fields):
    with pytest.raises(ConfigError) as e:
        Selector(**fields).select(CANDIDATES, CATS, "f.toml: [groups.g]")
    assert (
        str(e.value) == "f.toml: [groups.g]: unknown model category 'nope' (known: at, base, ssl)"
    )


# ------------------------------------------------------------------------------ the definition


def test_a_definition_reads_every_table(tmp_path):
    path = _write(tmp_path / "mine.toml", BASE)
    spec = load_spec(path)
    assert (spec.name, spec.alpha, spec.origin) == ("base", 0.01, str(path))
    assert (spec.resamples, spec.seed, spec.confidence) == (3000, 7, 0.9)
    assert spec.categories == {
        "id": Derived("id", "ID", ("acc/a", "acc/b")),
        "ood": Derived("ood", "ood", ("acc/c", "acc/a")),  # the label defaults to the id
    }
    assert spec.biases == {
        "shape": Derived("shape", "Shape", ("sb",)),
        "freq": Derived("freq", "freq", ("lf", "acc/b")),
    }
    assert {g: (grp.id, grp.label) for g, grp in spec.groups.items()} == {
        "total": ("total", "total"),
        "at": ("at", "AT"),
    }
    assert spec.groups["at"].selector == Selector(model_categories=("at",))
    assert spec.benchmarks == {"in": "acc/a", "other": "bench/x"}
    assert spec.raw["bootstrap"] == {"resamples": 3000, "seed": 7, "confidence": 0.9}
    # every column once, in the order categories, biases, benchmarks first name it
    assert spec.columns() == ["acc/a", "acc/b", "acc/c", "sb", "lf", "bench/x"]


def test_defaults_name_alpha_and_bootstrap(tmp_path):
    body = BASE.replace('name = "base"\nalpha = 0.01\n', "").split("[bootstrap]")[0]
    spec = load_spec(_write(tmp_path / "plain.toml", body))
    assert (spec.name, spec.alpha) == ("plain", 0.05)  # the file's stem
    assert (spec.resamples, spec.seed, spec.confidence) == (2000, 0, 0.95)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("alpha = 1.0", "{p}: alpha = 1.0, expected a number strictly between 0 and 1"),
        ("alpha = 0.0", "{p}: alpha = 0.0, expected a number strictly between 0 and 1"),
        (
            "[bootstrap]\nconfidence = 1.0",
            "{p}: confidence = 1.0, expected a number strictly between 0 and 1",
        ),
        (
            "[bootstrap]\nresamples = 1999",
            "{p}: [bootstrap] resamples = 1999, expected at least 2000",
        ),
    ],
)
def test_fractions_and_resamples_out_of_range_are_refused_whole(tmp_path, line, message):
    base = BASE.replace("alpha = 0.01\n", "").split("[bootstrap]")[0]
    # a top-level key goes before the first table, a [bootstrap] table after the last one
    body = line + "\n" + base if not line.startswith("[") else base + line + "\n"
    path = _write(tmp_path / "bad.toml", body)
    with pytest.raises(ConfigError) as e:
        load_spec(path)
    assert str(e.value) == message.format(p=path)


def test_the_least_number_of_resamples_is_accepted(tmp_path):
    body = BASE.replace("resamples = 3000", "resamples = 2000")
    assert load_spec(_write(tmp_path / "ok.toml", body)).resamples == 2000


# ----------------------------------------------------------------------------------- extends


def test_extends_merges_entries_replaces_the_rest_and_drops(tmp_path):
    _write(tmp_path / "base.toml", BASE)
    sub = tmp_path / "sub"
    sub.mkdir()
    child = _write(
        sub / "child.toml",
        """
extends = "../base.toml"
[population]
models = ["a1", "b1", "b2"]
[groups.at]
drop = true
[groups.nothing]
drop = true
[groups.few]
models = ["a1", "b1"]
[categories.id]
columns = ["acc/z"]
[bootstrap]
seed = 3
""",
    )
    spec = load_spec(child)
    assert spec.name == "base" and spec.alpha == 0.01  # inherited
    assert spec.origin == str(child)
    assert spec.population == Selector(models=("a1", "b1", "b2"))  # replaced, not merged
    assert list(spec.groups) == ["total", "few"]  # at dropped, a drop of nothing ignored
    assert spec.categories["id"] == Derived("id", "id", ("acc/z",))  # an entry replaced whole
    assert spec.categories["ood"].columns == ("acc/c", "acc/a")  # the others kept
    # [bootstrap] replaced whole: the parent's resamples and confidence do not carry over
    assert (spec.resamples, spec.seed, spec.confidence) == (2000, 3, 0.95)
    assert "extends" not in spec.raw and spec.raw["groups"]["few"] == {"models": ["a1", "b1"]}


def test_extends_a_study_by_name(tmp_path):
    child = _write(tmp_path / "v.toml", 'extends = "gavrikov2024"\nalpha = 0.1\n')
    spec, study = load_spec(child), load_spec("gavrikov2024")
    assert spec.alpha == 0.1 and spec.biases == study.biases and spec.name == study.name
    assert study.origin.endswith("gavrikov2024/analysis.toml")


def test_a_chain_of_six_extends_is_read_and_seven_are_refused(tmp_path):
    _write(tmp_path / "f7.toml", BASE)
    for i in range(7):
        _write(tmp_path / f"f{i}.toml", f'extends = "f{i + 1}.toml"\n')
    assert load_spec(tmp_path / "f1.toml").name == "base"  # f1 ... f6 extend, f7 is read
    with pytest.raises(ConfigError) as e:
        load_spec(tmp_path / "f0.toml")
    deepest = (
        f"{tmp_path / 'f6.toml'}: `extends` chain is too deep (more than 5 files; check that no "
        "file extends itself)"
    )
    assert str(e.value).endswith(deepest)
    assert str(e.value).startswith(f"{tmp_path / 'f0.toml'}: extends = 'f1.toml': ")


def test_a_file_extending_itself_is_refused_once(tmp_path):
    path = _write(tmp_path / "loop.toml", 'extends = "loop.toml"\n')
    with pytest.raises(ConfigError) as e:
        load_spec(path)
    assert str(e.value) == (
        f"{path}: `extends` chain is too deep (more than 5 files; check that no file extends "
        "itself)"
    )


@pytest.mark.parametrize("value", ['""', "3", '["a.toml"]'])
def test_extends_that_names_nothing_is_refused_whole(tmp_path, value):
    path = _write(tmp_path / "x.toml", f"extends = {value}\n")
    with pytest.raises(ConfigError) as e:
        load_spec(path)
    shown = {'""': "''", "3": "3", '["a.toml"]': "['a.toml']"}[value]
    assert str(e.value) == f"{path}: extends = {shown}, expected a study name or a .toml path"


def test_an_unknown_study_or_one_without_a_definition_is_named(tmp_path):
    with pytest.raises(ConfigError) as e:
        load_spec("no-such-study")
    assert str(e.value).startswith("analysis definition 'no-such-study': not a .toml path, and ")
    assert "no-such-study" in str(e.value)[60:]
    with pytest.raises(ConfigError) as e:
        load_spec("imagenetx")
    assert str(e.value).endswith("study.toml: study 'imagenetx' has no analysis definition")


def test_a_parents_error_is_prefixed_with_the_child_that_extends_it(tmp_path):
    _write(tmp_path / "parent.toml", 'extends = ""\n')
    child = _write(tmp_path / "child.toml", 'extends = "parent.toml"\n')
    with pytest.raises(ConfigError) as e:
        load_spec(child)
    assert str(e.value) == (
        f"{child}: extends = 'parent.toml': {tmp_path / 'parent.toml'}: extends = '', expected a "
        "study name or a .toml path"
    )


def test_biases_are_merged_entry_by_entry_and_a_parent_may_lack_a_table(tmp_path):
    _write(tmp_path / "base.toml", BASE)
    child = _write(
        tmp_path / "child.toml",
        'extends = "base.toml"\n[biases.shape]\ncolumns = ["sb2"]\n[biases.freq]\ndrop = true\n',
    )
    spec = load_spec(child)
    assert spec.biases == {"shape": Derived("shape", "shape", ("sb2",))}
    # a parent without [groups]: the child's entries are the whole table
    _write(
        tmp_path / "nogroups.toml",
        BASE.replace('[groups.total]\nmodel_categories = "all"\n', "").replace(
            '[groups.at]\nlabel = "AT"\nmodel_categories = ["at"]\n', ""
        ),
    )
    assert "[groups" not in (tmp_path / "nogroups.toml").read_text()
    child = _write(
        tmp_path / "adds.toml", 'extends = "nogroups.toml"\n[groups.mine]\nmodels = ["a1", "b1"]\n'
    )
    assert list(load_spec(child).groups) == ["mine"]


def test_a_relative_path_is_read_from_the_working_directory(tmp_path, monkeypatch):
    _write(tmp_path / "here.toml", BASE)
    monkeypatch.chdir(tmp_path)
    spec = load_spec("here.toml")
    assert spec.name == "base" and spec.origin == "here.toml"


def test_a_definition_that_is_not_toml_names_what_was_expected(tmp_path):
    path = _write(tmp_path / "bad.toml", "[population\n")
    with pytest.raises(ConfigError) as e:
        load_spec(path)
    message = str(e.value)
    assert message.startswith(f"{path}: not valid TOML (")
    assert message.endswith("; expected an analysis definition (.toml))")

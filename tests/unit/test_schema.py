"""The schema adapter (repro.base.schema): a pydantic validation error becomes the one-line
ConfigError its declaration states, naming the file, the table and the field; the first error
reported is the first in the file; templates may quote what the file holds (braces included)."""

from __future__ import annotations

from typing import Annotated, ClassVar

import pytest
from pydantic import Field

from repro.base.errors import ConfigError
from repro.base.schema import INTERNAL, Expect, Int, check, keyed, rule, table

pytestmark = pytest.mark.unit


@table
class Inner:
    WHERE: ClassVar[str] = "{parent}: [inner.{key}]"
    INVALID: ClassVar[str] = "{where}: expected a table, got {value!r}"
    name: Annotated[str, INTERNAL]
    size: Annotated[
        Int,
        rule(lambda n: n > 0, "{where}: size = {value}, expected a positive integer"),
        Expect(
            "{where}: size = {value!r}, expected an integer", missing="{where}: missing {missing}"
        ),
    ]
    tags: Annotated[
        tuple[str, ...],
        Expect(
            "{where}: tags must be a list of strings, got {item!r} in {value!r}",
            top="{where}: tags must be a list, got {value!r}",
        ),
    ] = ()


@table
class Outer:
    WHERE: ClassVar[str] = "{parent}"
    title: Annotated[
        str, Field(min_length=1), Expect("{where}: field {key!r} must be a non-empty string")
    ]
    inner: Annotated[
        dict[str, Inner], keyed("name"), Expect(top="{where}: [inner] must be a table of tables")
    ] = Field(default_factory=dict)
    items: tuple[Inner, ...] = ()


def message(data) -> str:
    with pytest.raises(ConfigError) as err:
        check(Outer, data, "f.toml")
    return str(err.value)


def test_a_valid_file_is_the_declared_objects():
    out = check(Outer, {"title": "t", "inner": {"a": {"size": 3, "tags": ["x"]}}}, "f.toml")
    assert out.inner["a"] == Inner("a", 3, ("x",)) and out.items == ()


@pytest.mark.parametrize(
    "data,expected",
    [
        ({}, "f.toml: field 'title' must be a non-empty string"),
        ({"title": ""}, "f.toml: field 'title' must be a non-empty string"),
        (
            {"title": "t", "titel": 1},
            "f.toml: unknown key 'titel'; did you mean 'title'? (known: title, inner, items)",
        ),
        ({"title": "t", "inner": 3}, "f.toml: [inner] must be a table of tables"),
        ({"title": "t", "inner": {"a": 3}}, "f.toml: [inner.a]: expected a table, got 3"),
        ({"title": "t", "inner": {"a": {}}}, "f.toml: [inner.a]: missing size"),
        (
            {"title": "t", "inner": {"a": {"size": True}}},
            "f.toml: [inner.a]: size = True, expected an integer",
        ),
        (
            {"title": "t", "inner": {"a": {"size": 0}}},
            "f.toml: [inner.a]: size = 0, expected a positive integer",
        ),
        (
            {"title": "t", "inner": {"a": {"size": 1, "tags": "x"}}},
            "f.toml: [inner.a]: tags must be a list, got 'x'",
        ),
        (
            {"title": "t", "inner": {"a": {"size": 1, "tags": ["x", 2]}}},
            "f.toml: [inner.a]: tags must be a list of strings, got 2 in ['x', 2]",
        ),
        (
            {"title": "t", "inner": {"a": {"size": 1, "sise": 2}}},
            "f.toml: [inner.a]: unknown key 'sise'; did you mean 'size'? (known: size, tags)",
        ),
        (
            {"title": "t", "inner": {"a": {"size": 1, "name": "b"}}},
            "f.toml: [inner.a]: unknown key 'name' (a table's name is its key)",
        ),
    ],
)
def test_each_error_is_the_line_its_declaration_states(data, expected):
    assert message(data) == expected


def test_the_first_error_reported_is_the_first_in_the_file():
    """Two wrong fields: the one written first is named, whatever the declaration order."""
    assert (
        message({"inner": {"a": {"size": "x"}}, "title": 3})
        == "f.toml: [inner.a]: size = 'x', expected an integer"
    )
    assert (
        message({"title": 3, "inner": {"a": {"size": "x"}}})
        == "f.toml: field 'title' must be a non-empty string"
    )
    # an entry of an array of tables: its key is its index
    assert (
        message({"title": "t", "items": [{"name": "a", "size": 1}, {"name": "b", "size": -1}]})
        == "f.toml: [inner.1]: size = -1, expected a positive integer"
    )


def test_quoted_input_with_braces_is_not_a_template():
    assert (
        message({"title": "t", "inner": {"{x}": {"size": "{y}"}}})
        == "f.toml: [inner.{x}]: size = '{y}', expected an integer"
    )


def test_an_error_in_code_is_not_turned_into_a_file_error():
    """Constructed in code (no file), a table validates its arguments like
    any pydantic dataclass."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Inner("a", "three")

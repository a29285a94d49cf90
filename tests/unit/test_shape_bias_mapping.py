"""The shape-bias probe's category mapping: the default, one named, or one given as an object (a
16-class mapping of one's own), each used as given."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from repro.base.errors import UnknownNameError
from repro.datasets.categories16 import DEFAULT_MAPPING, get_mapping
from repro.probes.shape_bias import ShapeBias

pytestmark = pytest.mark.unit

SOURCE = SimpleNamespace(name="cue-conflict")


class Model:
    pass


def test_the_default_and_a_named_mapping_are_the_registered_one():
    default = ShapeBias(SOURCE, Model()).mapping
    named = ShapeBias(SOURCE, Model(), mapping=DEFAULT_MAPPING).mapping
    assert not isinstance(named, str)
    assert default.categories == named.categories == get_mapping().categories
    assert ShapeBias(SOURCE, Model()).subj == "Model"


def test_a_mapping_object_is_used_as_given():
    mine = SimpleNamespace(categories=("a", "b"))
    assert ShapeBias(SOURCE, Model(), mapping=mine).mapping is mine


def test_an_unknown_mapping_name_is_refused_by_name():
    with pytest.raises(UnknownNameError, match="unknown category mapping 'model-vs-human-61'"):
        ShapeBias(SOURCE, Model(), mapping="model-vs-human-61")

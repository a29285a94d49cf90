"""The dataset specs are data (repro/datasets/data/datasets.toml): read into the registry with
their names resolved, and a wrong file is a ConfigError naming the file, the table and the field."""

from __future__ import annotations

import re

import pytest

from repro.base.errors import ConfigError
from repro.datasets.specs import (
    AS_IS_224,
    CATEGORIES16,
    IMAGE_FILE,
    IMAGENET_C_CORRUPTIONS,
    SPECS,
    read_specs,
)

pytestmark = pytest.mark.unit


def test_the_file_declares_the_eleven_datasets_with_names_resolved():
    assert list(SPECS) == [
        "imagenet_val",
        "imagenet_v2",
        "imagenet_a",
        "imagenet_r",
        "imagenet_sketch",
        "imagenet_c",
        "imagenet_cbar",
        "cue_conflict",
        "stylized",
        "graysplit",
        "cbmsplit",
    ]
    c = SPECS["imagenet_c"]
    assert c.corruptions == IMAGENET_C_CORRUPTIONS and c.severities == (1, 2, 3, 4, 5)
    assert c.preprocessing == AS_IS_224 and c.total == 50_000 and c.per_class == 50
    assert SPECS["imagenet_a"].file_pattern == IMAGE_FILE and SPECS["imagenet_a"].per_class is None
    cue = SPECS["cue_conflict"]
    assert cue.file_regex().fullmatch("airplane1-bicycle2.png")
    assert not cue.file_regex().fullmatch("horse1-bicycle2.png")  # not one of the 16
    assert "{categories}" not in cue.file_pattern
    assert all(c in cue.file_pattern for c in CATEGORIES16)
    assert re.fullmatch(SPECS["imagenet_val"].file_pattern, "ILSVRC2012_val_00000001.JPEG")


#: a complete table (imagenet_v2's fields), valid as it stands
COMPLETE = """[x]
title = "t"
layout = "index_folders"
classes = "index1k"
total = 10
preprocessing = "resize_crop"
file_pattern = 'image_file'
name_style = "relpath"
label_space = "imagenet1k"
pattern_help = "an image file"
source = "s"
mini_classes = 1
"""


def test_a_complete_table_reads_and_one_without_per_class_has_none(tmp_path):
    path = tmp_path / "datasets.toml"
    path.write_text(COMPLETE)
    (spec,) = read_specs(path)
    assert spec.name == "x" and spec.per_class is None and spec.file_pattern == IMAGE_FILE


@pytest.mark.parametrize(
    "text, says",
    [
        ("[x]\ntitle = 1\nbogus = 2\n", "[x] unknown field(s) bogus"),
        (COMPLETE.replace("resize_crop", "resize"), "[x] preprocessing = 'resize': expected"),
        (COMPLETE + 'corruptions = "c"\n', "[x] corruptions = 'c'"),
        (COMPLETE.replace("file_pattern = 'image_file'\n", ""), "missing field(s) file_pattern"),
        ('[x]\npreprocessing = "as_is_224"\n', "[x] missing field(s) title, layout, classes"),
        ("[x\n", "cannot read the dataset specs"),
        ("x = 1\n", "'x' is not a table"),
    ],
)
def test_a_wrong_specs_file_names_the_file_the_table_and_the_field(tmp_path, text, says):
    path = tmp_path / "datasets.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_specs(path)
    assert str(err.value).startswith(str(path)) and says in str(err.value)

"""Dataset readers on generated mini data, and every layout validation error (message checked)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from repro.base.errors import DataError, UnknownNameError
from repro.datasets import SPECS, make_mini, open_dataset, open_files
from repro.datasets.classes import class_folders, imagenet_wnids
from repro.datasets.specs import CATEGORIES16

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mini")
    make_mini(root, per_class=1, seed=0)
    return root


def _copy(mini: Path, name: str, tmp_path: Path) -> Path:
    dst = tmp_path / name
    shutil.copytree(mini / name, dst)
    return dst


# --- readers on make-mini output ------------------------------------------------------------


@pytest.mark.parametrize(
    "name", [n for n, s in SPECS.items() if s.has_mini]
)  # GraySplit/CBMSplit: real only
def test_every_reader_reads_its_mini_copy(mini, name):
    spec = SPECS[name]
    marker = json.loads((mini / name / ".repro-mini.json").read_text())
    src = open_files(name, mini / name)
    assert src.mini is True
    assert (
        len(src)
        == marker["images"]
        == len(marker["classes"]) * marker["per_class"] * len(spec.conditions)
    )
    batches = list(src.batches(64)) if spec.layout != "corruptions" else []
    if batches:
        names = [n for b in batches for n in b.names]
        labels = np.concatenate([b.labels for b in batches])
        assert len(set(names)) == len(names) == len(src)
        assert all(
            b.images.shape[1:] == (3, 224, 224) and b.images.dtype == np.uint8 for b in batches
        )
        top = 16 if spec.label_space == "categories16" else 1000
        assert labels.min() >= 0 and labels.max() < top


def test_imagenet_val_labels_are_sorted_wnid_indices_in_imagefolder_order(mini):
    src = open_files("imagenet_val", mini)  # the make-mini top folder is accepted as root
    wnids = imagenet_wnids()
    assert wnids == sorted(wnids)
    for it in src.items:
        wnid = Path(it.path).parent.name
        assert it.label == wnids.index(wnid)
        assert re.fullmatch(r"ILSVRC2012_val_\d{8}\.JPEG", it.name)
    paths = [it.path for it in src.items]
    assert paths == sorted(paths)  # torchvision ImageFolder order (sorted wnids, sorted files)


def test_v2_folder_name_is_the_class_index_not_imagefolder_order(mini):
    src = open_files("imagenet_v2", mini / "imagenet_v2")
    by_folder = {it.name.split("/")[0]: it.label for it in src.items}
    assert by_folder["10"] == 10
    assert by_folder["990"] == 990
    lexicographic = sorted(by_folder)  # what ImageFolder would do
    assert lexicographic.index("10") == 1 and by_folder["10"] != 1
    assert [it.label for it in src.items] == sorted(it.label for it in src.items)


def test_full_size_v2_folder_10_is_class_10_not_imagefolder_class_2(tmp_path):
    root = tmp_path / "v2"
    for k in range(1000):
        (root / str(k)).mkdir(parents=True)
        for j in range(10):
            (root / str(k) / f"{k:03d}{j}.jpeg").touch()  # layout only: nothing is decoded
    src = open_files("imagenet_v2", root)
    assert len(src) == 10_000 and src.mini is False
    assert sorted(os.listdir(root)).index("10") == 2  # torchvision ImageFolder's class index
    assert {it.label for it in src.items if it.name.startswith("10/")} == {10}
    assert [it.label for it in src.items] == [k for k in range(1000) for _ in range(10)]


def test_v2_zero_padded_folders_map_by_value_and_duplicates_are_rejected(mini, tmp_path):
    root = _copy(mini, "imagenet_v2", tmp_path)
    os.rename(root / "10", root / "010")  # as the study's fix_inv2.py renames them
    src = open_files("imagenet_v2", root)
    assert {it.label for it in src.items if it.name.startswith("010/")} == {10}
    (root / "10").mkdir()
    with pytest.raises(
        DataError, match=r"imagenet_v2 at .*: folders '010' and '10' both name class 10"
    ):
        open_files("imagenet_v2", root)


def test_imagenet_a_and_r_labels_are_1000_class_indices_of_their_200_classes(mini):
    for name, kind in (("imagenet_a", "imagenet_a"), ("imagenet_r", "imagenet_r")):
        allowed = {imagenet_wnids().index(w) for w in class_folders(kind)}
        labels = {it.label for it in open_files(name, mini).items}
        assert len(allowed) == 200 and labels <= allowed and len(labels) == SPECS[name].mini_classes


def test_imagenet_c_has_every_corruption_and_severity_with_per_condition_parts(mini):
    src = open_files("imagenet_c", mini)
    assert len(src.parts) == 19 * 5
    assert "saturate/5" in src.parts and "speckle_noise/1" in src.parts
    part = src.parts["fog/3"]
    assert all(it.name.startswith("fog/3/n") for it in part.items)
    cbar = open_files("imagenet_cbar", mini)
    assert len(cbar.parts) == 10 * 5 and "cocentric_sine_waves/2" in cbar.parts


def test_cue_conflict_names_carry_shape_and_texture_and_label_is_the_shape(mini):
    src = open_files("cue_conflict", mini)
    assert len({it.label for it in src.items}) == 16
    same = 0
    for it in src.items:
        shape, texture = re.fullmatch(r"([a-z]+)\d+-([a-z]+)\d+\.png", it.name).groups()
        assert CATEGORIES16[it.label] == shape and texture in CATEGORIES16
        same += shape == texture
    assert same == 16  # one shape==texture image per category, like the 80 real ones


def test_stylized_reads_dnn_session_layout_and_labels_from_name(mini):
    src = open_files("stylized", mini)
    for it in src.items:
        assert CATEGORIES16[it.label] == it.name.split("_")[4]


# --- validation errors ---------------------------------------------------------------------


def test_missing_root(tmp_path):
    with pytest.raises(
        DataError,
        match=rf"^imagenet_val at {re.escape(str(tmp_path / 'absent'))}: folder not found "
        r"\(expected ILSVRC2012 validation set: <wnid>/<image>\)$",
    ):
        open_dataset("imagenet_val", tmp_path / "absent")


def test_no_root_configured_names_env_var_and_toml(tmp_path, monkeypatch):
    monkeypatch.delenv("REPRO_IMAGENET_SKETCH_ROOT", raising=False)
    (tmp_path / "none.toml").write_text(
        ""
    )  # an empty config (a missing REPRO_CONFIG file is an error)
    monkeypatch.setenv("REPRO_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(
        DataError,
        match=r"imagenet_sketch: no root configured \(set REPRO_IMAGENET_SKETCH_ROOT or "
        r"\[datasets\] imagenet_sketch",
    ):
        open_dataset("imagenet_sketch")


def test_root_from_env_and_from_repro_toml(mini, tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_IMAGENET_R_ROOT", str(mini / "imagenet_r"))
    assert len(open_files("imagenet_r")) == 20
    monkeypatch.delenv("REPRO_IMAGENET_R_ROOT")
    monkeypatch.setenv("REPRO_CONFIG", str(mini / "repro.toml"))  # written by make-mini
    assert len(open_files("imagenet_r")) == 20


def test_full_size_val_missing_one_class_folder(tmp_path):
    root = tmp_path / "val"
    for w in imagenet_wnids()[1:]:
        (root / w).mkdir(parents=True)
    with pytest.raises(
        DataError,
        match=rf"^imagenet_val at {re.escape(str(root))}: expected 1000 class folders "
        r"with 50 images each, found 999 folders; missing n01440764$",
    ):
        open_dataset("imagenet_val", root)


def test_full_size_imagenet_a_total_count(tmp_path):
    root = tmp_path / "a"
    for w in class_folders("imagenet_a"):
        (root / w).mkdir(parents=True)
        (root / w / "0.1_x.jpg").touch()
    (root / "n01440764").mkdir()  # not an ImageNet-A class
    with pytest.raises(
        DataError,
        match=r"expected 200 class folders with 7500 images in all, found 201 folders; "
        r"unexpected n01440764$",
    ):
        open_dataset("imagenet_a", root)
    (root / "n01440764").rmdir()
    with pytest.raises(
        DataError, match=r"expected 200 class folders with 7500 images in all, found 200 images$"
    ):
        open_dataset("imagenet_a", root)


def test_mini_missing_class_folder(mini, tmp_path):
    root = _copy(mini, "imagenet_val", tmp_path)
    shutil.rmtree(root / "n01440764")
    with pytest.raises(
        DataError,
        match=r"imagenet_val at .*: expected 100 class folders with 1 images each, "
        r"found 99 folders; missing n01440764$",
    ):
        open_dataset("imagenet_val", root)


def test_mini_wrong_count(mini, tmp_path):
    root = _copy(mini, "imagenet_sketch", tmp_path)
    shutil.copy(root / "n01440764" / "sketch_0.JPEG", root / "n01440764" / "sketch_99.JPEG")
    with pytest.raises(
        DataError,
        match=r"imagenet_sketch at .*: expected 100 class folders with 1 images each, "
        r"found 2 images in n01440764$",
    ):
        open_dataset("imagenet_sketch", root)


def test_bad_file_name(mini, tmp_path):
    root = _copy(mini, "imagenet_val", tmp_path)
    f = next((root / "n01440764").iterdir())
    f.rename(f.with_name("val_1.jpg"))
    with pytest.raises(
        DataError,
        match=r"imagenet_val at .*: n01440764/val_1\.jpg: file name does not match "
        r"ILSVRC2012_val_<8 digits>\.JPEG$",
    ):
        open_dataset("imagenet_val", root)


def test_cue_conflict_bad_name_and_wrong_folder(mini, tmp_path):
    root = _copy(mini, "cue_conflict", tmp_path)
    f = sorted((root / "bear").iterdir())[0]
    f.rename(root / "bear" / "bear1_cat2.png")
    with pytest.raises(
        DataError,
        match=r"cue_conflict at .*: bear/bear1_cat2\.png: file name does not match "
        r"<shape><n>-<texture><n>\.png",
    ):
        open_dataset("cue_conflict", root)
    (root / "bear" / "bear1_cat2.png").rename(root / "bear" / "dog1-cat2.png")
    with pytest.raises(
        DataError,
        match=(
            r"bear/dog1-cat2\.png: shape class 'dog' in the file name does not match its "
            r"folder 'bear'"
        ),
    ):
        open_dataset("cue_conflict", root)


def test_imagenet_c_missing_severity(mini, tmp_path):
    root = _copy(mini, "imagenet_c", tmp_path)
    shutil.rmtree(root / "fog" / "3")
    with pytest.raises(
        DataError,
        match=r"imagenet_c at .*: expected 19 corruptions x 5 severities .*found 19 "
        r"corruption folders; missing fog/3$",
    ):
        open_dataset("imagenet_c", root)


def test_imagenet_c_missing_class_in_one_condition(mini, tmp_path):
    root = _copy(mini, "imagenet_c", tmp_path)
    shutil.rmtree(next((root / "snow" / "2").iterdir()))
    with pytest.raises(
        DataError,
        match=r"imagenet_c at .*: snow/2: expected 2 class folders with 1 images each, "
        r"found 1 folders; missing n01440764$",
    ):
        open_dataset("imagenet_c", root)


def test_stylized_without_session_folder(mini, tmp_path):
    root = _copy(mini, "stylized", tmp_path)
    shutil.rmtree(root / "dnn")
    with pytest.raises(DataError, match=r"stylized at .*: expected a dnn/session-1/ folder"):
        open_dataset("stylized", root)


def test_mini_required_but_real_layout(tmp_path):
    (tmp_path / "x").mkdir()
    with pytest.raises(DataError, match=r"imagenet_r at .*: not a generated mini copy"):
        open_dataset("imagenet_r", tmp_path / "x", mini=True)


def test_corrupt_mini_manifest(mini, tmp_path):
    root = _copy(mini, "imagenet_r", tmp_path)
    (root / ".repro-mini.json").write_text(
        json.dumps(
            {
                "format": "repro-mini/1",
                "dataset": "imagenet_r",
                "classes": ["n01440764"],
                "per_class": 1,
            }
        )
    )
    with pytest.raises(
        DataError,
        match=r"\.repro-mini\.json: field 'classes' must list real imagenet_r class "
        r"folders; not valid: n01440764",
    ):
        open_dataset("imagenet_r", root)


def test_as_is_dataset_rejects_a_file_that_is_not_224(mini, tmp_path, torch_threads):
    from PIL import Image

    root = _copy(mini, "cue_conflict", tmp_path)
    f = sorted((root / "car").iterdir())[1]
    Image.new("RGB", (256, 224)).save(f)
    src = open_dataset("cue_conflict", root, cache=False)
    with pytest.raises(
        DataError, match=rf"{re.escape(str(f))}: expected a 224x224 image .* found 256x224"
    ):
        list(src.batches(16))


def test_unknown_dataset_name_suggests():
    with pytest.raises(
        UnknownNameError, match=r"unknown dataset 'imagenet_skecth'.*did you mean 'imagenet_sketch'"
    ):
        open_dataset("imagenet_skecth")


# --- make-mini -----------------------------------------------------------------------------


def _digest(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "repro.toml"
    }


def test_make_mini_is_deterministic_and_seeded(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d, seed in ((a, 0), (b, 0), (c, 1)):
        make_mini(d, per_class=1, seed=seed, datasets=["imagenet_v2", "cue_conflict"])
    assert _digest(a) == _digest(b)
    assert _digest(a) != _digest(c)

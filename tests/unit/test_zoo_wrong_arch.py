"""A checkpoint of another architecture than its entry declares: the error names the architecture
as the likely cause (not the remap) and lists the zoo's architectures, with the remap, that the
file would load into (repro.zoo.arch_match); a checkpoint off by a prefix still gets the remap
error. Every [remaps] entry is documented in docs/zoo.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from repro.base.errors import CheckpointError
from repro.zoo import load_model
from repro.zoo.arch_match import matching, mostly_mismatched
from repro.zoo.loaders import architecture_keys, zoo_architectures
from repro.zoo.specs import builtin_zoo

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lite0_state():
    """A random-weights EfficientNet-Lite0 (timm) state dict: real keys and shapes."""
    import timm

    torch.manual_seed(0)
    return timm.create_model("tf_efficientnet_lite0", pretrained=False).state_dict()


def _config(tmp_path, monkeypatch, path: Path, **fields: str) -> None:
    extra = "".join(f'{k} = "{v}"\n' for k, v in fields.items())
    cfg = tmp_path / "repro.toml"
    cfg.write_text(
        f'[models.mine]\nsource = "local"\nreference = "{path}"\ncitation = "me"\n{extra}'
    )
    monkeypatch.setenv("REPRO_CONFIG", str(cfg))


def test_the_zoo_knows_its_architectures():
    known = zoo_architectures()
    assert {"timm:resnet50", "torchvision:resnet50", "timm:tf_efficientnet_lite0"} <= set(known)
    assert not [a for a in known if a.startswith("tiny:")]
    keys = architecture_keys("timm:resnet50")
    assert len(keys) == 320 and all(t.is_meta for t in keys.values())  # built on meta


def test_a_lite0_checkpoint_declared_as_resnet50_names_the_architecture(
    lite0_state, tmp_path, monkeypatch
):
    path = tmp_path / "lite0.pth"
    torch.save(lite0_state, path)
    _config(tmp_path, monkeypatch, path)  # arch left out: the default timm:resnet50
    with pytest.raises(CheckpointError) as err:
        load_model("mine", weights_dir=tmp_path / "w")
    msg = str(err.value)
    assert msg.startswith(
        f"{path}: does not fit the architecture timm:resnet50 of model 'mine' after remap 'none': "
        "only 4 of its 267 keys are in the file (263 missing, 291 unexpected of the file's 296 "
        "tensors), so the checkpoint was most likely saved from another network"
    ), msg
    # the architecture it was saved from, with the plain remap (its keys are timm's own)
    fix = 'its tensors fit the zoo\'s arch = "timm:tf_efficientnet_lite0" with remap = "none"'
    assert fix in msg
    assert "lite1" not in msg and "lite2" not in msg  # other widths and depths do not fit
    assert "declare deliberate drops/renames" not in msg  # the remap is not the suggested fix
    # and the suggestion is right: with it, the same file loads
    _config(tmp_path, monkeypatch, path, arch="timm:tf_efficientnet_lite0")
    model = load_model("mine", weights_dir=tmp_path / "w")
    assert torch.equal(model.model.conv_stem.weight, lite0_state["conv_stem.weight"])


def test_another_implementations_layout_is_matched_by_position(lite0_state, tmp_path, monkeypatch):
    """The issue's case: EfficientNet-PyTorch keys (another layout, same tensors in the same
    order) under the default ResNet-50: the suggestion is Lite0 with the positional remap."""
    renamed = {
        f"_blocks.{i}.{key.rsplit('.', 1)[-1]}": value
        for i, (key, value) in enumerate(lite0_state.items())
    }
    path = tmp_path / "effnet_pytorch.pth"
    torch.save(renamed, path)
    _config(tmp_path, monkeypatch, path)
    with pytest.raises(CheckpointError) as err:
        load_model("mine", weights_dir=tmp_path / "w")
    assert 'arch = "timm:tf_efficientnet_lite0" with remap = "positional"' in str(err.value)
    _config(tmp_path, monkeypatch, path, arch="timm:tf_efficientnet_lite0", remap="positional")
    assert load_model("mine", weights_dir=tmp_path / "w").spec.arch.endswith("lite0")


def test_a_file_no_zoo_architecture_fits_says_so(tmp_path, monkeypatch):
    path = tmp_path / "mlp.pth"
    torch.save({"fc1.weight": torch.zeros(4, 3), "fc2.weight": torch.zeros(2, 4)}, path)
    _config(tmp_path, monkeypatch, path)
    with pytest.raises(CheckpointError) as err:
        load_model("mine", weights_dir=tmp_path / "w")
    msg = str(err.value)
    assert "none of the zoo's architectures (timm:resnet50, " in msg
    assert "fits it under any [remaps] entry: set arch to the timm or torchvision name" in msg


def test_a_prefix_off_checkpoint_still_gets_the_remap_error(tmp_path, monkeypatch):
    """Most keys fit after stripping a prefix the entry did not declare: the remap is the fix."""
    import timm

    state = timm.create_model("resnet50", pretrained=False).state_dict()
    del state["fc.bias"]  # one key off: a remap/drop problem, not another network
    path = tmp_path / "r50.pth"
    torch.save(state, path)
    _config(tmp_path, monkeypatch, path)
    with pytest.raises(CheckpointError) as err:
        load_model("mine", weights_dir=tmp_path / "w")
    msg = str(err.value)
    assert "missing keys (1): fc.bias" in msg and "declare deliberate drops/renames" in msg
    assert "another network" not in msg


def test_mostly_mismatched_counts_the_architectures_keys():
    target = {f"k{i}": None for i in range(10)} | {"bn.num_batches_tracked": None}
    assert mostly_mismatched({f"k{i}": None for i in range(4)}, target)  # 4 of 10
    assert not mostly_mismatched({f"k{i}": None for i in range(5)}, target)  # 5 of 10
    assert matching({"x": torch.zeros(1)}, {"a": {"x": torch.zeros(2)}}, builtin_zoo().remaps) == []


def test_every_remap_is_documented_with_when_to_use_it():
    """docs/zoo.md has a Remaps table: one row per [remaps] entry of models.toml, each with when
    to use it."""
    text = (ROOT / "docs" / "zoo.md").read_text()
    section = text.split("\n## Remaps\n", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `([a-z0-9_]+)` \| (.+) \|$", section, flags=re.M))
    assert set(rows) == set(builtin_zoo().remaps)
    assert all(len(when) > 30 for when in rows.values()), rows

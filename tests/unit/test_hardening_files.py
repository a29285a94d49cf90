"""Files we write (issue 11, items 3, 5 and 6): readable by the group as the umask allows (store
records, published files, downloaded weights, the weights lock, the crop cache); our own stale
temp files cleaned at the next run, a concurrent writer's fresh one and anybody else's left
alone; downloaded weights pinned on first use and verified on every load; an interrupted mini
build resumes by itself."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import time
from pathlib import Path

import pytest

from repro.base.errors import CheckpointError
from tests.unit import malformed

pytestmark = pytest.mark.unit


@pytest.fixture
def group_umask():
    old = os.umask(0o002)
    try:
        yield 0o664
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --------------------------------------------------------------------------- umask
def test_store_records_follow_the_umask(tmp_path, group_umask):
    from repro.store.files import Store
    from repro.store.record import JobRecord

    path = Store(tmp_path).write(JobRecord("m1", "imagenet", "1+1", "ok"), [{"name": "a", "k": 1}])
    assert (
        _mode(path) == group_umask
        and _mode(path.with_name("imagenet.records.csv.gz")) == group_umask
    )
    os.umask(0o077)
    path = Store(tmp_path).write(JobRecord("m2", "imagenet", "1+1", "ok"))
    assert _mode(path) == 0o600  # a private umask stays private


def test_crop_cache_follows_the_umask(tmp_path, group_umask):
    from repro.datasets import make_mini, open_dataset

    roots = make_mini(tmp_path / "mini", per_class=1, datasets=["stylized"])
    src = open_dataset("stylized", roots["stylized"], cache_dir=tmp_path / "crops")
    folder = src.build()
    assert {_mode(p) for p in folder.iterdir()} == {group_umask}


# --------------------------------------------------------------------------- stale temp files
def test_only_our_stale_temp_files_are_removed(tmp_path):
    from repro.base.atomic import STALE_AFTER_S, clean_stale_temp

    old = time.time() - STALE_AFTER_S - 60
    ours_old = [tmp_path / ".imagenet.json.ab12cd_9.tmp", tmp_path / ".model.pth.part-zz99yy00"]
    ours_fresh = tmp_path / ".shape_bias.json.k3j4h5g6.tmp"  # a concurrent writer's: recent
    others = [
        tmp_path / "notes.tmp",
        tmp_path / ".imagenet.json.tmp",
        tmp_path / "imagenet.json",
        tmp_path / ".x.ABCDEFGH.tmp",
    ]
    for p in [*ours_old, ours_fresh, *others]:
        p.write_text("x")
    for p in [*ours_old, *others]:
        os.utime(p, (old, old))
    removed = clean_stale_temp(tmp_path)
    assert sorted(removed) == sorted(ours_old)
    assert ours_fresh.exists() and all(p.exists() for p in others)


def test_a_sweep_cleans_the_stores_stale_temp_files(tmp_path, torch_threads):
    from repro.base.atomic import STALE_AFTER_S
    from repro.runner.jobs import jobs_for, run_sweep
    from repro.store.files import Store
    from tests import fakes

    leftover = tmp_path / "tiny_a" / ".fake_a.json.q1w2e3r4.tmp"
    leftover.parent.mkdir()
    leftover.write_text("{half")
    old = time.time() - STALE_AFTER_S - 1
    os.utime(leftover, (old, old))
    run_sweep(
        jobs_for(["tiny_a"], ["fake_a"]), Store(tmp_path), env=fakes.environment(), progress=False
    )
    assert not leftover.exists() and Store(tmp_path).read("tiny_a", "fake_a").ok


# --------------------------------------------------------------------------- weights: TOFU lock
@pytest.fixture
def url_model(tmp_path, monkeypatch):
    """A url-source tiny model without a published hash, its file served from disk."""
    from repro.zoo import fetch, get_spec

    src = tmp_path / "src" / "tiny.pth"
    src.parent.mkdir()
    import torch

    torch.save({"state_dict": malformed.tiny_state_dict()}, src)
    base = get_spec("resnet50_moco_v3_100ep")  # url source, "module" remap, no sha256
    spec = dataclasses.replace(base, name="tiny_url", arch="tiny:8")
    served = {spec.files[0].url: src}
    monkeypatch.setattr(
        fetch,
        "transfer_for",
        lambda url: (
            lambda source, output_file, pooch=None: shutil.copyfile(served[source], output_file)
        ),
    )
    return spec, src


def test_downloaded_weights_are_pinned_on_first_use_and_verified_on_every_load(
    url_model, tmp_path, group_umask
):
    import torch

    from repro.zoo import load_model
    from repro.zoo.fetch import sha256_of
    from repro.zoo.lockfile import lock_path
    from repro.zoo.weights_identity import expected_identity, files_identity

    spec, src = url_model
    wdir = tmp_path / "w"
    assert expected_identity(spec, wdir) is None  # not downloaded yet: unknown without a download
    stale = (
        wdir / "tiny_url" / ".linear-100ep.pth.tar.part-a1b2c3d4"
    )  # a killed download's leftover
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    model = load_model(spec, weights_dir=wdir)
    assert not stale.exists()
    weights = wdir / "tiny_url" / "linear-100ep.pth.tar"
    lock = lock_path(weights.parent)
    entry = json.loads(lock.read_text())["files"]["linear-100ep.pth.tar"]
    assert (
        entry["sha256"] == sha256_of(weights) == sha256_of(src)
        and entry["size"] == weights.stat().st_size
    )
    assert _mode(weights) == group_umask and _mode(lock) == group_umask
    assert (
        model.weights_sha256
        == files_identity({"checkpoint": entry["sha256"]})
        == expected_identity(spec, wdir)
    )
    load_model(spec, weights_dir=wdir)  # verified again: same file
    # the file changes behind our back (another version, a corrupted disk)
    state = malformed.tiny_state_dict(seed=5)
    torch.save({"state_dict": state}, weights)
    with pytest.raises(CheckpointError) as err:
        load_model(spec, weights_dir=wdir)
    msg = str(err.value)
    assert msg.startswith(
        f"{weights}: sha256 {sha256_of(weights)} differs from {entry['sha256']} locked in {lock}"
    )
    assert "remove the entry 'linear-100ep.pth.tar' from that lock file" in msg and "\n" not in msg
    # a deliberate re-pin: remove the entry, load again
    lock.unlink()
    again = load_model(spec, weights_dir=wdir)
    assert torch.equal(again.model.fc.weight, state["fc.weight"])
    assert json.loads(lock.read_text())["files"]["linear-100ep.pth.tar"]["sha256"] == sha256_of(
        weights
    )


def test_revision_is_a_full_commit_and_reaches_the_hub(monkeypatch, tmp_path):
    from repro.base.errors import ConfigError
    from repro.zoo import fetch
    from repro.zoo.loaders import LOADERS
    from repro.zoo.specs import builtin_zoo, model_spec

    entry = {
        "name": "x",
        "category": "c",
        "source": "huggingface",
        "reference": "org/repo",
        "file": "w.pth",
        "citation": "none",
    }
    with pytest.raises(ConfigError, match="revision 'b717ada': expected the full 40-hex commit id"):
        model_spec({**entry, "revision": "b717ada"}, builtin_zoo(), "my.toml")
    spec = model_spec({**entry, "revision": "a" * 40}, builtin_zoo(), "my.toml")
    asked = []

    def fake_hf(repo, filename, revision, local_dir):
        asked.append(revision)
        raise CheckpointError("offline")

    monkeypatch.setattr(fetch, "_hf_hub_download", fake_hf)
    with pytest.raises(CheckpointError):
        LOADERS["huggingface"].fetch(spec, spec.files[0], tmp_path)
    assert asked == ["a" * 40]


# --------------------------------------------------------------------------- interrupted mini build
def test_an_interrupted_mini_build_resumes_by_itself(tmp_path, monkeypatch):
    from repro.datasets import mini as mini_mod
    from repro.runner.pipeline import prepare_mini

    for var in list(os.environ):
        if var.startswith("REPRO_") and var.endswith("_ROOT"):
            monkeypatch.delenv(var)
    real = mini_mod._make_one
    calls: list[str] = []

    def interrupted(spec, root, per_class, seed):
        calls.append(spec.name)
        if len(calls) == 3:
            real(spec, root, per_class, seed)  # half of the third dataset written, then Ctrl-C
            raise KeyboardInterrupt
        return real(spec, root, per_class, seed)

    monkeypatch.setattr(mini_mod, "_make_one", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prepare_mini(tmp_path)
    data = tmp_path / "data"
    done = sorted(p.name for p in data.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert done == sorted(calls[:2])  # the interrupted dataset never appears half-written
    kept = {n: (data / n / ".repro-mini.json").stat().st_ino for n in done}
    (data / ".mini-build-imagenet_c-99999" / "n01440764").mkdir(
        parents=True
    )  # as a SIGKILLed build leaves it
    monkeypatch.setattr(mini_mod, "_make_one", real)
    roots = prepare_mini(tmp_path)  # no hand-removal needed
    assert set(roots) == {n for n, s in mini_mod.SPECS.items() if s.has_mini} and not list(
        data.glob(".mini-build-*")
    )
    assert {
        n: (data / n / ".repro-mini.json").stat().st_ino for n in done
    } == kept  # resumed, not redone
    from repro.datasets import open_files

    for name, root in roots.items():
        assert len(open_files(name, root)) > 0

"""The decode-once crop cache: byte identity with the study's PIL pipeline, reuse, invalidation
when a source file changes, and atomic builds (a crashed build is never read)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from repro.datasets import cache as cache_mod
from repro.datasets import make_mini, open_dataset
from repro.datasets.specs import AS_IS_224, RESIZE_CROP

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mini")
    make_mini(root, per_class=1, seed=3, datasets=["imagenet_r", "cue_conflict", "imagenet_cbar"])
    return root


def _reference(path: str, resize: bool) -> np.ndarray:
    """The study's pipeline written out independently: ImageFolder loader + TEST_TRANSFORMS."""
    from PIL import Image
    from torchvision import transforms

    with open(path, "rb") as fh:
        img = Image.open(fh).convert("RGB")
    steps = [transforms.Resize(256), transforms.CenterCrop(224)] if resize else []
    tensor = transforms.Compose([*steps, transforms.ToTensor()])(img)  # float in [0, 1]
    return tensor


def _all(src):
    batches = list(src.batches(7))
    return (
        np.concatenate([b.images for b in batches]),
        np.concatenate([b.labels for b in batches]),
        [n for b in batches for n in b.names],
    )


@pytest.mark.parametrize("name,resize", [("imagenet_r", True), ("cue_conflict", False)])
def test_cached_crops_are_byte_identical_to_the_direct_pil_pipeline(
    mini, tmp_path, name, resize, torch_threads
):
    import torch

    src = open_dataset(name, mini, cache_dir=tmp_path)
    images, labels, names = _all(src)
    direct = open_dataset(name, mini, cache=False)
    d_images, d_labels, d_names = _all(direct)
    assert (
        np.array_equal(images, d_images) and np.array_equal(labels, d_labels) and names == d_names
    )
    for i, item in enumerate(direct.items):
        ref = _reference(item.path, resize)
        # ToTensor of the study == our uint8 crop / 255, exactly
        assert torch.equal(torch.from_numpy(images[i]).float().div(255), ref), item.path
    meta = json.loads((src.folder / "meta.json").read_text())
    assert meta["preprocessing"] == (RESIZE_CROP if resize else AS_IS_224)
    assert meta["names"] == names and meta["n"] == len(names) and meta["mini"] is True
    assert src.folder.parent == tmp_path


def test_cache_is_reused_without_decoding(mini, tmp_path, monkeypatch, torch_threads):
    first = open_dataset("imagenet_r", mini, cache_dir=tmp_path)
    a, _, _ = _all(first)

    def boom(*args, **kwargs):
        raise AssertionError("decoded although a valid cache exists")

    monkeypatch.setattr(cache_mod, "decode_into", boom)
    second = open_dataset("imagenet_r", mini, cache_dir=tmp_path)
    b, _, _ = _all(second)
    assert np.array_equal(a, b) and second.folder == first.folder
    assert second.fingerprint() == first.fingerprint()


def test_default_cache_location_is_user_cache_crops(mini, tmp_path, monkeypatch, torch_threads):
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "uc"))
    src = open_dataset("imagenet_r", mini)
    src.build()
    assert src.folder.parent == tmp_path / "uc" / "crops"


def test_changing_a_file_invalidates_the_cache(mini, tmp_path, torch_threads):
    import shutil

    from PIL import Image

    root = tmp_path / "r"
    shutil.copytree(mini / "imagenet_r", root)
    cdir = tmp_path / "cache"
    before = open_dataset("imagenet_r", root, cache_dir=cdir)
    old_images, _, _ = _all(before)
    victim = Path(before.files.items[3].path)
    Image.new("RGB", (80, 60), (200, 10, 30)).save(victim, format="JPEG")
    st = victim.stat()
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    after = open_dataset("imagenet_r", root, cache_dir=cdir)
    new_images, _, _ = _all(after)
    assert after.fingerprint() != before.fingerprint()
    assert after.folder != before.folder and not before.folder.exists()  # the stale cache is pruned
    from repro.datasets.decode import decode

    assert np.array_equal(new_images[3], decode(str(victim), RESIZE_CROP))
    assert not np.array_equal(new_images[3], old_images[3])
    assert np.array_equal(np.delete(new_images, 3, 0), np.delete(old_images, 3, 0))
    # a removed file changes the layout -> validation error before any cache is read
    victim.unlink()
    with pytest.raises(
        Exception,
        match=r"imagenet_r at .*: expected 20 class folders with 1 images each, found 0 images in",
    ):
        open_dataset("imagenet_r", root, cache_dir=cdir)


def test_crash_mid_build_leaves_nothing_that_is_used(mini, tmp_path, monkeypatch, torch_threads):
    from repro.datasets import decode as decode_mod

    real = decode_mod.decode
    calls = {"n": 0}

    def flaky(path, preprocessing):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt("simulated crash")
        return real(path, preprocessing)

    monkeypatch.setattr(decode_mod, "decode", flaky)
    src = open_dataset("imagenet_r", mini, cache_dir=tmp_path, workers=1)
    with pytest.raises(KeyboardInterrupt):
        src.build()
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []
    monkeypatch.setattr(decode_mod, "decode", real)
    # a process killed hard leaves its private .build-* folder and maybe a half final folder:
    # neither is ever read
    key = cache_mod.cache_key(src.files)
    stale = tmp_path / f".build-{key}-999-deadbeef"
    stale.mkdir()
    (stale / "images.u8").write_bytes(b"\x01" * 10)
    half = tmp_path / key
    half.mkdir()
    (half / "images.u8").write_bytes(b"\x00" * 10)
    fresh = open_dataset("imagenet_r", mini, cache_dir=tmp_path)
    images, _, _ = _all(fresh)
    direct, _, _ = _all(open_dataset("imagenet_r", mini, cache=False))
    assert np.array_equal(images, direct)
    assert (half / "meta.json").is_file()
    assert not stale.exists()  # the killed builder's folder is cleaned up


def test_build_reports_cumulative_progress(mini, tmp_path, torch_threads):
    from repro.datasets.decode import decode_into

    seen: list[int] = []
    src = open_dataset("imagenet_r", mini, cache_dir=tmp_path)
    src.build(progress=seen.append)
    assert seen == [20]
    seen.clear()
    out = np.empty((20, 3, 224, 224), np.uint8)
    decode_into(out, src.files.items, RESIZE_CROP, progress=seen.append, chunk=8)
    assert seen == [8, 16, 20] and np.array_equal(out, src.images)
    threaded = np.zeros_like(out)
    decode_into(threaded, src.files.items, RESIZE_CROP, workers=2)  # the thread pool path
    assert np.array_equal(threaded, out)


def test_corruption_dataset_caches_each_condition(mini, tmp_path, torch_threads):
    src = open_dataset("imagenet_cbar", mini, cache_dir=tmp_path)
    assert len(src) == 50 * 4
    part = src.parts["plasma_noise/4"]
    images, labels, names = _all(part)
    assert images.shape == (4, 3, 224, 224) and all(n.startswith("plasma_noise/4/") for n in names)
    assert [
        p.name.startswith("imagenet_cbar_plasma_noise_4-")
        for p in tmp_path.iterdir()
        if not p.name.startswith(".")
    ] == [True]
    assert (
        src.fingerprint()
        != open_dataset("imagenet_cbar", mini, cache=False).parts["plasma_noise/4"].fingerprint()
    )


def test_large_corruption_dataset_holds_one_part_item_list_at_a_time(
    mini, tmp_path, monkeypatch, torch_threads
):
    from repro.datasets import open as open_mod

    eager = open_dataset("imagenet_cbar", mini, cache_dir=tmp_path)
    expected = _all(eager)
    monkeypatch.setattr(open_mod, "LAZY_ABOVE", 0)  # treat the mini copy as if it were full size
    lazy = open_dataset("imagenet_cbar", mini, cache_dir=tmp_path)
    assert all(p.files._items is None for p in lazy.parts.values())  # validated, then not held
    assert len(lazy) == 200
    got = _all(lazy)
    assert (
        np.array_equal(got[0], expected[0])
        and np.array_equal(got[1], expected[1])
        and got[2] == expected[2]
    )
    assert all(
        p.files._items is None and p.folder is None for p in lazy.parts.values()
    )  # released after use
    assert lazy.fingerprint() == eager.fingerprint()


def test_fingerprint_follows_content_not_mtime(mini, tmp_path, monkeypatch):
    """A fresh copy of the same files (new mtimes, as a re-mounted data folder has) keeps the
    fingerprint, so a store's measurements stay valid; one changed byte of the same size, with the
    old mtime put back, changes it (the digest memo remembers each file by size, mtime, ctime and
    inode: the rewrite keeps size, mtime and inode here, so this checks that the ctime makes a
    rewritten file be read again)."""
    import shutil

    monkeypatch.setenv(
        "REPRO_CACHE_DIR", str(tmp_path / "user-cache")
    )  # the digest memo stays in tmp_path
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(mini / "imagenet_r", a)
    shutil.copytree(mini / "imagenet_r", b)  # copytree keeps mtimes: move b's on
    for f in b.rglob("*"):
        if f.is_file():
            st = f.stat()
            os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 7 * 10**9))
    fa = open_dataset("imagenet_r", a, cache_dir=tmp_path / "ca").fingerprint()
    src_b = open_dataset("imagenet_r", b, cache_dir=tmp_path / "cb")
    assert src_b.fingerprint() == fa
    victim = Path(src_b.files.items[5].path)
    st = victim.stat()
    data = bytearray(victim.read_bytes())
    data[-3] ^= 0x01
    victim.write_bytes(bytes(data))
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert victim.stat().st_size == st.st_size
    assert open_dataset("imagenet_r", b, cache_dir=tmp_path / "cb").fingerprint() != fa
    assert any((tmp_path / "user-cache" / "digests").iterdir())


def test_digest_memo_reads_a_file_once_and_ignores_a_corrupt_memo(tmp_path, monkeypatch):
    import hashlib

    from repro.datasets import digests as dg

    folder = tmp_path / "imgs"
    folder.mkdir()
    files = []
    for i in range(3):
        (folder / f"{i}.png").write_bytes(bytes([i]) * (100 + i))
        files.append((str(folder / f"{i}.png"), os.stat(folder / f"{i}.png")))
    truth = [hashlib.sha256(bytes([i]) * (100 + i)).hexdigest() for i in range(3)]
    memo = tmp_path / "memo"
    reads = []
    real = dg.sha256_file
    monkeypatch.setattr(dg, "sha256_file", lambda p: reads.append(p) or real(p))
    assert dg.digests(files, memo) == truth and len(reads) == 3
    assert dg.digests(files, memo) == truth and len(reads) == 3  # remembered: stat only
    (memo_file,) = memo.iterdir()
    memo_file.write_text("{not json")
    assert (
        dg.digests(files, memo) == truth and len(reads) == 6
    )  # corrupt memo: read again, rewritten
    assert dg.digests(files, memo) == truth and len(reads) == 6
    # a memo entry whose stamp does not match (here: a forged digest under another size) is not used
    data = json.loads(memo_file.read_text())
    data["files"]["1.png"][0] += 1
    data["files"]["1.png"][4] = "0" * 64
    memo_file.write_text(json.dumps(data))
    assert dg.digests(files, memo) == truth and reads[-1].endswith("1.png") and len(reads) == 7

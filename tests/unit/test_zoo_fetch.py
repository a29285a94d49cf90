"""Zoo downloads (no network: file:// URLs and fake responses): atomic writes, truncation
and hash checks, the Google Drive confirm-token dance, Hugging Face without huggingface_hub."""

from __future__ import annotations

import hashlib
import io
import sys

import pytest

from repro.base.errors import CheckpointError
from repro.zoo import fetch

pytestmark = pytest.mark.unit

PAYLOAD = bytes(range(256)) * 300


class Resp(io.BytesIO):
    def __init__(self, body: bytes, ctype: str = "application/octet-stream", length: int | None = None):
        super().__init__(body)
        self.headers = {"Content-Type": ctype}
        if length is not None:
            self.headers["Content-Length"] = str(length)


def _src(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(PAYLOAD)
    return src


def test_download_file_url_with_sha256_and_prefix(tmp_path):
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    dest = tmp_path / "out" / "w-" / "f.pth"
    got = fetch.download(_src(tmp_path).as_uri(), dest, sha256=digest, hash_prefix=digest[:8])
    assert got == dest and dest.read_bytes() == PAYLOAD
    assert [p.name for p in dest.parent.iterdir()] == ["f.pth"]  # no leftover .part file


def test_wrong_hash_names_file_and_expected_hash_and_writes_nothing(tmp_path):
    dest = tmp_path / "out" / "resnet50-deadbeef.pth"
    with pytest.raises(CheckpointError) as err:
        fetch.download(_src(tmp_path).as_uri(), dest, hash_prefix="deadbeef")
    assert "deadbeef" in str(err.value) and "src.bin" in str(err.value)
    assert list(dest.parent.iterdir()) == []
    with pytest.raises(CheckpointError, match="expected sha256 " + "0" * 64):
        fetch.download(_src(tmp_path).as_uri(), dest, sha256="0" * 64)


def test_truncated_download_is_detected_and_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch, "open_url", lambda url, opener=None: Resp(PAYLOAD[:1000], length=len(PAYLOAD)))
    dest = tmp_path / "o" / "f.pth"
    with pytest.raises(CheckpointError, match=rf"stopped after 1000 of {len(PAYLOAD)} bytes \(truncated\)"):
        fetch.download("https://example.org/f.pth", dest)
    assert list(dest.parent.iterdir()) == []


def test_verify_file_catches_a_truncated_cached_file(tmp_path):
    path = tmp_path / "f.pth"
    path.write_bytes(PAYLOAD[:-1])
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    with pytest.raises(CheckpointError, match=f"{path}: sha256 .* expected sha256 {digest}"):
        fetch.verify_file(path, sha256=digest)
    fetch.verify_file(path)  # no published hash: nothing to check


def test_unreachable_url_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="could not download"):
        fetch.download((tmp_path / "absent").as_uri(), tmp_path / "x")


def test_gdrive_old_style_cookie_token(tmp_path, monkeypatch):
    asked = []

    def fake_open(url, opener=None):
        asked.append(url)
        if "confirm=AbC" in url:
            return Resp(PAYLOAD, length=len(PAYLOAD))
        return Resp(b"<html><a href='/uc?export=download&amp;confirm=AbC&amp;id=X'>Download anyway</a></html>",
                    "text/html")

    monkeypatch.setattr(fetch, "open_url", fake_open)
    dest = fetch.gdrive_download("FILEID_1234567890123456789", tmp_path / "m" / "m.pth")
    assert dest.read_bytes() == PAYLOAD
    assert asked == ["https://drive.google.com/uc?export=download&id=FILEID_1234567890123456789",
                     "https://drive.google.com/uc?export=download&id=FILEID_1234567890123456789&confirm=AbC"]


def test_gdrive_small_file_needs_no_confirmation(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch, "open_url", lambda url, opener=None: Resp(PAYLOAD))
    assert fetch.gdrive_download("ID", tmp_path / "a.pth").read_bytes() == PAYLOAD


def test_gdrive_quota_page_gives_manual_instructions(tmp_path, monkeypatch):
    page = b"<html><title>Google Drive - Quota exceeded</title>Too many users have viewed</html>"
    monkeypatch.setattr(fetch, "open_url", lambda url, opener=None: Resp(page, "text/html"))
    dest = tmp_path / "m" / "m.pth"
    with pytest.raises(CheckpointError) as err:
        fetch.gdrive_download("1IT65JJauql-Jdw-0AjAhEGGApGMVx-VE", dest)
    msg = str(err.value)
    assert "quota exceeded" in msg and str(dest) in msg
    assert "https://drive.google.com/file/d/1IT65JJauql-Jdw-0AjAhEGGApGMVx-VE/view" in msg
    assert not dest.exists()


def test_hf_without_huggingface_hub_falls_back_to_resolve_url(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails
    monkeypatch.setattr(fetch, "open_url", lambda url, opener=None: (asked.append(url), Resp(PAYLOAD))[1])
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    got = fetch.hf_download("madrylab/robust-imagenet-models", "resnet50_l2_eps3.ckpt", tmp_path, sha256=digest)
    assert got.read_bytes() == PAYLOAD
    assert asked == ["https://huggingface.co/madrylab/robust-imagenet-models/resolve/main/resnet50_l2_eps3.ckpt"]


def test_hf_hub_errors_become_checkpoint_errors(tmp_path, monkeypatch):
    def boom(*a):
        raise OSError("offline")

    monkeypatch.setattr(fetch, "_hf_hub_download", boom)
    with pytest.raises(CheckpointError, match=r"could not download f\.ckpt from Hugging Face org/repo: OSError: offline"):
        fetch.hf_download("org/repo", "f.ckpt", tmp_path)

"""Zoo downloads (no network: file:// URLs and a local HTTP server): atomic writes through pooch,
truncation and hash checks, retries, Google Drive through gdown with the manual-download hint,
Hugging Face without huggingface_hub."""

from __future__ import annotations

import hashlib
import shutil
import sys

import pytest

from repro.base.errors import CheckpointError
from repro.zoo import fetch

pytestmark = pytest.mark.unit

PAYLOAD = bytes(range(256)) * 300
DIGEST = hashlib.sha256(PAYLOAD).hexdigest()


def _src(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(PAYLOAD)
    return src


def test_download_file_url_with_sha256_and_prefix(tmp_path):
    dest = tmp_path / "out" / "w-" / "f.pth"
    got = fetch.download(_src(tmp_path).as_uri(), dest, sha256=DIGEST, hash_prefix=DIGEST[:8])
    assert got == dest and dest.read_bytes() == PAYLOAD
    assert [p.name for p in dest.parent.iterdir()] == ["f.pth"]  # no leftover temporary file


def test_download_over_http_with_sha256(tmp_path, local_http):
    url = local_http.add("/w/f.pth", PAYLOAD)
    dest = tmp_path / "out" / "f.pth"
    assert fetch.download(url, dest, sha256=DIGEST).read_bytes() == PAYLOAD
    assert local_http.asked == ["/w/f.pth"] and [p.name for p in dest.parent.iterdir()] == ["f.pth"]


def test_wrong_hash_names_file_and_expected_hash_and_writes_nothing(tmp_path, local_http):
    dest = tmp_path / "out" / "resnet50-deadbeef.pth"
    with pytest.raises(CheckpointError) as err:
        fetch.download(_src(tmp_path).as_uri(), dest, hash_prefix="deadbeef")
    assert "deadbeef" in str(err.value) and "src.bin" in str(err.value)
    assert list(dest.parent.iterdir()) == []
    url = local_http.add("/f.pth", PAYLOAD)
    with pytest.raises(
        CheckpointError,
        match=f"download of {url}: sha256 {DIGEST} does not match the expected sha256 " + "0" * 64,
    ):
        fetch.download(url, dest, sha256="0" * 64)
    assert list(dest.parent.iterdir()) == [] and local_http.asked == [
        "/f.pth"
    ]  # a wrong file: no retry


def test_truncated_download_is_detected_and_not_kept(tmp_path, local_http, monkeypatch):
    monkeypatch.setattr(fetch, "RETRIES", 0)
    url = local_http.add("/f.pth", PAYLOAD, truncate_at=1000)
    dest = tmp_path / "o" / "f.pth"
    with pytest.raises(
        CheckpointError,
        match=rf"stopped after 1000 of {len(PAYLOAD)} bytes \(truncated\); "
        rf"{dest} was not written",
    ):
        fetch.download(url, dest)
    assert list(dest.parent.iterdir()) == []


def test_a_failed_transfer_is_retried(tmp_path, local_http, monkeypatch):
    monkeypatch.setattr(fetch, "RETRIES", 1)
    url = local_http.add("/f.pth", PAYLOAD, fail_first=1)  # a 500, then the file
    dest = tmp_path / "o" / "f.pth"
    assert fetch.download(url, dest, sha256=DIGEST).read_bytes() == PAYLOAD
    assert local_http.asked == ["/f.pth", "/f.pth"]


def test_verify_file_catches_a_truncated_cached_file(tmp_path):
    path = tmp_path / "f.pth"
    path.write_bytes(PAYLOAD[:-1])
    with pytest.raises(CheckpointError, match=f"{path}: sha256 .* expected sha256 {DIGEST}"):
        fetch.verify_file(path, sha256=DIGEST)
    fetch.verify_file(path)  # no published hash: nothing to check


def test_unreachable_url_is_a_checkpoint_error(tmp_path, local_http, monkeypatch):
    monkeypatch.setattr(fetch, "RETRIES", 0)
    with pytest.raises(CheckpointError, match="could not download"):
        fetch.download((tmp_path / "absent").as_uri(), tmp_path / "x")
    with pytest.raises(
        CheckpointError, match=r"could not download http://127\.0\.0\.1:\d+/absent: 404"
    ):
        fetch.download(local_http.url("/absent"), tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_gdrive_file_comes_through_gdown_atomically_and_verified(tmp_path, local_http):
    url = local_http.add("/uc", PAYLOAD)
    dest = tmp_path / "m" / "m.pth"
    got = fetch.gdrive_download(
        "FILEID_1234567890123456789", dest, sha256=DIGEST, url=url + "?id=X"
    )
    assert (
        got == dest
        and dest.read_bytes() == PAYLOAD
        and [p.name for p in dest.parent.iterdir()] == ["m.pth"]
    )
    other = tmp_path / "m" / "n.pth"
    with pytest.raises(
        CheckpointError, match="download of Google Drive file ID: sha256 .* expected sha256 0{64}"
    ):
        fetch.gdrive_download("ID", other, sha256="0" * 64, url=url)
    assert not other.exists()


def test_gdrive_quota_page_gives_manual_instructions(tmp_path, local_http):
    page = b"<html><title>Google Drive - Quota exceeded</title>Too many users have viewed</html>"
    url = local_http.add("/uc", page, content_type="text/html")
    dest = tmp_path / "m" / "m.pth"
    with pytest.raises(CheckpointError) as err:
        fetch.gdrive_download("1IT65JJauql-Jdw-0AjAhEGGApGMVx-VE", dest, url=url)
    msg = str(err.value)
    assert "quota exceeded" in msg and str(dest) in msg
    assert "https://drive.google.com/file/d/1IT65JJauql-Jdw-0AjAhEGGApGMVx-VE/view" in msg
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_gdrive_refusals_name_the_reason_and_the_manual_download():
    """What gdown says when Drive gives no file (its FileURLRetrievalError
    text) becomes the reason."""
    assert (
        fetch.drive_reason("Too many users have viewed or downloaded this file recently.")
        == "quota exceeded"
    )
    assert (
        fetch.drive_reason(
            "Cannot retrieve the public link of the file. You may need to change the "
            "permission to 'Anyone with the link'"
        )
        == "Drive answered with a web page, not the file"
    )
    hint = fetch.gdrive_manual_hint("ID", fetch.Path("/w/m.pth"))
    assert hint.startswith(
        "download https://drive.google.com/file/d/ID/view in a browser and save it as /w/m.pth"
    )


def test_hf_without_huggingface_hub_falls_back_to_resolve_url(tmp_path, monkeypatch):
    asked = []
    src = _src(tmp_path)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails

    def serve(url):  # the resolve URL, served from a local file
        asked.append(url)
        return lambda source, output_file, pooch=None: shutil.copyfile(src, output_file)

    monkeypatch.setattr(fetch, "transfer_for", serve)
    got = fetch.hf_download(
        "madrylab/robust-imagenet-models", "resnet50_l2_eps3.ckpt", tmp_path / "d", sha256=DIGEST
    )
    assert got.read_bytes() == PAYLOAD
    assert asked == [
        "https://huggingface.co/madrylab/robust-imagenet-models/resolve/main/resnet50_l2_eps3.ckpt"
    ]


def test_hf_hub_errors_become_checkpoint_errors(tmp_path, monkeypatch):
    def boom(*a):
        raise OSError("offline")

    monkeypatch.setattr(fetch, "_hf_hub_download", boom)
    with pytest.raises(
        CheckpointError,
        match=r"could not download f\.ckpt from Hugging Face org/repo: OSError: offline",
    ):
        fetch.hf_download("org/repo", "f.ckpt", tmp_path)

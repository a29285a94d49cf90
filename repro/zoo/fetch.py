"""Model zoo: the network boundary. Downloads weights files atomically and verifies them.

Every byte from the network passes through :func:`open_url` (plain urllib) or
:func:`_hf_hub_download` (huggingface_hub); tests replace exactly these two. A file is
written to ``<name>.part-*`` beside its destination, hashed while streaming, checked
against the declared sha256 / hash prefix and the announced length, and only then renamed
into place, so an interrupted download never leaves a file that looks complete.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
import tempfile
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from repro.base.atomic import publish
from repro.base.errors import CheckpointError
from repro.base.filehash import sha256_of

CHUNK = 1 << 20
GDRIVE_URL = "https://drive.google.com/uc?export=download&id={id}"
HF_URL = "https://huggingface.co/{repo}/resolve/{revision}/{filename}"


def open_url(url: str, opener: Any = None) -> Any:
    """Open ``url`` (http(s) or file://); the single place urllib touches the network."""
    request = urllib.request.Request(url, headers={"User-Agent": "repro-zoo/1"})
    try:
        return (opener.open if opener is not None else urllib.request.urlopen)(request, timeout=60)
    except OSError as exc:  # URLError, HTTPError, timeouts
        raise CheckpointError(f"could not download {url}: {exc}") from None


def expected_hash_text(sha256: str | None, hash_prefix: str | None) -> str:
    if sha256:
        return f"sha256 {sha256}"
    if hash_prefix:
        return f"sha256 starting with {hash_prefix}"
    return "no published hash"


def check_digest(digest: str, path: Path | str, sha256: str | None, hash_prefix: str | None) -> None:
    if sha256 and digest != sha256.lower():
        raise CheckpointError(
            f"{path}: sha256 {digest} does not match the expected sha256 {sha256}; the file is "
            "truncated, corrupt or a different version: delete it and load again to re-download"
        )
    if hash_prefix and not digest.startswith(hash_prefix.lower()):
        raise CheckpointError(
            f"{path}: sha256 {digest} does not start with the expected hash prefix {hash_prefix} "
            "(from the published file name); the file is truncated, corrupt or a different version: "
            "delete it and load again to re-download"
        )


def verify_file(path: Path, sha256: str | None = None, hash_prefix: str | None = None) -> None:
    """Raise CheckpointError naming the file and the expected hash when they differ."""
    if sha256 or hash_prefix:
        check_digest(sha256_of(path), path, sha256, hash_prefix)


def _stream_to(response: Any, dest: Path, url: str, sha256: str | None, hash_prefix: str | None,
               first: bytes = b"") -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.part-")
    h = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for block in ([first] if first else []):
                h.update(block)
                out.write(block)
                size += len(block)
            for block in iter(lambda: response.read(CHUNK), b""):
                h.update(block)
                out.write(block)
                size += len(block)
        announced = response.headers.get("Content-Length") if getattr(response, "headers", None) else None
        if announced is not None and int(announced) != size:
            raise CheckpointError(
                f"download of {url} stopped after {size} of {int(announced)} bytes (truncated); "
                f"{dest} was not written, try again"
            )
        check_digest(h.hexdigest(), f"download of {url}", sha256, hash_prefix)
        publish(tmp)  # mkstemp made it 0600: give it the umask's mode (a shared weights folder)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def download(url: str, dest: Path, *, sha256: str | None = None, hash_prefix: str | None = None) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying length and hash."""
    with open_url(url) as response:
        return _stream_to(response, Path(dest), url, sha256, hash_prefix)


# --------------------------------------------------------------------------- Hugging Face
def _hf_hub_download(repo: str, filename: str, revision: str | None, local_dir: Path) -> Path:
    """huggingface_hub's download (comes with timm), into ``local_dir``."""
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(repo_id=repo, filename=filename, revision=revision, local_dir=local_dir))


def hf_download(repo: str, filename: str, dest_dir: Path, *, revision: str | None = None,
                sha256: str | None = None) -> Path:
    """``dest_dir/filename`` from the Hugging Face repository ``repo`` (verified when a sha256 is known)."""
    dest = Path(dest_dir) / filename
    try:
        import huggingface_hub  # noqa: F401
    except ModuleNotFoundError:
        url = HF_URL.format(repo=repo, revision=revision or "main", filename=filename)
        return download(url, dest, sha256=sha256)
    try:
        path = _hf_hub_download(repo, filename, revision, Path(dest_dir))
    except CheckpointError:
        raise
    except Exception as exc:  # huggingface_hub raises many HTTP/offline error types
        raise CheckpointError(
            f"could not download {filename} from Hugging Face {repo}: {type(exc).__name__}: {exc} "
            f"(put the file at {dest} by hand, or point the model at a local file)"
        ) from None
    verify_file(path, sha256)
    return path


# --------------------------------------------------------------------------- Google Drive
_FORM_RE = re.compile(r'<form[^>]*id="download-form"[^>]*action="([^"]+)"', re.S)
_INPUT_RE = re.compile(r'<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"', re.S)
_CONFIRM_RE = re.compile(r"confirm=([0-9A-Za-z_-]+)")


def gdrive_manual_hint(file_id: str, dest: Path) -> str:
    return (
        f"download https://drive.google.com/file/d/{file_id}/view in a browser and save it as {dest} "
        "(or point the model at the file: load_model(name, checkpoint=PATH) or "
        "`[models] <name> = \"PATH\"` in repro.toml)"
    )


def _confirm_url(page: str, url: str, cookies: CookieJar) -> str | None:
    """The real download URL behind Drive's "can't scan this file for viruses" page."""
    form = _FORM_RE.search(page)
    if form:
        params = {name: html.unescape(value) for name, value in _INPUT_RE.findall(page)}
        return html.unescape(form.group(1)) + "?" + urllib.parse.urlencode(params)
    token = next((c.value for c in cookies if c.name.startswith("download_warning")), None)
    if token is None:
        match = _CONFIRM_RE.search(page)
        token = match.group(1) if match else None
    if token is None:
        return None
    return url + "&confirm=" + urllib.parse.quote(token)


def gdrive_download(file_id: str, dest: Path, *, sha256: str | None = None) -> Path:
    """Download a public Drive file by id (with the confirm-token dance for large files)."""
    cookies = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
    url = GDRIVE_URL.format(id=file_id)
    for _ in range(3):
        try:
            response = open_url(url, opener)
        except CheckpointError as exc:
            raise CheckpointError(f"{exc}; {gdrive_manual_hint(file_id, dest)}") from None
        with response:
            ctype = (response.headers.get("Content-Type") or "").lower()
            if not ctype.startswith("text/html"):
                return _stream_to(response, Path(dest), f"Google Drive file {file_id}", sha256, None)
            page = response.read(4 * CHUNK).decode("utf-8", "replace")
        next_url = _confirm_url(page, url, cookies)
        if next_url is None or next_url == url:
            reason = "quota exceeded" if "quota" in page.lower() else "Drive answered with a web page, not the file"
            raise CheckpointError(f"could not download Google Drive file {file_id} ({reason}); "
                                  f"{gdrive_manual_hint(file_id, dest)}")
        url = next_url
    raise CheckpointError(f"could not download Google Drive file {file_id} (too many confirmation pages); "
                          f"{gdrive_manual_hint(file_id, dest)}")

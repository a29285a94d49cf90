"""Model zoo: the network boundary. Downloads weights files atomically and verifies them.

Every download is one pooch step (``pooch.Pooch.fetch``): the transfer writes a temporary file
beside the destination, the file is checked against the declared sha256 / hash prefix, and only
then does pooch move it into place, retrying a transfer that failed on the network (``RETRIES``).
The transfer of a URL is pooch's (requests; a truncated body is an error), of a ``file://`` URL a
copy, of a Google Drive file gdown's (Drive's confirmation pages); Hugging Face files come through
huggingface_hub (:func:`_hf_hub_download`). ``transfer_for`` and ``_hf_hub_download`` are the
only places bytes come from (tests replace them, or serve files from a local HTTP server). An
interrupted, truncated or wrong download never leaves a file that looks complete.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from repro.base.atomic import publish
from repro.base.errors import CheckpointError
from repro.base.filehash import sha256_of

CHUNK = 1 << 20
RETRIES = 2  # a transfer that failed on the network is tried this many more times (pooch)
TIMEOUT_S = 60
USER_AGENT = "repro-zoo/1"
GDRIVE_URL = "https://drive.google.com/uc?id={id}"
HF_URL = "https://huggingface.co/{repo}/resolve/{revision}/{filename}"

Transfer = Callable[[str, str, Any], None]  # pooch's downloader: (url, output file, pooch)


def expected_hash_text(sha256: str | None, hash_prefix: str | None) -> str:
    if sha256:
        return f"sha256 {sha256}"
    if hash_prefix:
        return f"sha256 starting with {hash_prefix}"
    return "no published hash"


def check_digest(
    digest: str, path: Path | str, sha256: str | None, hash_prefix: str | None
) -> None:
    if sha256 and digest != sha256.lower():
        raise CheckpointError(
            f"{path}: sha256 {digest} does not match the expected sha256 {sha256}; the file is "
            "truncated, corrupt or a different version: delete it and load again to re-download"
        )
    if hash_prefix and not digest.startswith(hash_prefix.lower()):
        raise CheckpointError(
            f"{path}: sha256 {digest} does not start with the expected hash prefix {hash_prefix} "
            "(from the published file name); the file is truncated, corrupt or a different "
            "version: delete it and load again to re-download"
        )


def verify_file(path: Path, sha256: str | None = None, hash_prefix: str | None = None) -> None:
    """Raise CheckpointError naming the file and the expected hash when they differ."""
    if sha256 or hash_prefix:
        check_digest(sha256_of(path), path, sha256, hash_prefix)


def _copy(url: str, output_file: str, _pooch: Any = None) -> None:
    """The transfer of a ``file://`` URL (a local mirror): a copy."""
    try:
        with open(url2pathname(urlparse(url).path), "rb") as src, open(output_file, "wb") as out:
            shutil.copyfileobj(src, out, CHUNK)
    except OSError as exc:
        raise CheckpointError(f"could not download {url}: {exc}") from None


def transfer_for(url: str) -> Transfer:
    """How the bytes of ``url`` are fetched.

    pooch's HTTP downloader (requests), or a copy for ``file://``."""
    if urlparse(url).scheme == "file":
        return _copy
    import pooch

    return pooch.HTTPDownloader(
        progressbar=False, timeout=TIMEOUT_S, headers={"User-Agent": USER_AGENT}
    )


def _truncation(exc: BaseException) -> tuple[int, int] | None:
    """(bytes read, bytes announced) when ``exc`` is a body shorter than its Content-Length."""
    from urllib3.exceptions import IncompleteRead

    seen, todo = set(), [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if (
            isinstance(e, IncompleteRead)
            and isinstance(e.partial, int)
            and isinstance(e.expected, int)
        ):
            return e.partial, e.partial + e.expected
        todo += [a for a in getattr(e, "args", ()) if isinstance(a, BaseException)]
        todo += [c for c in (e.__cause__, e.__context__) if c is not None]
    return None


def fetch_file(
    url: str, dest: Path, transfer: Transfer, check: Callable[[Path], None], what: str = ""
) -> Path:
    """``url`` into ``dest`` through pooch, checked before it is moved into place.

    ``transfer`` writes a temporary file beside ``dest``; ``check`` (a CheckpointError when the file
    is wrong) sees it before it is moved into place. A file already at ``dest`` is kept (callers
    verify it). ``what``: how messages name the file."""
    import pooch
    import requests

    pooch.get_logger().setLevel("WARNING")  # pooch announces every download on stderr at INFO
    dest = Path(dest)

    def download(source: str, output_file: str, fetcher: Any) -> None:
        transfer(source, output_file, fetcher)
        check(Path(output_file))
        publish(
            output_file
        )  # a temp file is 0600: give it the umask's mode (a shared weights folder)

    fetcher = pooch.create(
        path=dest.parent,
        base_url="",
        registry={dest.name: None},
        urls={dest.name: url},
        retry_if_failed=RETRIES,
    )
    try:
        return Path(fetcher.fetch(dest.name, downloader=download, progressbar=False))
    except requests.RequestException as exc:
        cut = _truncation(exc)
        if cut is not None:
            raise CheckpointError(
                f"download of {what or url} stopped after {cut[0]} of {cut[1]} bytes (truncated); "
                f"{dest} was not written, try again"
            ) from None
        raise CheckpointError(f"could not download {what or url}: {exc}") from None


def download(
    url: str, dest: Path, *, sha256: str | None = None, hash_prefix: str | None = None
) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying length and hash."""

    def check(path: Path) -> None:
        check_digest(sha256_of(path), f"download of {url}", sha256, hash_prefix)

    return fetch_file(url, dest, transfer_for(url), check)


# --------------------------------------------------------------------------- Hugging Face
def _hf_hub_download(repo: str, filename: str, revision: str | None, local_dir: Path) -> Path:
    """huggingface_hub's download (comes with timm), into ``local_dir``."""
    from huggingface_hub import hf_hub_download

    return Path(
        hf_hub_download(repo_id=repo, filename=filename, revision=revision, local_dir=local_dir)
    )


def hf_download(
    repo: str,
    filename: str,
    dest_dir: Path,
    *,
    revision: str | None = None,
    sha256: str | None = None,
) -> Path:
    """``dest_dir/filename`` from the Hugging Face repository ``repo``.

    Verified when a sha256 is known."""
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
def gdrive_manual_hint(file_id: str, dest: Path) -> str:
    return (
        f"download https://drive.google.com/file/d/{file_id}/view in a browser and save it as "
        f"{dest} "
        "(or point the model at the file: load_model(name, checkpoint=PATH) or "
        '`[models] <name> = "PATH"` in repro.toml)'
    )


def drive_reason(text: str) -> str:
    """Why Drive gave no file, from its page or gdown's message."""
    low = text.lower()
    if "quota" in low or "too many users" in low:
        return "quota exceeded"
    return "Drive answered with a web page, not the file"


def _web_page(path: Path) -> str | None:
    """The start of the file when it is an HTML page (never a weights file), else None."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    start = head.lstrip()[:15].lower()
    return (
        head.decode("utf-8", "replace") if start.startswith((b"<!doctype html", b"<html")) else None
    )


def gdrive_download(
    file_id: str, dest: Path, *, sha256: str | None = None, url: str | None = None
) -> Path:
    """A public Drive file by id, through gdown, in a pooch step (atomic, verified).

    gdown follows Drive's "can't scan this file for viruses" confirmation. ``url``: where gdown asks
    (default Drive's; tests give a local server's). A page instead of the file, or Drive refusing
    (quota), is a CheckpointError with the manual-download hint."""
    dest = Path(dest)
    hint = gdrive_manual_hint(file_id, dest)

    def transfer(source: str, output_file: str, _fetcher: Any) -> None:
        import gdown
        import requests
        from gdown.exceptions import DownloadError, FileURLRetrievalError

        try:
            gdown.download(
                url=source,
                output=output_file,
                quiet=True,
                use_cookies=False,
                timeout=TIMEOUT_S,
                retries=RETRIES,
            )
        except FileURLRetrievalError as exc:
            raise CheckpointError(
                f"could not download Google Drive file {file_id} ({drive_reason(str(exc))}); {hint}"
            ) from None
        except (DownloadError, requests.RequestException, OSError) as exc:
            raise CheckpointError(
                f"could not download Google Drive file {file_id}: {exc}; {hint}"
            ) from None
        page = _web_page(Path(output_file))
        if page is not None:
            raise CheckpointError(
                f"could not download Google Drive file {file_id} ({drive_reason(page)}); {hint}"
            )

    def check(path: Path) -> None:
        check_digest(sha256_of(path), f"download of Google Drive file {file_id}", sha256, None)

    return fetch_file(
        url or GDRIVE_URL.format(id=file_id), dest, transfer, check, f"Google Drive file {file_id}"
    )

"""Unit tests of the shared foundation: registry, settings, counts,
pinned-data fetch, CLI errors."""

from __future__ import annotations

import hashlib

import pytest

from repro.base.errors import DataError, UnknownNameError
from repro.base.registry import Registry
from repro.base.stats import Count, binomial_interval

pytestmark = pytest.mark.unit


def test_registry_rejects_duplicates_and_suggests_names():
    reg: Registry[int] = Registry("model")
    reg.register("resnet50_dino", 1)
    reg.register("resnet50_swav", 2)
    with pytest.raises(ValueError, match="duplicate model name 'resnet50_dino'"):
        reg.register("resnet50_dino", 3)
    with pytest.raises(UnknownNameError, match="did you mean 'resnet50_dino'"):
        reg.get("resnet50_dimo")
    assert reg.names() == ["resnet50_dino", "resnet50_swav"]


def test_registry_resolves_lazy_entries_once():
    reg: Registry[object] = Registry("thing")
    reg.register("join", "os.path:join")
    import os.path

    assert reg.get("join") is os.path.join


@pytest.mark.parametrize("k,n", [(38065, 50000), (283, 326), (0, 10), (10, 10), (3, 20)])
@pytest.mark.parametrize(
    "method,scipy_method", [("wilson", "wilson"), ("clopper-pearson", "exact")]
)
def test_binomial_interval_agrees_with_scipy_binomtest(k, n, method, scipy_method):
    from scipy.stats import binomtest

    ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method=scipy_method)
    lo, hi = binomial_interval(k, n, method=method)
    assert lo == pytest.approx(ref.low, abs=1e-9) and hi == pytest.approx(ref.high, abs=1e-9)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_clopper_pearson_is_wider_than_wilson():
    w = binomial_interval(3, 20)
    cp = binomial_interval(3, 20, method="clopper-pearson")
    assert cp[0] < w[0] and cp[1] > w[1]


def test_count_rejects_impossible_values():
    with pytest.raises(ValueError):
        Count(5, 4)
    assert (Count(1, 2) + Count(2, 2)).rate == pytest.approx(0.75)


def test_data_dir_precedence(tmp_path, monkeypatch):
    from repro.base import settings

    monkeypatch.setenv("REPRO_DATA_DIR", str(tmp_path / "env"))
    assert settings.data_dir(tmp_path / "flag") == tmp_path / "flag"
    assert settings.data_dir() == tmp_path / "env"
    monkeypatch.delenv("REPRO_DATA_DIR")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repro.toml").write_text('[paths]\ndata = "from_toml"\n')
    assert str(settings.data_dir()) == "from_toml"


def test_missing_data_message_names_directory_and_fetch_command(tmp_path):
    from repro.published.fetch import require_file

    with pytest.raises(DataError) as info:
        require_file("gavrikov2024/benchmark.csv", tmp_path)
    msg = str(info.value)
    assert str(tmp_path) in msg and "python -m repro data fetch" in msg and "\n" not in msg


def test_fetch_verifies_sha256_and_writes_atomically(tmp_path, monkeypatch, local_http):
    from repro.published import fetch as f

    payload = b"model,top1\nx,1\n"
    pinned = f.PinnedFile(
        path="gavrikov2024/benchmark.csv",
        url=local_http.add("/benchmark.csv", payload),
        sha256=hashlib.sha256(payload).hexdigest(),
        repository="o/r",
        commit="0" * 40,
        source_path="raw-data/benchmark.csv",
        license="CC BY-SA 4.0",
    )
    monkeypatch.setattr(f, "manifest", lambda: {pinned.path: pinned})
    out = f.fetch(data_dir=tmp_path)
    assert out == [tmp_path / pinned.path] and out[0].read_bytes() == payload
    assert sorted(p.name for p in out[0].parent.iterdir()) == [
        "benchmark.csv"
    ]  # no temporary file left
    # a verified file is not downloaded again
    assert f.fetch(data_dir=tmp_path) == out and local_http.asked == ["/benchmark.csv"]
    # a corrupted download is refused and nothing is written
    (tmp_path / pinned.path).unlink()
    local_http.add("/benchmark.csv", payload + b"x")
    with pytest.raises(
        DataError,
        match=f"download of {pinned.url} has sha256 .*, expected {pinned.sha256}; not saved",
    ):
        f.fetch(data_dir=tmp_path)
    assert not (tmp_path / pinned.path).exists()


def test_manifest_pins_benchmark_and_categories_with_sources_md_checksums():
    from repro.published.fetch import manifest

    m = manifest()
    assert (
        m["gavrikov2024/benchmark.csv"].sha256
        == "f303bde75ea84770576983d784db45763a4397801c733ab17a95a83fc38254b0"
    )
    assert (
        m["gavrikov2024/r50_categories.json"].sha256
        == "139c39ab0fc757ca445798824003b4ca0f4c365fabd917405ef91f5f9e558f55"
    )
    assert m["gavrikov2024/benchmark.csv"].url.startswith(
        "https://raw.githubusercontent.com/paulgavrikov/biases_vs_generalization/9168ac87bdf671ff711f6a19e29d0749ab2aad27/"
    )

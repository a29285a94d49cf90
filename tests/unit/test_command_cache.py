"""The command cache (repro.base.command_cache): a kept result is returned only while everything
the command read is as it was; each way an input can change is made here and must recompute."""

from __future__ import annotations

import json
import os

import pytest

from repro.base import command_cache as cc

pytestmark = pytest.mark.unit


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A data folder with two files, a file outside it, a private user cache, and a command that
    reads the data, looks for a file that is not there, and writes an output."""
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("REPRO_RESULT_CACHE", raising=False)
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.csv").write_text("model,value\nm1,0.25\n")
    (data / "b.csv").write_text("model,value\nm2,0.50\n")
    outside = tmp_path / "settings.toml"
    outside.write_text("alpha = 0.05\n")
    calls: list[int] = []

    def compute():
        calls.append(1)
        text = (data / "a.csv").read_text() + outside.read_text()
        optional = data / "sub" / "optional.csv"
        if optional.exists():  # looked for, not opened while absent: the folder's signature
            text += optional.read_text()
        try:  # tried and not found: recorded as absent
            text += (tmp_path / "overlay.csv").read_text()
        except FileNotFoundError:
            pass
        (tmp_path / "out.json").write_text(json.dumps({"n": len(text)}))  # an output
        return {"text": text, "status": 0}

    def run(inputs=None):
        return cc.cached_command("test", inputs or {"option": 1}, [data], compute)

    return data, outside, tmp_path, calls, run


def test_a_second_call_is_answered_from_the_cache(world):
    _, _, _, calls, run = world
    first, hit = run()
    assert not hit and calls == [1]
    again, hit = run()
    assert hit and calls == [1] and again == first
    other, hit = run({"option": 2})  # another declared input: another key
    assert not hit and calls == [1, 1] and other == first


def test_a_read_file_rewritten_with_the_same_size_and_time_is_recomputed(world):
    """The files the command opened are checked by their content, not their time stamp."""
    data, _, _, calls, run = world
    run()
    st = os.stat(data / "a.csv")
    (data / "a.csv").write_text("model,value\nm1,0.75\n")  # same length
    os.utime(data / "a.csv", ns=(st.st_atime_ns, st.st_mtime_ns))
    result, hit = run()
    assert not hit and "0.75" in result["text"] and len(calls) == 2


def test_a_file_outside_the_named_folders_counts_when_it_was_read(world):
    _, outside, _, calls, run = world
    run()
    outside.write_text("alpha = 0.01\n")
    result, hit = run()
    assert not hit and "0.01" in result["text"]


def test_a_file_that_was_absent_and_appears_is_recomputed(world):
    """Tried and not found (outside the named folders), or only looked for (inside them)."""
    data, _, tmp_path, calls, run = world
    run()
    (tmp_path / "overlay.csv").write_text("m3,0.9\n")
    result, hit = run()
    assert not hit and "m3" in result["text"]
    (data / "sub").mkdir()
    (data / "sub" / "optional.csv").write_text("m4,0.1\n")
    result, hit = run()
    assert not hit and "m4" in result["text"] and len(calls) == 3


def test_a_file_added_anywhere_in_a_named_folder_is_recomputed(world):
    data, _, _, calls, run = world
    run()
    (data / "c.csv").write_text("unread\n")
    _, hit = run()
    assert not hit and len(calls) == 2
    _, hit = run()
    assert hit and len(calls) == 2


def test_what_the_command_wrote_is_not_an_input(world):
    _, _, tmp_path, calls, run = world
    run()
    (tmp_path / "out.json").write_text("{}")
    _, hit = run()
    assert hit and calls == [1]


def test_an_environment_variable_of_the_suite_is_part_of_the_key(world, monkeypatch):
    _, _, _, calls, run = world
    run()
    monkeypatch.setenv("REPRO_SOMETHING", "1")
    _, hit = run()
    assert not hit and len(calls) == 2


def test_off_computes_every_time_and_a_corrupt_entry_is_not_trusted(world, monkeypatch):
    _, _, tmp_path, calls, run = world
    monkeypatch.setenv("REPRO_RESULT_CACHE", "off")
    run()
    run()
    assert len(calls) == 2 and not (tmp_path / "cache").exists()
    monkeypatch.delenv("REPRO_RESULT_CACHE")
    run()
    (entry,) = (tmp_path / "cache" / "results").glob("test-*.json")
    doc = json.loads(entry.read_text())
    doc["result"] = {"text": "forged", "status": 0}
    doc["files"] = {}  # a forged entry that skips the file check is still keyed...
    entry.write_text(json.dumps(doc)[:-5])  # ...but cut short: not JSON
    result, hit = run()
    assert not hit and result["text"] != "forged" and len(calls) == 4


def test_a_folder_that_changes_while_the_command_runs_is_not_kept(world, tmp_path):
    data, _, _, _, _ = world
    n = []

    def compute():
        n.append(1)
        (data / f"new{len(n)}.csv").write_text("x\n")
        return {"text": "", "status": 0}

    cc.cached_command("racy", {}, [data], compute)
    _, hit = cc.cached_command("racy", {}, [data], compute)
    assert not hit and len(n) == 2
    assert not list((tmp_path / "cache" / "results").glob("racy-*.json"))


def test_the_folder_signature_sees_size_time_and_names_and_follows_links(tmp_path):
    root = tmp_path / "root"
    (root / "x").mkdir(parents=True)
    (root / "x" / "f").write_text("1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "g").write_text("2")
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (root / "loop").symlink_to(root, target_is_directory=True)  # walked once, no hang
    first = cc.tree_signature(root)
    assert cc.tree_signature(root) == first
    (elsewhere / "g").write_text("22")
    assert cc.tree_signature(root) != first
    assert cc.tree_signature(tmp_path / "none") == cc.ABSENT


def test_the_key_holds_the_installed_version_of_every_declared_dependency():
    """Read from the distributions' metadata (the warm path imports no numerical library)."""
    import numpy
    import scipy

    versions = cc.dependency_versions()
    assert versions["numpy"] == numpy.__version__ and versions["scipy"] == scipy.__version__
    assert {"python", "machine", "pandas", "torch"} <= set(versions)

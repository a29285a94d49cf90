"""Output paths are checked before a command computes anything (``repro.cli.common.output_file``,
``output_dir``, ``input_dir``): a folder given as an output file, a path under a regular file, a
symlink loop, a file given as an output folder, an unwritable folder. A bad ``--out`` of
``claims``/``report``/``reproduce`` used to fail only after the whole computation (10-60 s)."""

from __future__ import annotations

import os

import pytest

from repro.base.errors import ConfigError
from repro.cli.paths import input_dir, output_dir, output_file

pytestmark = pytest.mark.unit


@pytest.fixture
def place(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "plain").write_text("a file\n")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "dangling").symlink_to("nowhere/x")
    return tmp_path


@pytest.mark.parametrize(
    "rel, message",
    [
        ("folder", "is a folder; expected a file path"),
        ("plain/out.md", "plain is a file, not a folder"),
        ("plain/deeper/out.md", "plain is a file, not a folder"),
        ("loop", "loop is a symlink loop; remove the link"),
        ("loop/out.md", "loop is a symlink loop"),
        ("dangling/out.md", "dangling is a symlink to nothing"),
    ],
)
def test_a_bad_output_file_is_refused_naming_the_part(place, rel, message):
    with pytest.raises(ConfigError, match=message) as err:
        output_file(place / rel, "--out")
    assert str(err.value).startswith(f"--out {place / rel}: ")


@pytest.mark.parametrize(
    "rel, message",
    [
        ("plain", "is a file, not a folder; expected a folder"),
        ("plain/sub", "plain is a file, not a folder"),
        ("loop", "is a symlink loop"),
    ],
)
def test_a_bad_output_or_input_folder_is_refused(place, rel, message):
    with pytest.raises(ConfigError, match=message):
        output_dir(place / rel, "--store")
    with pytest.raises(ConfigError, match=message):
        input_dir(place / rel, "--store")


def test_good_paths_pass_and_nothing_is_created(place):
    assert (
        output_file(place / "new" / "deeper" / "R.md", "--out") == place / "new" / "deeper" / "R.md"
    )
    assert (
        output_file(place / "plain", "--out") == place / "plain"
    )  # an existing file is overwritten
    assert output_dir(place / "folder", "--store") == place / "folder"
    assert output_dir(place / "new-store", "--store") == place / "new-store"
    assert (
        input_dir(place / "missing", "--store") == place / "missing"
    )  # the caller says what missing means
    assert sorted(p.name for p in place.iterdir()) == ["dangling", "folder", "loop", "plain"]
    with pytest.raises(ConfigError, match="no path given"):
        output_file("", "--json")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_folder_is_refused(place):
    ro = place / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ConfigError, match="no permission to write in"):
            output_file(ro / "out.md", "--out")
        with pytest.raises(ConfigError, match="no permission to write in"):
            output_dir(ro / "store", "--store")
    finally:
        ro.chmod(0o700)


@pytest.mark.parametrize(
    "argv",
    [
        ["claims", "--json", "{folder}"],
        ["report", "--out", "{plain}/REPORT.md"],
        ["reproduce", "--published-only", "--out", "{loop}"],
        ["reproduce", "--mini", "--work-dir", "{plain}"],
        ["reproduce", "--mini", "--store", "{plain}/s"],
        ["compare", "--tidy", "{folder}"],
    ],
)
def test_the_commands_refuse_a_bad_output_before_computing(place, argv, monkeypatch, capsys):
    """The computation is replaced by a tripwire: the error must come before it."""
    from repro.claims import context
    from repro.cli import main
    from repro.runner import reproduce

    def tripwire(*a, **kw):
        raise AssertionError("computed before checking the output path")

    monkeypatch.setattr(context, "published_contexts", tripwire)
    monkeypatch.setattr(reproduce, "reproduce", tripwire)
    monkeypatch.setattr("repro.store.compare.compare", tripwire)
    monkeypatch.chdir(place)
    args = [
        a.format(folder=place / "folder", plain=place / "plain", loop=place / "loop") for a in argv
    ]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --") and "Traceback" not in err, err

"""The docs check fails on a stale capture (``docs/gen_cli_output.py --check``): a cheap capture is
rerun and compared, so an edited one is named by page, line and block; an expensive one is not
rerun but checked by the digests of what it read when it was captured (``docs/capture_hook``,
``docs/captures.lock.json``), so a change to a module it imported, to the published data it read,
or to its text is named with the capture."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.by_path import load_module

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    return load_module("gen_cli_output", ROOT / "docs" / "gen_cli_output.py")


GEN = _generator()
INPUTS = GEN.capture_inputs


def _checkout_copy(tmp_path: Path) -> Path:
    """A checkout whose docs/ is a copy (to edit) and whose other entries link to this one."""
    root = tmp_path / "checkout"
    root.mkdir()
    for entry in ROOT.iterdir():
        if entry.name == "docs":
            shutil.copytree(entry, root / "docs", ignore=shutil.ignore_patterns("__pycache__"))
        elif entry.name not in {".git", "runs"}:
            (root / entry.name).symlink_to(entry)
    return root


def _use(monkeypatch, root: Path, tmp_path: Path) -> None:
    from repro.base.settings import data_dir

    monkeypatch.setenv("REPRO_DATA_DIR", str(data_dir()))
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(GEN, "ROOT", root)
    monkeypatch.setattr(GEN, "DOCS", root / "docs")


def test_check_names_an_edited_cheap_capture_of_the_real_docs(tmp_path, monkeypatch, capsys):
    """The pages of this checkout, copied: the check reruns score-critical-band-flat and finds it
    current; after one line of its capture in docs/probes.md is edited, the check exits 1 with a
    line naming the page, the line of the block and the block, and leaves the page as it is."""
    root = _checkout_copy(tmp_path)
    _use(monkeypatch, root, tmp_path)
    page = root / "docs" / "probes.md"
    text = page.read_text()
    begin = "<!-- BEGIN generated example:score-critical-band-flat -->"
    line = text.split("\n").index(begin) + 1
    name = "example:score-critical-band-flat"
    args = ["--check", "--only", "score-critical-band-flat"]

    GEN.main(args)
    assert name not in capsys.readouterr().err  # current before the edit

    shown = '{"bandwidth": null, "center_frequency": null, "peak_noise_sensitivity": null}'
    assert text.count(shown) == 1
    page.write_text(text.replace(shown, shown.replace("null}", "1.0}")))
    assert GEN.main(args) == 1
    err = capsys.readouterr().err
    assert (
        f"error: docs/probes.md:{line}: {name} is stale: run python docs/gen_cli_output.py "
        "--only score-critical-band-flat"
    ) in err.splitlines()
    assert "1.0}" in page.read_text()  # the check writes nothing


@pytest.fixture
def slow_project(tmp_path, monkeypatch):
    """A checkout of one page with one expensive example (``python -m slowmod``: it imports
    ``helper`` and reads one published file) and a data directory with its ``SHA256SUMS``."""
    root, data = tmp_path / "checkout", tmp_path / "data"
    (root / "docs").mkdir(parents=True)
    (data / "set" / "part").mkdir(parents=True)
    (data / "set" / "part" / "x.txt").write_text("published\n")
    (data / "SHA256SUMS").write_text(f"{'a' * 64}  ./set/part/x.txt\n")
    (root / "helper.py").write_text("WORD = 'slow'\n")
    (root / "slowmod.py").write_text(
        "import os\nfrom pathlib import Path\n\nimport helper\n\n"
        "text = (Path(os.environ['REPRO_DATA_DIR']) / 'set/part/x.txt').read_text()\n"
        "print(helper.WORD, text.strip())\n"
    )
    (root / "requirements.lock").write_text("pinned==1\n")
    page = root / "docs" / "p.md"
    page.write_text(
        "# p\n\n<!-- BEGIN generated example:slow -->\n<!-- END generated example:slow -->\n\n"
        "<!-- BEGIN generated help:repro -->\n<!-- END generated help:repro -->\n"
    )
    slow = GEN.Example("slow", "python -m slowmod", expensive=True, in_checkout=True)
    monkeypatch.setattr(GEN, "examples", lambda: [slow])
    monkeypatch.setattr(GEN, "command_paths", lambda: [])
    monkeypatch.setattr(GEN, "ROOT", root)
    monkeypatch.setattr(GEN, "DOCS", root / "docs")
    monkeypatch.setenv("REPRO_DATA_DIR", str(data))
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path / "cache"))
    return root, data, page


def test_a_capture_records_what_it_read_and_is_stale_when_that_changes(slow_project, capsys):
    root, data, page = slow_project
    assert GEN.main(["--only", "slow"]) == 0
    block = GEN.parse(page.read_text(), "p.md")[0]
    assert block.body.split("\n")[1:3] == ["$ python -m slowmod", "slow published"]
    lock = INPUTS.load(root)
    # the modules it imported, the dataset folder it read, the third-party lock; not the page
    assert set(lock["slow"]["inputs"]) == {
        "slowmod.py",
        "helper.py",
        "data:set/part",
        "requirements.lock",
    }
    assert lock["slow"]["output"] == INPUTS.text_digest(block.body)
    capsys.readouterr()
    assert GEN.main(["--check"]) == 0
    assert "2 generated block(s) in 1 page(s) are current" in capsys.readouterr().out

    # a module it imported changes (its output would not, here): stale, naming that module
    (root / "helper.py").write_text("WORD = 'slow'  # edited\n")
    assert GEN.main(["--check"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: docs/p.md:3: example:slow is stale: changed since it was captured: helper.py: "
        "run python docs/gen_cli_output.py --only slow"
    ]
    assert GEN.main(["--only", "slow"]) == 0  # the rerun records the inputs anew
    capsys.readouterr()
    assert GEN.main(["--check"]) == 0

    # the published file it read changes (its SHA256SUMS line): stale, naming its dataset folder
    (data / "SHA256SUMS").write_text(f"{'b' * 64}  ./set/part/x.txt\n")
    capsys.readouterr()
    assert GEN.main(["--check"]) == 1
    assert "changed since it was captured: data:set/part: run" in capsys.readouterr().err


def test_a_hand_edited_or_unrecorded_slow_capture_fails_the_check(slow_project, capsys):
    root, _, page = slow_project
    assert GEN.main(["--only", "slow"]) == 0
    page.write_text(page.read_text().replace("slow published", "fast published"))
    capsys.readouterr()
    assert GEN.main(["--check"]) == 1
    assert (
        "error: docs/p.md:3: example:slow is not the text that was captured (edited by hand, or "
        "captured without recording its inputs): run python docs/gen_cli_output.py --only slow"
    ) in capsys.readouterr().err
    (root / INPUTS.LOCK).unlink()
    assert GEN.main(["--check"]) == 1
    assert (
        "example:slow has no recorded inputs in docs/captures.lock.json: run python "
        "docs/gen_cli_output.py --only slow"
    ) in capsys.readouterr().err

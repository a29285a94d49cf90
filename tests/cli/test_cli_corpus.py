"""The negative-input corpus (issue 11, item 8): every command of ``python -m repro`` (read
from ``repro.cli.build_parser()``, subcommands of ``data`` and ``score`` included) is fed the
malformed values of each of its inputs (``tests/unit/corpus.py``). Each case runs in a fresh
temporary folder (the working folder, HOME and the cache inside it) through ``repro.cli.main``
in this process; a few run through ``python -m repro`` too, to show that the entry point
answers the same.

The whole corpus runs in the default suite (921 tests in this file, about 3.5 minutes of wall time
and under 2 minutes of CPU with ``-n 2`` on 2 shared cores). Every case must answer with exit status
2 and exactly one line on stderr, ``error: ...``, with a hint to fix it and no traceback
(``reported`` cases: the command's own report names the bad file and how to fix it, exit status 1);
no code from a hostile file runs; and nothing is written outside the command's declared outputs.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import stat
from collections import Counter
from pathlib import Path

import pytest

from tests.unit import corpus

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]

#: what a hint looks like: the message says what was expected, what to do, or what is allowed
HINT = re.compile(
    r"expected|did you mean|\bmust\b|\bneeds?\b|\buse\b|\brun\b|\bsee\b|\bremove\b|\bset\b|"
    r"\bunset\b|\bpoint\b|\bchoose\b|\bone of\b|\bknown\b|\bpass\b|\bgive\b|\breplace\b|"
    r"\bfetch\b|\bre-run\b|\bonly\b|\bat least\b|\bat most\b|\bcheck\b|\bsave\b|\bmake\b|"
    r"\bdelete\b|\bchoices?\b|\bhelp\b|\brestore\b|\bstated profiles\b",
    re.IGNORECASE,
)
MAX_MESSAGE = (
    2000  # characters: one line a person can read (a multi-MB input is never echoed whole)
)


def leaf_commands(parser=None, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
    """{command path: its parser} for every command, subcommands of groups included."""
    import argparse

    from repro.cli import build_parser

    parser = parser or build_parser()
    out: dict[tuple[str, ...], object] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = leaf_commands(sub, prefix + (name,))
                out.update(inner or {prefix + (name,): sub})
    return out


def value_options(sub) -> list[str]:
    """The value-taking arguments of a command's parser (``""`` for a positional)."""
    out = []
    for a in sub._actions:
        if a.nargs == 0 or a.dest == "help":
            continue
        out.append(max(a.option_strings, key=len) if a.option_strings else "")
    return out


CASES = [
    (slot, bad)
    for slot in corpus.SLOTS
    for bad in corpus.KINDS[slot.kind]()
    if bad.name not in slot.skip
]


def _case_id(case) -> str:
    slot, bad = case
    return f"{corpus.slot_id(slot)}:{bad.name}".replace(" ", "_")


# ------------------------------------------------------------------------- the shared valid inputs
@pytest.fixture(scope="module")
def shared(tmp_path_factory, data_dir):
    """Valid inputs built once per worker: mini image folders, a copy of the published files the
    claims read, a valid predictions and decisions file. Checked unchanged at the end."""
    from repro.datasets import make_mini
    from repro.published.fetch import manifest

    base = tmp_path_factory.mktemp("corpus-shared")
    roots = make_mini(base / "mini", per_class=1, datasets=["imagenet_val", "cue_conflict"])
    data = base / "data"
    for rel in manifest():
        if rel.startswith(("gavrikov2024/", "imagenetx/factor_accuracies/")):
            (data / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data_dir / rel, data / rel)
    out = {
        "imagenet_val": roots["imagenet_val"],
        "cue_conflict": roots["cue_conflict"],
        "data": data,
    }
    before = _tree(base)
    yield out
    assert _tree(base) == before, "a corpus case wrote into the shared inputs"


def _tree(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: kind, size, mtime, link target (symlinks not followed)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
            size = st.st_size if stat.S_ISREG(st.st_mode) else 0
            out[str(p.relative_to(root))] = (
                stat.S_IFMT(st.st_mode),
                size,
                st.st_mtime_ns if size else 0,
                link,
            )
    return out


# --------------------------------------------------------------------------- running one case
def _fill(text: str, w: corpus.Where, extra: dict[str, str]) -> str:
    fields = {"root": str(w.root), **{k: str(v) for k, v in w.shared.items()}, **extra}
    return text.format(**fields) if "{" in text else text


def _prepare(slot: corpus.Slot, bad: corpus.Bad, root: Path, shared: dict[str, Path], monkeypatch):
    """The case's folders, environment, command line and declared outputs."""
    work = root / "work"
    work.mkdir(parents=True)
    (root / ".git").mkdir()  # the config search stops here (repro.base.config_check.find_config)
    for var in [v for v in os.environ if v.startswith("REPRO_")]:
        monkeypatch.delenv(var)
    # a weights download fails at once, never reaches the network (the constant is read when
    # huggingface_hub is imported, and an earlier case may have imported it)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    for var, sub in (
        ("HOME", "home"),
        ("REPRO_CACHE_DIR", "cache"),
        ("XDG_CACHE_HOME", "xdg-cache"),
        ("XDG_CONFIG_HOME", "xdg-config"),
        ("TORCH_HOME", "torch"),
        ("MPLCONFIGDIR", "mpl"),
    ):
        monkeypatch.setenv(var, str(root / sub))
    monkeypatch.chdir(work)
    w = corpus.Where(root, work, shared)
    extra = {
        "predictions": str(w.file("valid-predictions.csv", corpus.predictions_sample(w))),
        "decisions": str(w.file("valid-decisions.csv", corpus.decisions_sample(w))),
        "tidy": str(w.file("valid-tidy.csv", corpus.tidy_sample(w))),
    }
    value = bad.value(w)
    command = " ".join(slot.command)
    base = [_fill(a, w, extra) for a in (slot.base or corpus.BASE[command])]
    env = {}
    if slot.option.startswith("$"):
        env[slot.option[1:]] = value
        argv = base
    elif slot.option:
        argv = base + [slot.option, value]
    else:
        argv = base + [value]
    for var, v in env.items():
        monkeypatch.setenv(var, v)
    outputs = [
        _fill(o, w, {**extra, "store": value})
        for o in (*slot.outputs, *corpus.OUTPUTS.get(command, ()))
    ]
    outputs = [str((work / o).resolve()) if not os.path.isabs(o) else o for o in outputs]
    return w, argv, env, outputs


def _run_main(argv: list[str]) -> tuple[int | str, str, str]:
    """``repro.cli.main(argv)`` with stdout/stderr captured; an exception escaping main is returned
    as the string ``"escaped: <type>: <message>"`` (the entry point would print its traceback)."""
    from repro.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc: int | str = main(argv)
        except SystemExit as exc:  # argparse's own exit: --help / --version only
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:  # noqa: BLE001 - this is what the test looks for
            rc = f"escaped: {type(exc).__name__}: {str(exc)[:300]}"
    return rc, out.getvalue(), err.getvalue()


def _written(before: dict, after: dict, root: Path, outputs: list[str]) -> list[str]:
    changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p)]
    allowed = [o.rstrip("/") for o in outputs]
    return sorted(
        p
        for p in changed
        if not any(str(root / p) == o or str(root / p).startswith(o + os.sep) for o in allowed)
    )


def check_answer(expect: str, rc, out: str, err: str, value: str) -> str | None:
    """None when the answer is right, else what is wrong."""
    if isinstance(rc, str):
        return rc
    if "Traceback" in out + err:
        return "a traceback was printed"
    if expect == "error":
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if rc != 2:
            return f"exit status {rc} (expected 2); stderr: {err[-500:]!r}; stdout: {out[-300:]!r}"
        if len(lines) != 1 or not lines[0].startswith("error: "):
            return f"stderr is not one 'error:' line: {err[-800:]!r}"
        if len(lines[0]) > MAX_MESSAGE:
            return f"message of {len(lines[0])} characters: {lines[0][:300]}..."
        if not HINT.search(lines[0]):
            return f"no hint in: {lines[0]}"
        return None
    if rc != 1:
        return (
            f"exit status {rc} (expected 1: the bad input reported); stderr: {err[-500:]!r}; "
            f"stdout: {out[-500:]!r}"
        )
    if not re.search(r"ERROR|corrupt|missing|MISMATCH", out + err):
        return f"the bad input is not reported: {out[-500:]!r} {err[-500:]!r}"
    return None


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_malformed_input_gets_one_line(case, tmp_path, shared, monkeypatch):
    slot, bad = case
    from repro.published import fetch

    def offline(url, *a, **kw):  # `data fetch` never reaches the network from the tests
        import urllib.error

        raise urllib.error.URLError("offline (corpus test)")

    monkeypatch.setattr(fetch, "_transfer", offline)
    w, argv, env, outputs = _prepare(slot, bad, tmp_path, shared, monkeypatch)
    before = _tree(tmp_path)
    rc, out, err = _run_main(argv)
    after = _tree(tmp_path)
    expect = slot.expect.get(bad.name, bad.expect)
    problem = check_answer(expect, rc, out, err, argv[-1] if not env else next(iter(env.values())))
    assert problem is None, f"{argv!r} env={ {k: v[:80] for k, v in env.items()} }: {problem}"
    assert not (tmp_path / "CODE-RAN").exists(), "code from a hostile model file ran"
    written = _written(before, after, tmp_path, outputs)
    assert not written, f"wrote outside the command's outputs: {written[:10]}"


# ------------------------------------------------------------------------- completeness and counts
def test_every_command_and_option_is_in_the_corpus():
    """A new command, or a new option of a command, fails here until tests/unit/corpus.py says
    where its malformed values go (or why it takes none)."""
    commands = leaf_commands()
    covered = {(s.command, s.option) for s in corpus.SLOTS}
    missing = []
    for path, sub in commands.items():
        for option in value_options(sub):
            if (path, option) not in covered and (" ".join(path), option) not in corpus.EXEMPT:
                missing.append(f"{' '.join(path)} {option or '<positional>'}")
        if not any(s.command == path for s in corpus.SLOTS):
            missing.append(f"{' '.join(path)} (no input at all)")
    assert not missing, "inputs without malformed cases in tests/unit/corpus.py: " + ", ".join(
        missing
    )
    unknown = {" ".join(s.command) for s in corpus.SLOTS} - {" ".join(p) for p in commands}
    assert not unknown, f"corpus slots of commands that do not exist: {unknown}"
    assert set(corpus.BASE) == {" ".join(p) for p in commands}


def corpus_counts() -> dict[str, int]:
    return dict(sorted(Counter(" ".join(slot.command) for slot, _ in CASES).items()))


def test_corpus_size_per_command(capsys):
    """How many malformed inputs each command is fed (printed; ``-s`` shows it): every command
    gets the config cases and at least one input of its own."""
    counts = corpus_counts()
    assert set(counts) == {" ".join(p) for p in leaf_commands()}
    config = len(corpus.KINDS["config_sample"]())
    assert all(n >= config for n in counts.values()), counts
    with capsys.disabled():
        print(
            "\nnegative-input corpus, inputs per command: "
            + ", ".join(f"{c}: {n}" for c, n in counts.items())
            + f"; total {sum(counts.values())}"
        )


# --------------------------------------------------------------------------- the real entry point
SUBPROCESS = [
    "score shape-bias <arg>:binary",
    "probe --model:pickle-payload",
    "plan --throughput:nan-rate",
    "claims $REPRO_CONFIG:deep-nesting",
    "compare --store:k-above-n",
    "data make-mini --per-class:zero",
    "measure --env:not-callable",
    "models $REPRO_CONFIG:utf16",
    "score critical-band <arg>:newline",
    "reproduce $REPRO_STUDY_PATH:unknown-key",
]


@pytest.mark.parametrize("name", SUBPROCESS)
def test_the_entry_point_answers_like_main(name, tmp_path, shared, monkeypatch, run_cli):
    """``python -m repro`` (a fresh interpreter, real stdout/stderr) gives the same exit status and
    the same stderr as ``main`` in this process."""
    ((slot, bad),) = [c for c in CASES if _case_id(c) == name.replace(" ", "_")]
    w, argv, env, outputs = _prepare(slot, bad, tmp_path / "a", shared, monkeypatch)
    rc, out, err = _run_main(argv)
    monkeypatch.undo()
    w2, argv2, env2, _ = _prepare(slot, bad, tmp_path / "b", shared, monkeypatch)
    proc = run_cli(*argv2, cwd=str(w2.work), env=env2)  # os.environ is the prepared one
    assert not (tmp_path / "b" / "CODE-RAN").exists()
    assert proc.returncode == rc, (proc.returncode, rc, proc.stderr[-1000:])
    assert proc.stderr.replace(str(tmp_path / "b"), "<tmp>") == err.replace(
        str(tmp_path / "a"), "<tmp>"
    )


# ------------------------------------------------------- item 5: --debug and Ctrl-C, every command
def _argv(path: tuple[str, ...]) -> list[str]:
    """The command's corpus base command line (placeholders left as text: it only has to parse)."""
    return [a.replace("{", "").replace("}", "") for a in corpus.BASE[" ".join(path)]]


@pytest.mark.parametrize("path", sorted(leaf_commands()), ids=" ".join)
def test_every_command_answers_ctrl_c_and_errors_in_one_line(path, monkeypatch):
    """Ctrl-C in any command: exit 130 and one line saying what is kept and the command that
    resumes; a ReproError: one ``error:`` line, exit 2, and the traceback only with --debug."""
    from repro.base.errors import ConfigError
    from repro.cli import common, main

    argv = _argv(path)

    def interrupt() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(
        common, "check_config", interrupt
    )  # main calls it inside its try, before the handler
    rc, out, err = _run_main(argv)
    lines = err.splitlines()
    assert rc == 130 and len(lines) == 1 and "Traceback" not in err, (rc, err)
    assert lines[0].startswith("interrupted: everything finished so far is kept")
    assert f"re-run `python -m repro {' '.join(argv[:2])}" in lines[0]

    def fail() -> None:
        raise ConfigError("bad setting x (expected y)")

    monkeypatch.setattr(common, "check_config", fail)
    assert _run_main(argv) == (2, "", "error: bad setting x (expected y)\n")
    with pytest.raises(ConfigError):
        main(["--debug", *argv])


def test_a_usage_error_is_one_line_and_debug_shows_the_traceback():
    from repro.cli import UsageError, main

    rc, out, err = _run_main(["measure", "--batch-size", "0"])
    assert rc == 2 and err == (
        "error: python -m repro measure: argument --batch-size: expected an integer "
        "1..16384, got 0 (see python -m repro measure --help)\n"
    )
    assert _run_main(["data"])[2].startswith(
        "error: python -m repro data: name what to do, one of "
    )
    with pytest.raises(UsageError):
        main(["--debug", "measure", "--no-such-option"])


def test_bugs_the_corpus_found_stay_fixed(tmp_path, monkeypatch):
    """A few of the corpus's findings, checked by name (the corpus runs them
    too, among its cases)."""
    from repro.cli import MAX_MESSAGE

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    monkeypatch.delenv("REPRO_CONFIG", raising=False)
    # a 100,000-character name: the line keeps its start and end, no longer than MAX_MESSAGE
    rc, _, err = _run_main(["plan", "--study", "n" * 100_000])
    assert (
        rc == 2
        and len(err.rstrip("\n")) <= MAX_MESSAGE
        and "characters left out" in err
        and err.count("\n") == 1
    )
    # --study given with no name meant every study
    rc, _, err = _run_main(["plan", "--study", ",,"])
    assert rc == 2 and err.startswith("error: no name given"), err
    # an analysis definition that is a folder / UTF-16 / has an unknown key
    (tmp_path / "a.toml").mkdir()
    assert _run_main(["claims", "--analysis", str(tmp_path / "a.toml")])[2] == (
        f"error: {tmp_path / 'a.toml'}: is a folder (expected an analysis definition (.toml))\n"
    )
    (tmp_path / "u.toml").write_bytes('extends = "gavrikov2024"\n'.encode("utf-16"))
    assert "UTF-16 text" in _run_main(["claims", "--analysis", str(tmp_path / "u.toml")])[2]
    (tmp_path / "k.toml").write_text('extends = "gavrikov2024"\nconfidence = 0.9\n')
    assert (
        "unknown key 'confidence'"
        in _run_main(["claims", "--analysis", str(tmp_path / "k.toml")])[2]
    )
    # a repro.toml [models] entry with a code global: refused by a command that loads no model too
    (tmp_path / "repro.toml").write_text(
        '[models.evil]\nsource = "local"\nreference = "/x.pth"\n'
        'arch = "tiny:8"\npickle_globals = ["builtins.exec"]\n'
    )
    rc, _, err = _run_main(["score", "critical-band", "0,0,0,0,2,2,0"])
    assert rc == 2 and "builtins.exec" in err, err
    (tmp_path / "repro.toml").unlink()
    # --env naming something that is not a no-argument factory
    rc, _, err = _run_main(
        [
            "measure",
            "--models",
            "m1",
            "--measurements",
            "fake_a",
            "--env",
            "tests.fakes:N_ITEMS",
            "--store",
            str(tmp_path / "s"),
            "--no-progress",
        ]
    )
    assert rc == 2 and "not callable" in err, err

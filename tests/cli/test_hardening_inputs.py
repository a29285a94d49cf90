"""Every bad input a user can cause is one line (issue 11, items 3, 4 and 5): tampered published
tables and decision files are refused by checksum, decision files with duplicated trials or
images or a category that disagrees with the image name name the lines, and the failures the
issue lists (offline fetch, decompression bomb, text or int64 checkpoint, a small variant
group, a degenerate curvilinear fit, a text cell in an ImageNet-X table, Ctrl-C) give one
line and a non-zero exit, the traceback only with ``--debug``."""

from __future__ import annotations

import copy
import dataclasses
import glob
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest

from repro.base.errors import DataError
from tests.unit import malformed
from tests.waiting import LineReader, wait_exit

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]
TABLE = "imagenetx/factor_accuracies/imagenet_testbed/class/accuracies_per_factor.csv"


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-3000:])
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln and not ln.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


# ------------------------------------------------------------------ item 3: checksums at read time
def _copy_data(data_dir: Path, dest: Path, rels: list[str]) -> Path:
    for rel in rels:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(data_dir / rel, dest / rel)
    return dest


def test_a_tampered_imagenetx_table_stops_the_claims(tmp_path, data_dir, run_cli):
    """A tampered table would flip a verdict silently: now the claims refuse it, naming the file
    and both hashes."""
    from repro.published.fetch import manifest, sha256_of

    rels = ["gavrikov2024/benchmark.csv", "gavrikov2024/r50_categories.json"] + [
        r
        for r in manifest()
        if r.startswith(("imagenetx/factor_accuracies/", "critical-band-masking/"))
    ]
    copy_dir = _copy_data(data_dir, tmp_path / "data", rels)  # every study's published inputs
    out = run_cli("claims", "--data-dir", copy_dir)
    assert out.returncode == 0, out.stderr  # the verified copy still works
    path = copy_dir / TABLE
    text = path.read_text().splitlines()
    text[5] = text[5].replace("0.", "0.9", 1)
    path.write_text("\n".join(text) + "\n")
    msg = _one_line_error(run_cli("claims", "--data-dir", copy_dir))
    assert (
        f"{path}: sha256 {sha256_of(path)} does not match the pinned sha256 "
        f"{manifest()[TABLE].sha256}"
    ) in msg


def test_a_tampered_prediction_file_and_decisions_file_are_refused(tmp_path, data_dir, monkeypatch):
    from repro.published.fetch import require_file, verify_if_pinned
    from repro.scoring.shape_bias import read_decisions_csv

    rel_pred = "imagenetx/model_predictions/ResNet50.csv"
    rel_dec = "model-vs-human/cue-conflict/cue-conflict_resnet50_session-1.csv"
    copy_dir = _copy_data(data_dir, tmp_path / "data", [rel_pred, rel_dec])
    for rel in (rel_pred, rel_dec):
        with open(copy_dir / rel, "a") as fh:
            fh.write("\n")
    with pytest.raises(DataError, match="does not match the pinned sha256"):
        require_file(rel_pred, copy_dir)
    with pytest.raises(
        DataError,
        match=r"cue-conflict_resnet50_session-1\.csv: sha256 .* does not match the pinned",
    ):
        read_decisions_csv(copy_dir / rel_dec, data_dir=copy_dir)  # the data directory passed down
    monkeypatch.setenv("REPRO_DATA_DIR", str(copy_dir))
    with pytest.raises(
        DataError,
        match=r"cue-conflict_resnet50_session-1\.csv: sha256 .* does not match the pinned",
    ):
        read_decisions_csv(
            copy_dir / rel_dec
        )  # a path alone: checked against the configured data directory
    verify_if_pinned(
        tmp_path / "elsewhere.csv"
    )  # a file outside the data directory: nothing to check


# --------------------------------------------------------------------------- item 4: decision files
@pytest.mark.parametrize(
    "writer,expect",
    [
        (
            malformed.duplicate_trial_decisions,
            "duplicate trials on line(s) 6: trial 2 of subject 'm', session 1 is on "
            "lines 3 and 6 (expected each trial once)",
        ),
        (
            malformed.duplicate_image_decisions,
            "duplicate images on line(s) 7: image 'airplane1-bear1' of subject 'm', "
            "session 1 is on lines 2 and 7 (expected each image once)",
        ),
        (
            malformed.category_mismatch_decisions,
            "line(s) 5: column category disagrees with the shape class of the image name "
            "(line 5: category 'bicycle', imagename 'bird4-boat1.png' has shape class 'bird'; "
            "expected category to be that shape class: fix those rows)",
        ),
    ],
)
def test_decision_files_with_duplicates_or_wrong_categories_name_the_lines(
    tmp_path, run_cli, writer, expect
):
    from repro.scoring.shape_bias import read_decisions_csv

    good = malformed.write_decisions(tmp_path / "good.csv", malformed.decisions_rows())
    assert len(read_decisions_csv(good)) == 6
    bad = writer(tmp_path / "bad.csv")
    with pytest.raises(DataError) as err:
        read_decisions_csv(bad)
    assert str(err.value) == f"{bad}: {expect}"
    assert _one_line_error(run_cli("score", "shape-bias", bad)) == f"error: {bad}: {expect}"


def test_the_19_published_decision_files_still_read(data_dir):
    from repro.scoring.shape_bias import read_decisions_csv, shape_bias

    files = sorted(glob.glob(str(data_dir / "model-vs-human" / "cue-conflict" / "*.csv")))
    assert len(files) == 19
    for f in files:
        assert len(read_decisions_csv(f)) == 1280, f
    score = shape_bias(
        read_decisions_csv(
            data_dir / "model-vs-human/cue-conflict/cue-conflict_resnet50_session-1.csv"
        )
    )
    assert (score.shape, score.texture) == (169, 620)


# --------------------------------------------------------------------------- item 5: one line each
def test_data_fetch_offline_is_one_line_and_leaves_no_folder(tmp_path, monkeypatch, local_http):
    from repro.published import fetch as f

    def offline(url, output_file, fetcher=None):
        raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(f, "_transfer", offline)
    target = tmp_path / "data"
    with pytest.raises(DataError) as err:
        f.fetch(["gavrikov2024/benchmark.csv"], data_dir=target)
    msg = str(err.value)
    assert (
        msg.startswith("could not download https://raw.githubusercontent.com/")
        and "offline?" in msg
    )
    assert "\n" not in msg and not target.exists()  # no empty folder left behind
    # a server that does not answer: the download gives up after FETCH_TIMEOUT_S, never hangs
    monkeypatch.undo()
    pinned = f.manifest()["gavrikov2024/benchmark.csv"]
    slow = dataclasses.replace(pinned, url=local_http.add("/benchmark.csv", b"x", hang=True))
    monkeypatch.setattr(f, "manifest", lambda: {slow.path: slow})
    monkeypatch.setattr(f, "FETCH_TIMEOUT_S", 0.5)
    monkeypatch.setattr(f, "RETRIES", 0)
    with pytest.raises(
        DataError, match=r"could not download http://127\.0\.0\.1:\d+/benchmark\.csv: .*timed out"
    ):
        f.fetch([slow.path], data_dir=target)
    assert not target.exists()


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    from repro.datasets import make_mini

    return make_mini(
        tmp_path_factory.mktemp("mini"), per_class=1, datasets=["imagenet_val", "cue_conflict"]
    )


@pytest.mark.parametrize(
    "bomb", [malformed.decompression_bomb, malformed.decompression_bomb_warning]
)
def test_a_decompression_bomb_image_is_one_line(tmp_path, mini, run_cli, bomb):
    cue = tmp_path / "cue"
    shutil.copytree(mini["cue_conflict"], cue)
    victim = sorted((cue / "bird").glob("*.png"))[1]
    bomb(victim)
    msg = _one_line_error(
        run_cli("probe", "shape-bias", "--model", "tiny_random_a", "--data", cue, "--device", "cpu")
    )
    assert msg.startswith(f"error: {victim}: refused as a decompression bomb") and "pixels" in msg


def test_a_text_file_given_as_a_checkpoint_is_one_line(tmp_path, mini, run_cli):
    path = malformed.text_checkpoint(tmp_path / "weights.pth")
    msg = _one_line_error(
        run_cli("probe", "spectral", "--model", path, "--data", mini["imagenet_val"])
    )
    assert f"{path}: cannot be read as a PyTorch checkpoint" in msg


def test_an_int64_weight_tensor_is_one_line(tmp_path, mini, run_cli):
    path = malformed.int64_weights(tmp_path / "int.pth")
    (tmp_path / "repro.toml").write_text(
        f'[models.mine]\nsource = "local"\nreference = "{path}"\narch = "tiny:8"\n'
    )
    msg = _one_line_error(
        run_cli(
            "probe", "spectral", "--model", "mine", "--data", mini["imagenet_val"], cwd=tmp_path
        )
    )
    assert msg == (
        "error: model 'mine': features.0.weight is a torch.int64 tensor in the "
        "checkpoint, expected a "
        "floating-point tensor (the model's is torch.float32); the file holds other data "
        "under this key"
    )


SMALL_GROUP = """extends = "gavrikov2024"
name = "small_group"
[groups.at]
label = "AT"
models = ["robust_resnet50_l2_eps0", "robust_resnet50_l2_eps1"]
"""


def test_a_variant_group_of_two_models_is_one_line_and_debug_shows_the_traceback(
    tmp_path, run_cli, data_dir
):
    variant = tmp_path / "small.toml"
    variant.write_text(SMALL_GROUP)
    msg = _one_line_error(run_cli("claims", "--analysis", variant, "--data-dir", data_dir))
    assert msg == (
        f"error: {variant}: [groups.at] selects 2 model(s) (robust_resnet50_l2_eps0, "
        "robust_resnet50_l2_eps1); "
        "a Spearman correlation needs at least 3"
    )
    res = run_cli("--debug", "claims", "--analysis", variant, "--data-dir", data_dir)
    assert res.returncode != 0 and "Traceback" in res.stderr and "ConfigError" in res.stderr


def test_a_constant_column_in_the_curvilinear_fit_is_a_data_error(data_dir):
    from repro.base.study import get_study
    from repro.base.table import ModelTable
    from repro.claims.context import published_context
    from repro.studies.gavrikov2024 import statistics as st

    ctx = published_context(get_study("gavrikov2024"), data_dir)
    at = ctx.analysis.groups["at"]
    original = copy.deepcopy(ctx.table.values)
    values = copy.deepcopy(original)
    for m in at:
        values[m]["shape-bias"] = 0.3
    ctx.table = ModelTable(values, origin="x", default_source="published")
    ctx.__dict__.pop("analysis", None)
    with pytest.raises(
        DataError,
        match=r"curvilinear fit over group 'at': bias 'shape_bias' \(shape-bias\) takes 1 "
        r"distinct value\(s\) \(0.3\) over the 15 models; the fit needs at least 3",
    ):
        st.curvilinear(
            ctx,
            bias="shape_bias",
            categories=["adversarial", "concepts"],
            group="at",
            peak_category="adversarial",
        )
    values = copy.deepcopy(original)
    adv = ctx.analysis.columns_of("categories", "adversarial")
    for m in at:
        for c in adv:
            values[m][c] = 5.0
    ctx.table = ModelTable(values, origin="x", default_source="published")
    ctx.__dict__.pop("analysis", None)
    with pytest.raises(DataError, match="category 'adversarial' .* takes 1 distinct value"):
        st.curvilinear(
            ctx,
            bias="shape_bias",
            categories=["adversarial"],
            group="at",
            peak_category="adversarial",
        )


def test_a_text_cell_in_an_imagenetx_table_names_row_and_column(tmp_path, data_dir):
    from repro.studies.imagenetx.published import parse_factor_table

    bad = malformed.imagenetx_table_with_text_cell(
        data_dir / TABLE, tmp_path / "t.csv", row=3, column="pose"
    )
    with pytest.raises(DataError) as err:
        parse_factor_table(bad)
    assert str(err.value) == (
        f"{bad}: row 3 (line 4): pose = 'n/a?' is not a number (expected an accuracy in "
        "[0, 1], or empty)"
    )


# exec python -m repro with SIGINT at its default action: a process inherits an ignored SIGINT
# (pytest started with `&` from a script, or under nohup in some shells) and Python then keeps
# ignoring it, whereas a terminal's foreground job has it at its default
_DEFAULT_SIGINT_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'repro', *sys.argv[1:]])"
)


def _measure_in_its_own_group(argv: list[str], env: dict[str, str]) -> subprocess.Popen:
    """``python -m repro <argv>`` as a terminal starts a job: the leader of its own process group,
    with SIGINT at its default action whatever the test process inherited."""
    return subprocess.Popen(
        [sys.executable, "-c", _DEFAULT_SIGINT_EXEC, *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _ctrl_c(proc: subprocess.Popen) -> None:
    """Ctrl-C as a terminal sends it: SIGINT to every process of the foreground group."""
    os.killpg(proc.pid, signal.SIGINT)


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:  # only when an assertion failed first
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_ctrl_c_says_how_to_resume_and_keeps_finished_jobs(tmp_path):
    """Ctrl-C while a job runs: exit status 130, the resume line last, the finished job kept and the
    interrupted ones not recorded. The test waits for the command's own progress line of the
    finished job (its standard error is a pipe: one line per job), then interrupts; the next jobs
    run until interrupted, so the moment of the Ctrl-C cannot matter."""
    store = tmp_path / "store"
    argv = [
        "measure",
        "--models",
        "m1,m2,m3",
        "--measurements",
        "fake_a",
        "--store",
        str(store),
        "--env",
        "tests.fakes:environment",
        "--device",
        "cpu",
    ]
    env = dict(
        os.environ, PYTHONPATH=str(ROOT), FAKE_SLEEP_MODELS="m2:1e9,m3:1e9", OMP_NUM_THREADS="1"
    )
    proc = _measure_in_its_own_group(argv, env)
    try:
        err = LineReader(proc.stderr, proc)
        err.wait_for(r"^job 1/3: m1 x fake_a: measured")
        _ctrl_c(proc)
        assert wait_exit(proc, err) == 130, err.rest()
    finally:
        _end(proc)
    text = err.rest()
    assert "Traceback" not in text, text
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert lines[-1].startswith("interrupted: everything finished so far is kept")
    assert lines[-1].endswith(f"re-run `python -m repro {' '.join(argv)}` to resume")
    from repro.store.files import Store

    assert Store(store).read("m1", "fake_a").ok
    assert Store(store).read("m2", "fake_a") is None and Store(store).read("m3", "fake_a") is None


def test_ctrl_c_stops_every_worker_and_says_how_to_resume_once(tmp_path):
    """``measure --workers 2``: Ctrl-C reaches the command and its workers; the command stops them,
    waits for them (none outlives it) and prints the resume line once, for itself (a worker's own
    command, with ``--worker I/N``, is never the one to re-run). Each worker's first job is quick
    and its second runs until interrupted (worker 0 starts at m1, worker 1 at m3): the test
    interrupts once both quick jobs have been reported, i.e. both workers are in their sweeps."""
    store, log = tmp_path / "store", tmp_path / "runs.log"
    argv = [
        "measure",
        "--models",
        "m1,m2,m3,m4",
        "--measurements",
        "fake_a",
        "--store",
        str(store),
        "--env",
        "tests.fakes:environment",
        "--device",
        "cpu",
        "--workers",
        "2",
    ]
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT),
        FAKE_SLEEP_MODELS="m2:1e9,m4:1e9",
        OMP_NUM_THREADS="1",
        FAKE_RUN_LOG=str(log),
    )
    proc = _measure_in_its_own_group(argv, env)
    try:
        err = LineReader(proc.stderr, proc)
        err.wait_for(r"^\[w\d\] job \d/4: (m1|m3) x fake_a: measured", count=2)
        _ctrl_c(proc)
        assert wait_exit(proc, err) == 130, err.rest()
    finally:
        _end(proc)
    text = err.rest()
    assert "Traceback" not in text, text
    said = [ln for ln in text.splitlines() if ln.startswith("interrupted:")]
    assert said == [
        f"interrupted: everything finished so far is kept (stored jobs, verified files); re-run "
        f"`python -m repro {' '.join(argv)}` to resume"
    ]
    workers = {
        int(line.split()[0]) for line in log.read_text().splitlines() if " <start> " in line
    } - {proc.pid}
    assert len(workers) == 2
    for pid in workers:  # every worker has exited and was waited for
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    from repro.store.files import Store

    assert Store(store).read("m1", "fake_a").ok and Store(store).read("m3", "fake_a").ok
    assert Store(store).read("m2", "fake_a") is None and Store(store).read("m4", "fake_a") is None

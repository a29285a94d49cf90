"""The tests of tests/unit/test_security.py that start a process (`python -m repro` or another), in
the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import pytest

from tests.unit import malformed
from tests.unit import test_security as unit_module
from tests.unit.test_security import _never_advises_trust

hostile = unit_module.hostile  # the fixture of tests/unit/test_security.py

pytestmark = pytest.mark.cli


def test_the_payload_is_real(hostile):
    """Control: an unrestricted unpickle of the same file does run the payload (so the marker
    checks of the loaders' tests, here and in tests/unit/test_security.py, can tell a safe loader
    from an unsafe one); the plain pickle's payload starts a process."""
    import torch

    path, marker = hostile
    try:
        torch.load(path, weights_only=False)
    except (
        RuntimeError
    ):  # a plain pickle: torch unpickles it as the legacy magic number, then complains
        pass
    assert marker.exists()


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def mini_val(tmp_path_factory):
    from repro.datasets import make_mini

    return make_mini(tmp_path_factory.mktemp("mini"), per_class=1, datasets=["imagenet_val"])[
        "imagenet_val"
    ]


def test_probe_model_file(run_cli, hostile, mini_val, tmp_path):
    path, marker = hostile
    msg = _one_line_error(
        run_cli(
            "probe",
            "spectral",
            "--model",
            path,
            "--data",
            mini_val,
            "--device",
            "cpu",
            cwd=tmp_path,
        )
    )
    assert not marker.exists()
    assert str(path) in msg and "refused" in msg
    _never_advises_trust(msg)


def test_probe_file_url(run_cli, hostile, mini_val, tmp_path):
    path, marker = hostile
    msg = _one_line_error(
        run_cli(
            "probe",
            "spectral",
            "--model",
            f"file://{path}",
            "--data",
            mini_val,
            "--device",
            "cpu",
            cwd=tmp_path,
        )
    )
    assert not marker.exists() and str(path) in msg
    _never_advises_trust(msg)


def test_zoo_local_source_from_repro_toml(run_cli, hostile, mini_val, tmp_path):
    path, marker = hostile
    (tmp_path / "repro.toml").write_text(
        f'[models.mine]\nsource = "local"\nreference = "{path}"\narch = "tiny:8"\n'
    )
    msg = _one_line_error(
        run_cli(
            "probe",
            "spectral",
            "--model",
            "mine",
            "--data",
            mini_val,
            "--device",
            "cpu",
            cwd=tmp_path,
        )
    )
    assert not marker.exists() and str(path) in msg and "refused" in msg
    _never_advises_trust(msg)


def test_measure_runner_with_a_zoo_local_source(run_cli, hostile, mini_val, tmp_path):
    """The runner records the refusal as the job's error (a failed job, the sweep goes on)."""
    import json

    path, marker = hostile
    (tmp_path / "repro.toml").write_text(
        f'[models.mine]\nsource = "local"\nreference = "{path}"\narch = "tiny:8"\n'
        f'[datasets]\nimagenet_val = "{mini_val}"\n'
    )
    res = run_cli(
        "measure",
        "--models",
        "mine",
        "--measurements",
        "spectral",
        "--store",
        tmp_path / "store",
        "--device",
        "cpu",
        "--no-progress",
        cwd=tmp_path,
    )
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert not marker.exists()
    error = json.loads((tmp_path / "store" / "mine" / "spectral.json").read_text())["error"]
    assert error["type"] == "CheckpointError" and "refused" in error["message"]
    _never_advises_trust(error["message"])


def test_models_override_of_a_builtin_model(run_cli, hostile, mini_val, tmp_path):
    path, marker = hostile
    (tmp_path / "repro.toml").write_text(f'[models]\nresnet50_prime = "{path}"\n')
    msg = _one_line_error(
        run_cli(
            "probe",
            "spectral",
            "--model",
            "resnet50_prime",
            "--data",
            mini_val,
            "--device",
            "cpu",
            cwd=tmp_path,
        )
    )
    assert not marker.exists() and str(path) in msg and "refused" in msg
    _never_advises_trust(msg)


def test_pickle_globals_exec_in_a_repro_toml_of_the_working_directory(
    run_cli, hostile, mini_val, tmp_path
):
    path, marker = hostile
    cfg = tmp_path / "repro.toml"
    cfg.write_text(
        f'[models.evil]\nsource = "local"\nreference = "{path}"\narch = "tiny:8"\n'
        'pickle_globals = ["builtins.exec"]\n'
    )
    sub = tmp_path / "sub"  # found walking up from a sub-folder too
    sub.mkdir()
    for cwd in (tmp_path, sub):
        msg = _one_line_error(
            run_cli(
                "probe",
                "spectral",
                "--model",
                "evil",
                "--data",
                mini_val,
                "--device",
                "cpu",
                cwd=cwd,
            )
        )
        assert not marker.exists()
        assert (
            str(cfg) in msg
            and "'builtins.exec'" in msg
            and "pickle_globals" in msg
            and "not allowed" in msg
        )
        _never_advises_trust(msg)
    msg = _one_line_error(run_cli("models", cwd=tmp_path))  # listing the zoo parses the same entry
    assert str(cfg) in msg and "builtins.exec" in msg


def test_torchscript_needs_an_explicit_flag(run_cli, mini_val, tmp_path):
    path = malformed.torchscript_file(tmp_path / "scripted.pt")
    msg = _one_line_error(
        run_cli("probe", "spectral", "--model", path, "--data", mini_val, "--device", "cpu")
    )
    assert str(path) in msg and "TorchScript" in msg and "code" in msg
    _never_advises_trust(msg)

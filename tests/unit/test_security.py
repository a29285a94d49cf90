"""Model files are data, never code (issue 11, item 1): a hostile pickle loaded through every
entry point runs nothing (its marker file never appears) and is refused in one line that never
advises trusting the file; ``pickle_globals`` only from the tensor/container allowlist, named
with the file it came from; TorchScript only on explicit request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from repro.base.errors import CheckpointError, ConfigError
from tests.unit import malformed

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def _never_advises_trust(msg: str) -> None:
    low = msg.lower()
    assert "trust" not in low and "weights_only=false" not in low and "repro_trust" not in low, msg


@pytest.fixture(scope="module")
def mini_val(tmp_path_factory):
    from repro.datasets import make_mini

    return make_mini(tmp_path_factory.mktemp("mini"), per_class=1, datasets=["imagenet_val"])[
        "imagenet_val"
    ]


@pytest.fixture(params=["torch_save_exec", "plain_pickle_os_system"])
def hostile(request, tmp_path):
    """(hostile file, marker its payload would create)."""
    marker = tmp_path / "CODE_RAN"
    if request.param == "torch_save_exec":
        path = malformed.malicious_torch_save(tmp_path / "evil.pth", marker)
    else:
        path = malformed.malicious_plain_pickle(tmp_path / "evil.pth", marker)
    return path, marker


def test_the_payload_is_real(hostile):
    """Control: an unrestricted unpickle of the same file does run the payload (so the marker
    check below can tell a safe loader from an unsafe one)."""
    import torch

    path, marker = hostile
    try:
        torch.load(path, weights_only=False)
    except (
        RuntimeError
    ):  # a plain pickle: torch unpickles it as the legacy magic number, then complains
        pass
    assert marker.exists()


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


def test_in_process_zoo_loaders_refuse_and_run_nothing(hostile, tmp_path):
    from repro.zoo import load_model
    from repro.zoo.specs import local_spec

    path, marker = hostile
    for call in (
        lambda: load_model(local_spec(path)),
        lambda: load_model("resnet50_prime", weights_dir=tmp_path, checkpoint=path),
    ):
        with pytest.raises(CheckpointError) as err:
            call()
        assert not marker.exists() and str(path) in str(err.value) and "\n" not in str(err.value)
        _never_advises_trust(str(err.value))


def test_a_spec_with_an_unlisted_global_is_refused_at_load_time_too(tmp_path):
    """A ModelSpec built in Python skips the TOML parser: the loader checks the allowlist itself."""
    from dataclasses import replace

    from repro.zoo.loaders import read_checkpoint
    from repro.zoo.specs import local_spec

    marker = tmp_path / "CODE_RAN"
    path = malformed.malicious_torch_save(tmp_path / "evil.pth", marker)
    spec = replace(local_spec(path), pickle_globals=("builtins.exec",))
    with pytest.raises(ConfigError, match="'builtins.exec' is not allowed"):
        read_checkpoint(path, spec)
    assert not marker.exists()


@pytest.mark.parametrize(
    "name",
    [
        "builtins.exec",
        "builtins.eval",
        "os.system",
        "subprocess.Popen",
        "tests.unit.malformed._Exec",
        "torch.load",
        "numpy.load",
    ],
)
def test_allowlist_refuses_code(name):
    from repro.zoo.safe_load import check_pickle_globals

    with pytest.raises(ConfigError) as err:
        check_pickle_globals([name], "my.toml model 'x'")
    assert str(err.value).startswith("my.toml model 'x': pickle_globals entry") and repr(
        name
    ) in str(err.value)


def test_allowlist_accepts_tensor_and_container_types_and_every_entry_resolves():
    import importlib

    from repro.zoo.safe_load import ALLOWED_PICKLE_GLOBALS, check_pickle_globals

    assert check_pickle_globals(
        ["collections.OrderedDict", "argparse.Namespace", "numpy.dtype"], "x"
    ) == ("collections.OrderedDict", "argparse.Namespace", "numpy.dtype")
    resolved = 0
    for dotted in ALLOWED_PICKLE_GLOBALS:
        module, _, attr = dotted.rpartition(".")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue  # numpy 1.x vs 2.x spellings: one of each pair exists
        resolved += 1
        assert isinstance(obj, type) or getattr(obj, "__module__", "").split(".")[0] in (
            "torch",
            "numpy",
        ), dotted
    assert resolved >= len(ALLOWED_PICKLE_GLOBALS) - 3


def test_checkpoints_with_numpy_arrays_and_training_args_still_load(tmp_path):
    """Real checkpoints hold numpy scalars/arrays and argparse.Namespace next to the weights."""
    import argparse

    import numpy as np
    import torch

    from repro.zoo import load_model

    state = malformed.tiny_state_dict()
    path = tmp_path / "ok.pth"
    torch.save(
        {
            "state_dict": state,
            "args": argparse.Namespace(lr=0.1),
            "best": np.float64(0.7),
            "hist": np.arange(3.0),
        },
        path,
    )
    from dataclasses import replace

    from repro.zoo.specs import local_spec

    spec = replace(
        local_spec(path),
        arch="tiny:8",
        pickle_globals=("numpy.core.multiarray._reconstruct", "numpy.ndarray")
        if np.__version__ < "2"
        else ("numpy._core.multiarray._reconstruct", "numpy.ndarray"),
    )
    model = load_model(spec)
    assert torch.equal(model.model.fc.weight, state["fc.weight"])


def test_torchscript_needs_an_explicit_flag(run_cli, mini_val, tmp_path):
    path = malformed.torchscript_file(tmp_path / "scripted.pt")
    msg = _one_line_error(
        run_cli("probe", "spectral", "--model", path, "--data", mini_val, "--device", "cpu")
    )
    assert str(path) in msg and "TorchScript" in msg and "code" in msg
    _never_advises_trust(msg)


def test_every_torch_load_in_the_package_is_weights_only():
    """Static audit: torch.load only with weights_only=True; no pickle.load,
    no unrestricted loads."""
    offenders = []
    for py in (REPO / "repro").rglob("*.py"):
        text = py.read_text()
        for m in re.finditer(r"torch\.load\(([^)]*)\)", text):
            if "weights_only=True" not in m.group(1):
                offenders.append(f"{py.relative_to(REPO)}: {m.group(0)}")
        for bad in (
            "weights_only=False",
            "weights_only=not",
            "pickle.load(",
            "pickle.loads(",
            "allow_pickle=True",
            "REPRO_TRUST_CHECKPOINTS",
        ):
            if bad in text:
                offenders.append(f"{py.relative_to(REPO)}: {bad}")
    assert not offenders, offenders

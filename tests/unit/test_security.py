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


def _never_advises_trust(msg: str) -> None:
    low = msg.lower()
    assert "trust" not in low and "weights_only=false" not in low and "repro_trust" not in low, msg


@pytest.fixture(params=["torch_save_exec", "plain_pickle_os_system"])
def hostile(request, tmp_path):
    """(hostile file, marker its payload would create)."""
    marker = tmp_path / "CODE_RAN"
    if request.param == "torch_save_exec":
        path = malformed.malicious_torch_save(tmp_path / "evil.pth", marker)
    else:
        path = malformed.malicious_plain_pickle(tmp_path / "evil.pth", marker)
    return path, marker


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

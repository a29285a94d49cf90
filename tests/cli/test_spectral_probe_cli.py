"""``python -m repro probe`` (probe CLI): clear one-line errors for a missing or malformed data
folder and a bad model file, and a real run of the spectral probe on a generated mini ImageNet-val
folder with a TorchScript model file (JSON and counts CSV)."""

from __future__ import annotations

import csv
import json
import warnings

import pytest

pytestmark = pytest.mark.cli


def _one_line_error(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_missing_data_folder_is_named_with_the_expected_layout(run_cli, tmp_path):
    missing = tmp_path / "no-such-folder"
    msg = _one_line_error(
        run_cli("probe", "spectral", "--model", "tiny_random_a", "--data", missing)
    )
    assert str(missing) in msg and "not found" in msg and "<wnid>/<image>" in msg


def test_a_file_is_not_a_data_folder(run_cli, tmp_path):
    f = tmp_path / "images.zip"
    f.write_bytes(b"PK")
    msg = _one_line_error(
        run_cli("probe", "critical-band", "--model", "tiny_random_a", "--data", f)
    )
    assert str(f) in msg and "not a folder" in msg


def test_malformed_data_folder_says_what_was_expected_and_found(run_cli, tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "ILSVRC2012_val_00000001.JPEG").write_bytes(b"")
    msg = _one_line_error(run_cli("probe", "spectral", "--model", "tiny_random_a", "--data", flat))
    assert str(flat) in msg and "class folders" in msg and "found 0 folders" in msg
    # the wrong dataset for the probe: cue-conflict stimuli are not ImageNet-val class folders
    cue = tmp_path / "cue"
    (cue / "airplane").mkdir(parents=True)
    (cue / "airplane" / "airplane1-bicycle2.png").write_bytes(b"")
    msg = _one_line_error(
        run_cli("probe", "critical-band", "--model", "tiny_random_a", "--data", cue)
    )
    assert str(cue) in msg and "probe critical-band" in msg


@pytest.fixture(scope="module")
def mini_val(tmp_path_factory):
    from repro.datasets import make_mini

    return make_mini(tmp_path_factory.mktemp("mini"), per_class=1, datasets=["imagenet_val"])[
        "imagenet_val"
    ]


def test_bad_model_file_is_a_checkpoint_error(run_cli, mini_val, tmp_path):
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"not a model")
    msg = _one_line_error(run_cli("probe", "spectral", "--model", bad, "--data", mini_val))
    assert str(bad) in msg and "nn.Module" in msg
    msg = _one_line_error(
        run_cli("probe", "spectral", "--model", tmp_path / "absent.pt", "--data", mini_val)
    )
    assert "absent.pt" in msg and "not found" in msg


@pytest.mark.integration
def test_spectral_probe_runs_on_a_torchscript_file(run_cli, mini_val, tmp_path, torch_threads):
    import torch

    class Brightness(torch.nn.Module):
        """Class 0 for dark images, class 10 for bright ones (mean intensity vs 0.45)."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            m = x.mean(dim=(1, 2, 3))
            logits = torch.zeros(x.shape[0], 1000)
            logits[:, 0] = 0.45 - m
            logits[:, 10] = m - 0.45
            return logits

    path = tmp_path / "brightness.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.jit.script(Brightness()).save(str(path))
    out = tmp_path / "counts.csv"
    proc = run_cli(
        "probe",
        "spectral",
        "--model",
        path,
        "--allow-torchscript",
        "--data",
        mini_val,
        "--device",
        "cpu",
        "--batch-size",
        "50",
        "--json",
        "--out",
        out,
        env={"OMP_NUM_THREADS": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["measurement"] == "spectral" and res["version"] == "1" and res["mini"] is True
    conds = {c["condition"]: c for c in res["conditions"]}
    assert len(conds) == 23 and all(c["n"] == 100 for c in conds.values())
    # mini labels are 0, 10, 20, ...: only the images of classes 0 and 10 can be right
    assert 0 < conds["clean"]["k"] <= 2
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["condition"] for r in rows] == list(conds)
    assert all(int(r["k"]) == conds[r["condition"]]["k"] for r in rows)

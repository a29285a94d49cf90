"""The tests of tests/unit/test_imagenetx.py that start a process (`python -m repro` or another),
in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from repro.base.errors import DataError
from repro.base.stats import Count
from repro.scoring import imagenet_x as ix
from repro.scoring.accuracy import val_file_names
from repro.scoring.predictions import from_frame, read_predictions
from repro.studies.imagenetx.published import read_factor_table
from tests.unit.test_imagenetx import CLI_FACTORS

pytestmark = pytest.mark.cli


BASE_MODELS = ("ResNet50", "DINO", "SimCLR", "ViT")


@pytest.fixture(scope="module")
def base_predictions(data_dir):
    return {
        m: read_predictions(data_dir / "imagenetx" / "model_predictions" / f"{m}.csv")
        for m in BASE_MODELS
    }


def _assert_row(ours: dict, published: pd.Series, where: str) -> None:
    for key, value in ours.items():
        ref = float(published[key])
        if np.isnan(ref):
            assert np.isnan(value), f"{where} {key}"
        else:
            assert value == pytest.approx(ref, abs=1e-9), f"{where} {key}"


@pytest.mark.parametrize("correctness", ix.CORRECTNESS)
def test_base_models_reproduce_the_published_tables(data_dir, base_predictions, correctness):
    table = read_factor_table("base", correctness, data_dir=data_dir)
    by_meta = read_factor_table("base", correctness, by_metaclass=True, data_dir=data_dir)
    for model, preds in base_predictions.items():
        ours = ix.factor_accuracies(preds, correctness=correctness)
        row = ours.as_row()
        assert set(row) == set(table.columns)
        _assert_row(row, table.loc[model], f"{model}/{correctness}")
        per_meta = ix.factor_accuracies_by_metaclass(preds, correctness=correctness)
        assert list(per_meta) == list(by_meta.loc[model].index)
        for meta, result in per_meta.items():
            _assert_row(
                result.as_row(), by_meta.loc[(model, meta)], f"{model}/{correctness}/{meta}"
            )


def test_error_ratio_definition_and_interval(base_predictions):
    r = ix.factor_accuracies(base_predictions["ResNet50"])
    assert r.overall == Count(34_430, 46_110)
    assert r.factors["texture"] == Count(111, 282)
    assert r.error_ratio("texture") == pytest.approx(
        (1 - 111 / 282) / (1 - 34_430 / 46_110), rel=1e-12
    )
    lo, hi = r.error_ratio_interval("texture")
    assert lo < r.error_ratio("texture") < hi
    assert r.error_ratio("pose") < 1 < r.error_ratio("smaller")


def test_incomplete_predictions_are_an_error_unless_allowed(base_predictions):
    p = base_predictions["ResNet50"]
    part = from_frame(p.to_frame().iloc[:10_000], source="part.csv")
    with pytest.raises(
        DataError,
        match=r"part\.csv: no prediction for [\d,]+ of the 46,110 ImageNet-X annotated images",
    ):
        ix.factor_accuracies(part)
    r = ix.factor_accuracies(part, require_complete=False)
    assert 8_000 < r.overall.n < 10_000


@pytest.mark.filterwarnings(
    "ignore:Constructing a DataFrame from a list of sequences"
)  # inside imagenet_x
@pytest.mark.parametrize("which", ix.WHICH)
def test_oracle_agrees_with_the_imagenet_x_package(tmp_path, base_predictions, which):
    """Same input through imagenet_x.augment_model_predictions + compute_factor_accuracies."""
    pytest.importorskip("imagenet_x")
    from imagenet_x import (
        FACTORS,
        augment_model_predictions,
        compute_factor_accuracies,
        load_annotations,
    )

    rng = np.random.default_rng(7)
    full = base_predictions["SimCLR"].to_frame()
    keep = np.sort(rng.choice(50_000, 20_000, replace=False))
    noisy = full.iloc[keep].copy()  # a partial, perturbed model: tests the join and real labels
    flip = rng.random(len(noisy)) < 0.3
    noisy.loc[flip, "predicted_class"] = rng.integers(0, 1000, int(flip.sum()))
    models = {"SimCLR": full, "noisy": noisy.reset_index(drop=True)}
    ann = load_annotations(which_factor=which)
    aug = augment_model_predictions(ann, {k: v.copy() for k, v in models.items()})
    for correctness, column in (
        ("class", "is_correct"),
        ("metaclass", "is_metaclass_correct"),
        ("real_class", "is_correct_real"),
    ):
        ref = compute_factor_accuracies(aug, FACTORS, column)
        for name, frame in models.items():
            ours = ix.factor_accuracies(
                from_frame(frame, source=name),
                which=which,
                correctness=correctness,
                require_complete=(name != "noisy"),
                worst_k_classes=(),
            )
            _assert_row(ours.as_row(), ref.loc[name], f"{name}/{which}/{correctness}")


def test_cli_benchmark_json_on_real_predictions(run_cli, data_dir):
    path = data_dir / "imagenetx" / "model_predictions" / "ResNet50.csv"
    for bench, k, n in (
        ("imagenet", 38_065, 50_000),
        ("real", 38_855, 46_837),
        ("real_last_batch", 283, 326),
    ):
        proc = run_cli("score", "benchmark", "--predictions", path, "--benchmark", bench, "--json")
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert (out["k"], out["n"]) == (k, n) and out["accuracy"] == pytest.approx(k / n, abs=1e-15)
        assert out["interval"][0] < out["accuracy"] < out["interval"][1]


def test_cli_imagenet_x_json(run_cli, data_dir, base_predictions):
    path = data_dir / "imagenetx" / "model_predictions" / "ViT.csv"
    proc = run_cli("score", "imagenet-x", "--predictions", path, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    published = read_factor_table("base", "class", data_dir=data_dir).loc["ViT"]
    assert out["overall_accuracy"] == pytest.approx(published["average"], abs=1e-12)
    assert list(out["factors"]) == CLI_FACTORS
    for f, v in out["factors"].items():
        assert set(v) >= {"accuracy", "error_ratio", "n"}
        assert v["accuracy"] == pytest.approx(published[f], abs=1e-12)
        assert v["error_ratio"] == pytest.approx(
            (1 - published[f]) / (1 - published["average"]), rel=1e-9
        )


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda f: f.drop(columns="predicted_class"), r"missing column\(s\) predicted_class"),
        (
            lambda f: f.assign(file_name=f.file_name.where(f.index != 2, "cat.jpg")),
            r"row 3 \(line 4\): unknown file_name 'cat.jpg'",
        ),
        (
            lambda f: f.assign(predicted_class=f.predicted_class.where(f.index != 4, 1000)),
            r"row 5 \(line 6\): predicted_class = 1000 out of range",
        ),
        (
            lambda f: f.assign(file_name=f.file_name.where(f.index != 5, f.file_name[0])),
            r"row 6 \(line 7\): duplicate file_name",
        ),
    ],
)
def test_cli_bad_input_names_the_file_and_row(run_cli, tmp_path, edit, message):
    _bad_input(run_cli, tmp_path, edit, message, "benchmark")


def test_cli_imagenet_x_bad_input(run_cli, tmp_path):
    _bad_input(
        run_cli,
        tmp_path,
        lambda f: f.assign(file_name=f.file_name.where(f.index != 2, "cat.jpg")),
        r"row 3 \(line 4\): unknown file_name 'cat.jpg'",
        "imagenet-x",
    )


def _bad_input(run_cli, tmp_path, edit, message, command):
    frame = pd.DataFrame(
        {
            "file_name": list(val_file_names()[:8]),
            "predicted_class": np.arange(8),
            "predicted_probability": 0.5,
        }
    )
    path = tmp_path / "bad.csv"
    edit(frame).to_csv(path, index=False)
    extra = ["--benchmark", "imagenet"] if command == "benchmark" else []
    proc = run_cli("score", command, "--predictions", path, *extra, "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}")
    import re

    assert re.search(message, lines[0]), lines[0]

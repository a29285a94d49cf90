"""The tests of tests/unit/test_predictions.py that read the published data directory, in the data
tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones stay there."""

from __future__ import annotations

import pytest

from repro.scoring.predictions import (
    read_predictions,
)

pytestmark = pytest.mark.data


BASE_MODELS = ("ResNet50", "DINO", "SimCLR", "ViT")


@pytest.mark.parametrize("model", BASE_MODELS)
def test_imagenetx_base_prediction_files_load(data_dir, model):
    p = read_predictions(data_dir / "imagenetx" / "model_predictions" / f"{model}.csv")
    assert len(p) == 50_000
    assert p.top5 is None and p.label is None
    assert p.predicted_class.min() >= 0 and p.predicted_class.max() <= 999
    assert len(set(p.file_name.tolist())) == 50_000

"""Fixtures shared by the data tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def resnet50(data_dir):
    """torchvision ResNet-50 V1's predictions on the 50,000 ImageNet validation images
    (published by ImageNet-X; read once per session)."""
    from repro.scoring.predictions import read_predictions

    return read_predictions(data_dir / "imagenetx" / "model_predictions" / "ResNet50.csv")

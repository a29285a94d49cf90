"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def resnet50(data_dir):
    """torchvision ResNet-50 V1's predictions on the 50,000 ImageNet validation images
    (published by ImageNet-X; read once per session)."""
    from repro.scoring.predictions import read_predictions

    return read_predictions(data_dir / "imagenetx" / "model_predictions" / "ResNet50.csv")


@pytest.fixture
def local_http(monkeypatch):
    """A local HTTP server (``tests/local_http.py``); requests to it bypass any configured proxy."""
    from tests.local_http import LocalServer

    for var in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(var, "127.0.0.1,localhost")
    server = LocalServer()
    yield server
    server.close()

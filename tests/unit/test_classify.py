"""Classification benchmark: per-image prediction records and top-1/top-5 counts, checked
against an independent float64 NumPy computation of the same linear model."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.unit

torch = pytest.importorskip("torch")
nn = torch.nn

from repro.base.errors import ConfigError  # noqa: E402
from repro.base.stats import Count  # noqa: E402
from repro.benchmarks import classify  # noqa: E402
from repro.datasets.base import ArraySource  # noqa: E402
from repro.measurements.loop import run  # noqa: E402
from repro.scoring import accuracy, predictions  # noqa: E402

SHAPE = (3, 6, 6)
N = 90


class Linear1000(nn.Module):
    """logits = W (x - 0.5) + b over the flattened image: 1000 classes, like an ImageNet model."""

    def __init__(self, w: np.ndarray, b: np.ndarray):
        super().__init__()
        self.lin = nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            self.lin.weight.copy_(torch.from_numpy(w).float())
            self.lin.bias.copy_(torch.from_numpy(b).float())

    def forward(self, x):
        return self.lin(x.flatten(1) - 0.5)


@pytest.fixture(scope="module")
def setup():
    """Model, images, and the float64 reference logits computed in NumPy from the float32
    weights the model actually holds."""
    rng = np.random.default_rng(9)  # a seed whose top-6 logits are >= 1e-4 apart (asserted below)
    d = int(np.prod(SHAPE))
    w = rng.normal(0, 1.0, (1000, d))
    b = rng.normal(0, 0.5, 1000)
    model = Linear1000(w, b)
    images = rng.integers(0, 256, (N, *SHAPE), dtype=np.uint8)
    w32 = model.lin.weight.detach().double().numpy()
    b32 = model.lin.bias.detach().double().numpy()
    logits = (images.reshape(N, -1) / 255.0 - 0.5) @ w32.T + b32
    return model, images, logits


def _labels_by_rank(logits: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    order = np.argsort(-logits, axis=1)
    return order[np.arange(len(logits)), ranks]


def _ranks(n: int) -> np.ndarray:
    """Rank of the true label among the logits: 0 (top-1 hit), 2 or 4 (top-5 only), 5 or
    500 (miss), cycling, so the expected counts are known by construction."""
    return np.array([0, 2, 4, 5, 500])[np.arange(n) % 5]


def test_counts_and_records_match_independent_reference(setup, torch_threads):
    model, images, logits = setup
    order = np.argsort(-logits, axis=1)
    gaps = -np.diff(np.take_along_axis(logits, order[:, :6], axis=1), axis=1)
    assert gaps.min() > 1e-4  # no near-ties among the top 6, so float32 cannot reorder them
    ranks = _ranks(N)
    labels = _labels_by_rank(logits, ranks)
    names = [f"ILSVRC2012_val_{i:08d}.JPEG" for i in range(N)]
    res = run("imagenet", model, ArraySource("lin", images, labels, names), batch_size=32)

    expected_top1 = int((ranks == 0).sum())
    expected_top5 = int((ranks < 5).sum())
    assert (expected_top1, expected_top5) == (18, 54)
    assert [(c.condition, c.k, c.n) for c in res.conditions] == [("top1", 18, N), ("top5", 54, N)]
    assert res.value == pytest.approx(18 / N)
    assert res.measurement == "imagenet" and res.version == classify.VERSION

    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert [list(r) for r in res.records] == [list(classify.RECORD_COLUMNS)] * N
    assert [r["file_name"] for r in res.records] == names
    assert [r["predicted_class"] for r in res.records] == order[:, 0].tolist()
    assert [[r[c] for c in predictions.TOP5_COLUMNS] for r in res.records] == order[:, :5].tolist()
    assert [r["label"] for r in res.records] == labels.tolist()
    got_p = np.array([r["predicted_probability"] for r in res.records])
    np.testing.assert_allclose(got_p, p[np.arange(N), order[:, 0]], rtol=1e-5)

    # the records are a valid predictions table for the scoring stage, and score the same
    preds = predictions.from_records(res.records)
    assert accuracy.top1(preds.predicted_class, preds.label) == Count(18, N)
    assert accuracy.top5(preds.top5, preds.label) == Count(54, N)


def test_batch_size_does_not_change_predictions(setup, torch_threads):
    model, images, logits = setup
    labels = _labels_by_rank(logits, _ranks(N))
    src = ArraySource("lin", images, labels, [f"i{i}" for i in range(N)])
    a = run("imagenet", model, src, batch_size=N)
    b = run("imagenet", model, src, batch_size=7)
    assert [r["predicted_class"] for r in a.records] == [r["predicted_class"] for r in b.records]
    assert [r["top5_class_5"] for r in a.records] == [r["top5_class_5"] for r in b.records]
    assert a.conditions == b.conditions


def test_class_subset_takes_argmax_over_the_subset_only(setup, torch_threads):
    model, images, logits = setup
    rng = np.random.default_rng(3)
    subset = np.sort(rng.choice(1000, 200, replace=False))
    sub_logits = logits[:, subset]
    sub_order = np.argsort(-sub_logits, axis=1)
    pred_1000 = subset[sub_order[:, 0]]
    sub_sorted = np.take_along_axis(sub_logits, sub_order[:, :8], axis=1)
    assert (-np.diff(sub_sorted, axis=1)).min() > 1e-4  # no near-ties float32 could reorder
    # the subset decision really differs from the full argmax for most images
    assert (pred_1000 != logits.argmax(1)).sum() > N // 2
    # labels: subset rank 0 for even items, subset rank 7 for odd ones (a miss)
    ranks = np.where(np.arange(N) % 2 == 0, 0, 7)
    labels = subset[sub_order[np.arange(N), ranks]]
    res = run(
        "imagenet",
        model,
        ArraySource("sub", images, labels, [f"a{i}" for i in range(N)]),
        batch_size=25,
        class_subset=subset.tolist(),
    )
    assert [r["predicted_class"] for r in res.records] == pred_1000.tolist()
    assert [[r[c] for c in predictions.TOP5_COLUMNS] for r in res.records] == subset[
        sub_order[:, :5]
    ].tolist()
    assert [(c.condition, c.k, c.n) for c in res.conditions] == [("top1", 45, N), ("top5", 45, N)]
    # predicted_probability is the full 1000-way softmax probability of the chosen class
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(
        [r["predicted_probability"] for r in res.records], p[np.arange(N), pred_1000], rtol=1e-5
    )
    # same records as the scoring stage's own constructor from probabilities (format oracle)
    ref = predictions.predictions_from_probabilities(
        [r["file_name"] for r in res.records], p, labels, class_subset=subset[::-1].tolist()
    )
    assert ref.predicted_class.tolist() == pred_1000.tolist()
    assert ref.top5.tolist() == predictions.from_records(res.records).top5.tolist()
    # the subset order given by the caller does not matter
    shuffled = run(
        "imagenet",
        model,
        ArraySource("sub", images, labels, [f"a{i}" for i in range(N)]),
        batch_size=90,
        class_subset=subset[::-1].tolist(),
    )
    assert shuffled.records == res.records


def test_exact_ties_go_to_the_lower_class_index(torch_threads):
    class Tied(nn.Module):
        def forward(self, x):  # classes 7 and 3 tie for the top, 9 and 1 for third place
            logits = torch.zeros(len(x), 1000)
            logits[:, [7, 3]] = 2.0
            logits[:, [9, 1]] = 1.0
            logits[:, 500] = 0.5
            return logits

    images = np.zeros((3, 3, 4, 4), np.uint8)
    res = run("imagenet", Tied(), ArraySource("t", images, [3, 7, 500], ["a", "b", "c"]))
    assert [[r[c] for c in predictions.TOP5_COLUMNS] for r in res.records] == [
        [3, 7, 1, 9, 500]
    ] * 3
    assert [(c.k, c.n) for c in res.conditions] == [(1, 3), (3, 3)]
    sub = run(
        "imagenet",
        Tied(),
        ArraySource("t", images, [3, 7, 500], ["a", "b", "c"]),
        class_subset=[500, 9, 7, 0, 2, 4],
    )
    assert [r["predicted_class"] for r in sub.records] == [7, 7, 7]
    assert [[r[c] for c in predictions.TOP5_COLUMNS] for r in sub.records][0] == [7, 9, 500, 0, 2]


def test_unlabelled_items_are_recorded_but_not_counted(setup, torch_threads):
    model, images, logits = setup
    labels = logits.argmax(1).copy()
    labels[::3] = -1
    seen: list[int] = []
    res = run(
        "imagenet",
        model,
        ArraySource("u", images, labels, [f"u{i}" for i in range(N)]),
        batch_size=40,
        progress=seen.append,
    )
    assert seen == [40, 80, 90]
    assert len(res.records) == N
    assert [(c.k, c.n) for c in res.conditions] == [(60, 60), (60, 60)]
    assert res.records[0]["label"] == -1
    # a source without any label: no label column, and the records are a valid predictions table
    none = run("imagenet", model, ArraySource("u", images, [-1] * N, [f"u{i}" for i in range(N)]))
    assert [(c.k, c.n) for c in none.conditions] == [(0, 0), (0, 0)] and none.value is None
    assert "label" not in none.records[0]
    assert predictions.from_records(none.records).label is None


def test_model_state_restored_and_unknown_parameters_refused(setup, torch_threads):
    """The probe loop runs the model in eval mode with frozen parameters and restores both; a
    keyword argument none of the measurement's pieces takes is refused (``amp``: precision is the
    model's, e.g. the throughput harness's bfloat16 wrapper)."""
    model, images, logits = setup
    model.train()
    labels = logits.argmax(1)
    src = ArraySource("m", images, labels, [f"m{i}" for i in range(N)])
    res = run("imagenet", model, src)
    assert model.training and all(p.requires_grad for p in model.parameters())
    assert res.conditions[0].k == N
    with pytest.raises(ConfigError, match="imagenet: unknown parameter"):
        run("imagenet", model, src, amp=True)


def test_bad_class_subset(setup, torch_threads):
    model, images, _ = setup
    src = ArraySource("b", images[:4], [0, 1, 2, 3], list("abcd"))
    with pytest.raises(ConfigError, match="class_subset: index 1000 out of range"):
        run("imagenet", model, src, class_subset=[1, 1000])
    with pytest.raises(ConfigError, match="class_subset: index 5 appears more than once"):
        run("imagenet", model, src, class_subset=[5, 6, 5])
    with pytest.raises(ConfigError, match="batch_size"):
        run("imagenet", model, src, batch_size=0)

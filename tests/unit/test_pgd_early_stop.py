"""PGD's early-stop rule (issue 38) against the study's final-point rule, on tiny constructed models
on the CPU: equal counts where no image recovers, the exact deviation where a constructed model
flips back, the first misclassified iterate of every image against the full attack run to that
iterate, and the passes each rule takes."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytestmark = pytest.mark.unit

torch = pytest.importorskip("torch")
nn = torch.nn

from repro.base.errors import ConfigError  # noqa: E402
from repro.benchmarks import pgd  # noqa: E402
from repro.datasets.base import ArraySource  # noqa: E402
from repro.measurements import registry as ms  # noqa: E402
from repro.measurements.loop import run  # noqa: E402
from tests.unit.test_pgd import BinaryLinear, cnn_source, small_cnn  # noqa: E402

EPS = pgd.EPS_LOW
PERIOD = 4 / 255  # the landscape repeats every 4 grey levels


class FlipBack(nn.Module):
    """Two classes; logits (0, z) with z = A cos(2 pi (t - d) / P) + B of the image's mean
    pixel t (P = 4/255, d = 0.4/255, B = -0.9 A). On a uniform image of grey level v = 4j/255
    (label 0): z < 0 at v (correct), z > 0 at v + eps (misclassified), z < 0 at v - eps, and
    the loss's gradient points up below the peak v + d and down above it. Every pixel moves
    by a step of 2/255 > 2 eps, so each iterate after the start is a corner of the eps ball:
    iterate 1 at v + eps (misclassified), then v - eps (correct), v + eps, ... alternating; the
    last of an even number of steps is correct again: the image RECOVERS. At v + 2/255 the
    landscape is shifted by half a period: z < 0 on the whole ball, never misclassified."""

    def __init__(self, a: float = 10.0):
        super().__init__()
        self.a = a
        self.dummy = nn.Parameter(torch.zeros(()))  # the probe loop freezes parameters

    def forward(self, x):
        t = x.flatten(1).mean(dim=1)
        z = self.a * torch.cos(2 * math.pi * (t - 0.4 / 255) / PERIOD) - 0.9 * self.a
        return torch.stack([torch.zeros_like(z), z], dim=1) + 0 * self.dummy


def flip_back_source(recovering: int, never: int) -> ArraySource:
    """``recovering`` uniform images at grey levels 4j (they recover), ``never`` at 4j + 2
    (never misclassified), interleaved, all labelled 0, 8 x 8 px."""
    levels = [4 * (5 + i) for i in range(recovering)] + [4 * (5 + i) + 2 for i in range(never)]
    order = np.argsort([(i % max(recovering, 1), i) for i in range(len(levels))], axis=0)[:, 0]
    levels = [levels[i] for i in order]
    images = np.stack([np.full((3, 8, 8), v, dtype=np.uint8) for v in levels])
    return ArraySource(
        "flip-back", images, np.zeros(len(levels), np.int64), [f"g{v:03d}" for v in levels]
    )


def _robust(result) -> tuple[int, int]:
    c = next(c for c in result.conditions if c.condition == "robust")
    return c.k, c.n


def test_the_constructed_model_flips_back_as_designed(torch_threads):
    """Its trace, iterate by iterate: correct at the start, misclassified at every odd iterate,
    correct at every even one, so correct at the final point of 40 steps."""
    source = flip_back_source(recovering=3, never=2)
    x0 = torch.from_numpy(source.images).float() / 255
    labels = torch.zeros(len(source), dtype=torch.int64)
    noise = pgd.random_start_noise(source.names, x0.shape[1:], seed=0, eps=EPS)
    tr = pgd.trace(FlipBack(), x0, labels, noise, pgd.Budget(EPS, 40))
    recovering = np.array([int(n[1:]) % 4 == 0 for n in source.names])
    expected = np.zeros((len(source), 41), bool)
    expected[recovering, 1::2] = True  # odd iterates misclassified, for the recovering images
    np.testing.assert_array_equal(tr.success, expected)
    assert tr.first_success.tolist() == [1 if r else -1 for r in recovering]
    np.testing.assert_array_equal(tr.recovered, recovering)
    assert not tr.final_success.any()
    # an odd number of steps ends on a misclassified corner: no recovery
    odd = pgd.trace(FlipBack(), x0, labels, noise, pgd.Budget(EPS, 39))
    np.testing.assert_array_equal(odd.final_success, recovering)
    assert not odd.recovered.any()


@pytest.mark.parametrize("batch_size", [2, 5, 16])
def test_flip_back_deviation_count_is_exact(batch_size, torch_threads):
    """Full rule: all 7 images robust. Early stop: the 4 recovering images are successes, first
    misclassified at iterate 1; the deviation (early - final successes) is exactly 4."""
    source = flip_back_source(recovering=4, never=3)
    full = run("pgd_low", FlipBack(), source, batch_size=batch_size)
    early = run("pgd_low_early_stop", FlipBack(), source, batch_size=batch_size)
    assert _robust(full) == (7, 7)
    assert _robust(early) == (3, 7)
    assert [r["success"] for r in full.records] == [False] * 7
    by_name = {r["file_name"]: r for r in early.records}
    for name, r in by_name.items():
        recovers = int(name[1:]) % 4 == 0
        assert r["success"] is recovers and r["pgd_rule"] == "early_stop"
        assert r["first_success_step"] == (1 if recovers else None)
        assert r["adversarial_class"] == (1 if recovers else 0)
    x0 = torch.from_numpy(source.images).float() / 255
    noise = pgd.random_start_noise(source.names, x0.shape[1:], seed=0, eps=EPS)
    dev = pgd.deviation(
        pgd.trace(FlipBack(), x0, torch.zeros(7, dtype=torch.int64), noise, pgd.Budget(EPS, 40))
    )
    assert (dev.final_successes, dev.early_successes, dev.recovered) == (0, 4, 4)
    assert dev.first_success == {-1: 3, 1: 4}
    assert early.values["first_success/1"] == 4 and early.values["stopped"] == 4


def test_passes_per_rule_are_counted_as_run(torch_threads):
    """Passes per image. Study's rule: steps + 2 forward, steps backward, whatever happens. Early
    stop: a recovering image takes the clean pass, the forward passes of iterates 0 and 1, its
    judgment pass (4 forward) and one backward step, plus the backward of step 2 when another
    image of its batch goes on (autograd differentiates the whole batch); an image never
    misclassified takes all 42 and 40."""
    source = flip_back_source(recovering=4, never=3)
    mixed = run("pgd_low_early_stop", FlipBack(), source, batch_size=7)
    for r in mixed.records:
        recovers = int(r["file_name"][1:]) % 4 == 0
        assert (r["forward"], r["backward"]) == ((4, 2) if recovers else (42, 40))
    assert mixed.values["forward"] == 4 * 4 + 3 * 42 and mixed.values["backward"] == 4 * 2 + 3 * 40
    assert (mixed.values["forward_full"], mixed.values["backward_full"]) == (7 * 42, 7 * 40)
    assert mixed.values["pass_ratio"] == pytest.approx((16 + 126 + 8 + 120) / (7 * 82))
    assert mixed.values["backward_ratio"] == pytest.approx(128 / 280)
    # a batch of recovering images alone: nobody goes on after iterate 1, no second backward
    alone = run("pgd_low_early_stop", FlipBack(), flip_back_source(4, 0), batch_size=4)
    assert [(r["forward"], r["backward"]) for r in alone.records] == [(4, 1)] * 4
    # the model of the plan (pgd.early_stop_passes) is the batched case, the worst one
    assert pgd.early_stop_passes(1, 40) == (4, 2) and pgd.early_stop_passes(-1, 40) == (42, 40)
    assert pgd.early_stop_passes(0, 40) == (3, 1) and pgd.early_stop_passes(39, 40) == (42, 40)
    assert pgd.early_stop_passes(40, 40) == (42, 40)


def test_counts_equal_the_full_attack_where_no_image_recovers(torch_threads):
    """A CNN and a linear model on which no image recovers (checked on the trace): the early-stop
    counts and decisions equal the full attack's, image by image."""
    cnn = small_cnn(seed=3)
    w = np.random.default_rng(1).normal(0, 0.5, 3 * 8 * 8)
    linear = BinaryLinear(w, -float(w.sum()) * 0.5)
    rng = np.random.default_rng(2)
    images = rng.integers(12, 244, (48, 3, 8, 8), dtype=np.uint8)
    lin_labels = rng.integers(0, 2, 48)
    cases = [
        (cnn, cnn_source(cnn, 40, seed=5), 12),
        (linear, ArraySource("lin", images, lin_labels, [f"p{i}" for i in range(48)]), 40),
    ]
    for model, source, steps in cases:
        x0 = torch.from_numpy(source.images).float() / 255
        noise = pgd.random_start_noise(source.names, x0.shape[1:], seed=0, eps=EPS)
        y = torch.from_numpy(np.asarray(source.labels))
        tr = pgd.trace(model, x0, y, noise, pgd.Budget(EPS, steps))
        assert not tr.recovered.any()
        assert 0 < tr.final_success.sum() < len(source)  # mixed outcomes
        full = run("pgd_low", model, source, batch_size=16, steps=steps)
        early = run("pgd_low_early_stop", model, source, batch_size=16, steps=steps)
        assert full.conditions == early.conditions
        assert [r["success"] for r in full.records] == [r["success"] for r in early.records]
        np.testing.assert_array_equal([r["success"] for r in full.records], tr.final_success)


def test_first_success_step_is_where_the_full_attack_first_succeeds(torch_threads):
    """For every image and iterate k, the trace's judgment of iterate k equals the study's rule
    with k steps (the same iterate, judged at its clipped point by a pass of its own); the
    variant records the first such k, and stops there. A step of eps / 4 (the study's is 4 eps)
    reaches the ball's corners only after 4 steps, so first successes spread over the iterates;
    a quarter of the labels are clean errors (misclassified from the start)."""
    model = small_cnn(seed=7)
    source = cnn_source(model, 32, seed=11)
    steps, eps, step = 8, 1 / 255, 0.25 / 255
    kw = {"eps": eps, "step_size": step}
    x0 = torch.from_numpy(source.images).float() / 255
    y = torch.from_numpy(source.labels)
    noise = pgd.random_start_noise(source.names, x0.shape[1:], seed=0, eps=eps)
    tr = pgd.trace(model, x0, y, noise, pgd.Budget(steps=steps, **kw))
    by_k = np.stack(
        [
            pgd.attack(model, x0, y, noise, pgd.Budget(steps=k, **kw)).success.numpy()
            for k in range(steps + 1)
        ],
        axis=1,
    )
    np.testing.assert_array_equal(tr.success, by_k)
    independent = [int(np.argmax(row)) if row.any() else None for row in by_k]
    assert len({f for f in independent if f is not None}) >= 4  # a distribution, not one value
    assert None in independent  # and images never misclassified
    early = run("pgd_low_early_stop", model, source, batch_size=10, steps=steps, **kw)
    assert [r["first_success_step"] for r in early.records] == independent
    firsts = [f for f in independent if f is not None]
    assert {k: early.values[f"first_success/{k}"] for k in set(firsts)} == {
        k: firsts.count(k) for k in set(firsts)
    }
    assert tr.first_success.tolist() == [-1 if f is None else f for f in independent]
    stop = pgd.early_stop(model, x0, y, noise, pgd.Budget(steps=steps, **kw))
    for i, f in enumerate(independent):  # stopped at its first success: its point is that iterate
        if f is not None and f < steps:
            assert int(stop.first_success[i]) == f
            one = (x0[i : i + 1], y[i : i + 1], noise[i : i + 1])
            x_f = pgd.perturb(model, *one, pgd.Budget(steps=f, **kw))
            assert torch.equal(stop.x_adv[i : i + 1], x_f)


def test_the_variant_is_named_never_the_default():
    pgd_low, variant = ms.get("pgd_low"), ms.get("pgd_low_early_stop")
    assert variant.opt_in and not pgd_low.opt_in and variant.variant_of == "pgd_low"
    assert not set(variant.columns) & set(pgd_low.columns)  # its own column
    assert "pgd_low_early_stop" not in ms.measurements_for_columns(["top1_acc/PGD-40/low"])
    assert ms.with_pgd_rule(["imagenet", "pgd_low"], "early_stop") == [
        "imagenet",
        "pgd_low_early_stop",
    ]
    assert ms.with_pgd_rule(["pgd_low_early_stop"], "final_point") == ["pgd_low"]
    with pytest.raises(ConfigError, match="no PGD measurement among imagenet"):
        ms.with_pgd_rule(["imagenet"], "early_stop")
    # the messages name what was given and what is expected, whole
    with pytest.raises(ConfigError) as bad:
        ms.with_pgd_rule(["imagenet", "shape_bias"], "early_stop")
    assert str(bad.value) == (
        "--pgd-early-stop: no PGD measurement among imagenet, shape_bias (expected pgd_low, e.g. "
        "--measurements pgd_low)"
    )
    with pytest.raises(ConfigError) as bad:
        ms.with_pgd_rule([], "early_stop")
    assert "among none (expected" in str(bad.value)
    with pytest.raises(ConfigError) as bad:
        ms.with_pgd_rule(["pgd_low"], "first_point")
    assert str(bad.value) == (
        "PGD rule: expected one of final_point, early_stop, got 'first_point'"
    )
    with pytest.raises(ConfigError, match="rule: expected one of final_point, early_stop"):
        pgd.maker(seed=0, rule="first_point")


def test_all_leaves_the_opt_in_variant_out(monkeypatch):
    from repro.runner import selection

    class _Runner:
        measurements: tuple[str, ...] = ()

    class _Settings:
        runner = _Runner()

    monkeypatch.setattr(selection, "current", lambda: _Settings())
    chosen = selection.configured_measurements(["all"])
    assert "pgd_low" in chosen and "pgd_low_early_stop" not in chosen
    assert selection.configured_measurements(["pgd_low_early_stop"]) == ["pgd_low_early_stop"]


def test_the_variant_column_is_labelled_and_standard_only():
    from repro.base.results import ConditionCount, ProbeResult
    from repro.measurements import columns as cols

    res = ProbeResult("pgd_low_early_stop", "1", 0, [ConditionCount("robust", 10, 40)])
    (col,) = cols.pgd_low_early_stop(res, cols.SummaryContext("imagenet_val", 40))
    assert col.column == "top1_acc/PGD-40-early-stop/low" and col.variant == "standard"
    assert (col.k, col.n) == (10, 40) and col.value == pytest.approx(25.0)
    assert "early_stop" in col.note


def test_the_measurement_script_counts_the_deviation_and_its_interval(torch_threads):
    """repro.planner.pgd_deviation.measure (docs/performance.md's numbers, nox -s bench) on the
    flip-back model: 4 of 7 recover (Clopper-Pearson interval), the early-stop attack agrees with
    the trace image by image, and the passes are the ones counted above."""
    from repro.base.stats import binomial_interval
    from repro.planner import pgd_deviation as pd

    source = flip_back_source(recovering=4, never=3)
    row = pd.measure("flip-back", FlipBack(), source.images, source.names, batch_size=7)
    assert (row.n, row.final_successes, row.early_successes, row.recovered) == (7, 0, 4, 4)
    assert row.recovered_interval() == binomial_interval(4, 7, method="clopper-pearson")
    assert row.recovered_interval()[0] < 4 / 7 < row.recovered_interval()[1]
    assert row.first_success == {-1: 3, 1: 4} and row.parity
    assert row.extra["outcome_mismatches"] == 0 and row.extra["first_success_mismatches"] == 0
    assert row.passes_full == (7 * 42, 7 * 40)
    assert row.passes_early == (4 * 4 + 3 * 42, 4 * 2 + 3 * 40) == row.passes_modelled
    assert row.pass_ratio == pytest.approx((16 + 126 + 8 + 120) / (7 * 82))
    assert "flip-back" in pd.format_rows([row])
    assert pd.seeded_subset(1100, 5, 0).tolist() == sorted(
        np.random.default_rng(0).choice(1100, 5, replace=False).tolist()
    )
    with pytest.raises(ValueError, match="0 < n <= 10"):
        pd.seeded_subset(10, 11, 0)


def test_a_journalled_run_resumes_where_it_was_killed(torch_threads, tmp_path):
    """python -m tests.real.pgd_deviation --journal: each batch is a JSON line written when it is
    done; a rerun measures only the batches the journal lacks and gives the uninterrupted run's
    counts; a line cut short by a kill is skipped, any other bad line is named."""
    from repro.planner import pgd_deviation as pd

    source = flip_back_source(recovering=4, never=3)
    whole = pd.measure("flip-back", FlipBack(), source.images, source.names, batch_size=3)
    journal = tmp_path / "journal.jsonl"
    loads: list[int] = []

    def load():
        loads.append(1)
        return FlipBack()

    # a run killed after its first batch: the journal holds one line and half of the next
    first = pd.measure_batch(
        pd.prepare(FlipBack(), source.images), source.images[:3], source.names[:3]
    )
    pd.append_journal(journal, "flip-back", pd.SEED, pd.STEPS, first)
    with journal.open("a") as f:
        f.write('{"schema": "pgd-deviation-batch-1", "model": "flip-')
    logged: list[str] = []
    resumed = pd.measure_journalled(
        "flip-back", load, source.images, source.names, journal, batch_size=3, log=logged.append
    )
    assert loads == [1] and len(logged) == 2  # batches 2 and 3 measured, batch 1 read
    for field in ("n", "final_successes", "early_successes", "recovered", "first_success"):
        assert getattr(resumed, field) == getattr(whole, field)
    assert (resumed.passes_full, resumed.passes_early) == (whole.passes_full, whole.passes_early)
    assert resumed.parity and resumed.recovered == 4
    held = pd.read_journal(journal)
    assert len(held) == 3 and sum(len(b.names) for b in held.values()) == 7
    # everything journalled: nothing is loaded or measured again
    again = pd.measure_journalled(
        "flip-back", load, source.images, source.names, journal, batch_size=3
    )
    assert loads == [1] and again.first_success == whole.first_success
    # another model or seed does not reuse the batches
    other = pd.measure_journalled(
        "flip-back", load, source.images, source.names, journal, batch_size=3, seed=pd.SEED + 1
    )
    assert loads == [1, 1] and other.n == 7
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    with pytest.raises(pd.JournalError, match=r"journal.jsonl:2: not a batch record"):
        pd.read_journal(journal)


def environment():
    """The runner's environment of the test below: the fakes' models and sources, the real
    measurement registry (so pgd_low and its variant run)."""
    from repro.runner.jobs import Environment
    from tests.fakes import make_model, make_source

    return Environment(load_model=make_model, open_source=make_source, measurement=ms.get)


def test_measure_pgd_early_stop_stores_the_variant_in_its_own_column(tmp_path, torch_threads):
    """measure --pgd-early-stop (MeasureRequest.pgd_rule): pgd_low_early_stop runs in pgd_low's
    place; its stored record says the rule per image and fills only its own column."""
    import gzip

    from repro.runner.dispatch import MeasureRequest, measure
    from repro.store.files import Store

    lines: list[str] = []
    req = MeasureRequest(
        models=["m1"],
        measurements=["pgd_low"],
        store=tmp_path,
        env="tests.unit.test_pgd_early_stop:environment",
        progress=False,
        pgd_rule="early_stop",
    )
    assert measure(req, log=lines.append, warn=lines.append) == 0
    store = Store(tmp_path)
    assert store.read("m1", "pgd_low") is None
    rec = store.read("m1", "pgd_low_early_stop")
    assert rec is not None and rec.ok
    assert [c.column for c in rec.columns] == ["top1_acc/PGD-40-early-stop/low"]
    assert rec.values["forward_full"] == 24 * 42 and rec.values["pass_ratio"] <= 1
    text = gzip.decompress(store.records_path("m1", "pgd_low_early_stop").read_bytes()).decode()
    header, *rows = text.splitlines()
    assert header.split(",")[-4:] == ["pgd_rule", "first_success_step", "forward", "backward"]
    assert len(rows) == 24 and all(",early_stop," in r for r in rows)

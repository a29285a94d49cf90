"""A shape bias that rests on decisions at chance is flagged wherever it is placed: a one-sided
exact binomial test of the shape-or-texture decisions (S + T of the 1,200 cue-conflict trials)
against the 2/16 a uniform guess over the 16 categories makes (repro.analysis.chance); the rank
says so in the text, the JSON and the report's table. And the rank's N is the same in the text
("9 of 49") and in ``place --json`` (``of``: the population's values and this one)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest

from repro.analysis.chance import CHANCE_SHAPE_OR_TEXTURE, shape_or_texture
from repro.base.study import get_study
from repro.placement import output
from repro.placement.place import place
from repro.placement.values import model_values
from repro.store.files import Store
from tests.small_store import shape_record

pytestmark = pytest.mark.claims

PROV = {
    "dataset_fingerprint": "f",
    "dataset_items": 1280,
    "dataset_mini": False,
    "dataset_partial": False,
}


def _greater_p(k: int, n: int, p0: float) -> float:
    """P(X >= k), X ~ Binomial(n, p0), summed exactly in rationals (independent of scipy)."""
    q = Fraction(p0)
    return float(sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(k, n + 1)))


def test_the_exact_binomial_test_against_two_of_sixteen():
    assert CHANCE_SHAPE_OR_TEXTURE == 2 / 16
    at = shape_or_texture(73, 75, 1200)  # a random-weights CNN's counts (tiny_random_a)
    assert (at.k, at.n) == (148, 1200) and at.p == pytest.approx(_greater_p(148, 1200, 1 / 8))
    assert at.at_chance and 0.5 < at.p < 0.65
    # 175 of 1,200 (14.6%): above chance at 5% (p about 0.01); 165 (13.75%) is not (p about 0.1)
    assert not shape_or_texture(90, 85, 1200).at_chance
    assert shape_or_texture(85, 80, 1200).at_chance
    assert shape_or_texture(90, 85, 1200).p == pytest.approx(_greater_p(175, 1200, 1 / 8))


@pytest.fixture
def placed(tmp_path, data_dir):
    """Two models placed in the study: one whose decisions are at chance (75 + 75 of 1,200, a
    shape bias of 0.5 that ranks high), one far above it (400 + 400)."""
    store = Store(tmp_path / "store")
    store.write(shape_record("random_r50", 75, 75, **PROV))
    store.write(shape_record("trained_r50", 400, 400, **PROV))
    study = get_study("gavrikov2024")
    return {
        m: place(study, model_values(m, store.root), data_dir, claims=False)
        for m in ("random_r50", "trained_r50")
    }


def test_a_placement_at_chance_is_flagged_and_its_rank_says_so(placed):
    p = placed["random_r50"]
    (x,) = p.placed
    assert x.value.value == 0.5 and x.at_chance and x.chance.k == 150
    text = output.text(p)
    row = next(line for line in text.splitlines() if line.startswith("shape-bias  0.500"))
    assert re.search(r"\b\d+ of 49 \(AT CHANCE\)", row), row
    assert (
        "  shape-bias: AT CHANCE: 150 shape-or-texture decisions of 1,200 trials (12.5%; a uniform "
        "guess over the 16 categories makes 12.5%; one-sided exact binomial p = "
    ) in text
    doc = output.as_json(p)["placed"][0]
    assert doc["rank"]["at_chance"] is True and doc["chance"]["at_chance"] is True
    assert doc["chance"]["p"] == pytest.approx(_greater_p(150, 1200, 1 / 8))
    assert (doc["chance"]["k"], doc["chance"]["n"]) == (150, 1200)


def test_a_placement_above_chance_says_so_without_the_flag(placed):
    p = placed["trained_r50"]
    (x,) = p.placed
    assert x.chance is not None and not x.at_chance and x.chance.p < 1e-100
    text = output.text(p)
    assert "AT CHANCE" not in text
    assert "  shape-bias: above chance: 800 shape-or-texture decisions of 1,200 trials" in text
    assert output.as_json(p)["placed"][0]["rank"]["at_chance"] is False


@pytest.mark.parametrize("model", ["random_r50", "trained_r50"])
def test_the_rank_says_the_same_n_in_text_and_json(placed, model):
    p = placed[model]
    (x,) = p.placed
    rank = output.as_json(p)["placed"][0]["rank"]
    shown = re.search(r"(\d+) of (\d+)", output.rank_cells(x.rank)[0])
    assert (int(shown[1]), int(shown[2])) == (rank["rank"], rank["of"])
    # the N is the population's defined values and this one: 48 published values + the model
    defined = sum(v is not None for v in x.population.values.values())
    assert rank["of"] == defined + 1 == 49 and rank["population"] == defined == 48

"""The JSON documents of ``place --json``, ``compare --json`` and ``claims --json`` against their
declared schemas (``repro.base.output_schemas``, published as ``repro/schemas/*.json``): real
output validates and carries its ``schema_version``; a malformed document is rejected with one
line naming the field; the published schema files are the models' export. (``claims --json``
is checked where the claim tier computes it once: tests/claims/test_cli_claims.py.)"""

from __future__ import annotations

import copy
import json

import pytest

from repro.base.errors import ConfigError
from repro.base.output_schemas import MODELS, VERSIONS, check, json_schema, schema_file
from tests.small_store import SHAPE, TEXTURE, write_small_store

pytestmark = pytest.mark.cli


@pytest.fixture(scope="module")
def documents(tmp_path_factory, run_cli, data_dir):
    folder = tmp_path_factory.mktemp("json-outputs")
    store = write_small_store(folder / "store")
    place = run_cli(
        "place", "--model", "tv_resnet50", "--store", store, "--json", folder / "place.json"
    )
    assert place.returncode == 0, place.stdout + place.stderr
    compare = run_cli("compare", "--store", store, "--json", folder / "compare.json")
    assert compare.returncode == 0, compare.stdout + compare.stderr
    return {n: json.loads((folder / f"{n}.json").read_text()) for n in ("place", "compare")}


def test_place_json_follows_its_schema(documents):
    docs = check("place", documents["place"], "place.json").root
    assert [d.schema_version for d in docs] == [VERSIONS["place"]] * len(docs)
    gavrikov = {d.study: d for d in docs}["gavrikov2024"]
    (row,) = gavrikov.placed
    assert (row.column, row.k, row.n) == ("shape-bias", SHAPE, SHAPE + TEXTURE)
    assert row.value == pytest.approx(SHAPE / (SHAPE + TEXTURE))
    assert row.rank is not None and row.rank.of == 48 and row.rank.population == 47


def test_compare_json_follows_its_schema(documents):
    doc = check("compare", documents["compare"], "compare.json")
    assert doc.schema_version == VERSIONS["compare"]
    agreement = {(a.model, a.column): a for a in doc.agreement}
    assert agreement["tv_resnet50", "top1_acc/imagenet"].status == "agrees"
    assert [(d.model, d.column) for d in doc.differs] == [("tv_resnet50", "shape-bias")]
    assert sum(doc.agreement_counts.values()) == len(doc.agreement)


def _edit(doc, path, value=KeyError):
    doc = copy.deepcopy(doc)
    *head, last = path
    target = doc
    for key in head:
        target = target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return doc


@pytest.mark.parametrize(
    ("name", "path", "value", "says"),
    [
        ("place", (0, "schema_version"), KeyError, "field [0].schema_version: Field required"),
        ("place", (0, "schema_version"), 2, "field [0].schema_version: Input should be 1"),
        (
            "place",
            (0, "placed", 0, "rank", "of"),
            "48",
            "field [0].placed[0].rank.of: Input should be a valid integer",
        ),
        ("place", (0, "ranked"), 48, "field [0].ranked: Extra inputs are not permitted"),
        ("compare", ("rows", 0, "status"), None, "field .rows[0].status: Input should be a valid"),
        ("compare", ("differs",), {}, "field .differs: Input should be a valid array"),
    ],
)
def test_a_malformed_document_is_rejected_naming_the_field(documents, name, path, value, says):
    bad = _edit(documents[name], path, value)
    with pytest.raises(ConfigError) as err:
        check(name, bad, "out.json")
    message = str(err.value)
    assert message.startswith(f"out.json: {says}"), message
    assert f"({name} --json schema_version {VERSIONS[name]}" in message and "\n" not in message


def test_place_json_that_is_not_a_list_is_rejected(documents):
    with pytest.raises(ConfigError, match=r"out.json: field \(document\): Input should be a valid"):
        check("place", documents["place"][0], "out.json")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_published_schema_files_are_the_models_export(name):
    path = schema_file(name)
    assert json.loads(path.read_text()) == json_schema(name), (
        f"{path} is stale: python -c 'from repro.base.output_schemas import write_schemas; "
        "write_schemas()'"
    )

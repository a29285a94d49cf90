"""Property tests of the file parsers (issue 11, item 8): a valid sample of each kind of file,
mutated byte by byte (flips, insertions, deletions, truncation, NUL bytes, non-UTF-8 bytes) or
replaced by random bytes, either parses or raises a ``ReproError`` whose message names the file;
never another exception (which the CLI would show as a traceback).

Parsers covered: CSV (a published per-model table as benchmark.csv is read, a decisions CSV, a
predictions CSV, a store's per-item records), TOML (repro.toml, study.toml, a claims file, an
analysis definition), JSON (a store job record, a throughput file). ``derandomize=True``: the
same examples on every run (CI), ``MAX_EXAMPLES`` per parser keeps each test to a few seconds.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repro.base.errors import ReproError
from tests.unit import corpus, malformed

pytestmark = pytest.mark.unit

MAX_EXAMPLES = 80
SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@st.composite
def mutated(draw: st.DrawFn, sample: bytes) -> bytes:
    """``sample`` with 1-4 random edits, or (one time in eight) random bytes."""
    if draw(st.integers(0, 7)) == 0:
        return draw(st.binary(max_size=300))
    data = bytearray(sample)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "byte"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            data[pos:pos] = draw(
                st.sampled_from(
                    [
                        b"\x00",
                        b"\xff",
                        b"\xe9",
                        b",",
                        b'"',
                        b"\n",
                        b"[",
                        b"]",
                        b"=",
                        b"{",
                        b"}",
                        b"-1",
                        b"nan",
                        b"1e999",
                        b"\r",
                    ]
                )
            )
        elif op == "delete" and data:
            del data[pos : pos + draw(st.integers(1, 8))]
        elif op == "truncate":
            del data[pos:]
        elif op == "byte" and data:
            data[pos] = draw(st.integers(0, 255))
    return bytes(data)


def check(parse: Callable[[Path], object], path: Path, data: bytes) -> None:
    """``parse(path)`` after writing ``data``: a result, or a ReproError naming the file."""
    path.write_bytes(data)
    try:
        parse(path)
    except ReproError as exc:
        assert str(path.name) in str(exc), f"the error does not name the file: {exc}"
    # any other exception fails the test with its traceback (hypothesis shows the bytes)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("parsers")


# --------------------------------------------------------------------------- CSV
TABLE = b"model,imagenet,shape_bias\nresnet50,76.1,22.1\nvit_b16,81.0,\nalexnet,56.5,29.0\n"


@SETTINGS
@given(data=mutated(TABLE))
def test_published_table_csv(folder, data):
    from repro.published.table import read_table_csv

    check(lambda p: read_table_csv(p, required=("imagenet",)), folder / "benchmark.csv", data)


def _decisions_bytes() -> bytes:
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=malformed.DECISION_COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(malformed.decisions_rows(6))
    return buf.getvalue().encode()


@SETTINGS
@given(data=mutated(_decisions_bytes()))
def test_decisions_csv(folder, data):
    from repro.scoring.shape_bias import read_decisions_csv

    check(lambda p: read_decisions_csv(p, data_dir=folder), folder / "decisions.csv", data)


@SETTINGS
@given(data=mutated(corpus.predictions_sample(None)))  # type: ignore[arg-type]
def test_predictions_csv(folder, data):
    from repro.scoring.predictions import read_predictions

    check(read_predictions, folder / "predictions.csv", data)


def _items_blob() -> bytes:
    from repro.store.files import records_to_csv_gz

    return gzip.decompress(
        records_to_csv_gz([{"item": f"img{i}.png", "correct": i % 2} for i in range(6)])
    )


@SETTINGS
@given(data=mutated(_items_blob()), compressed=st.booleans())
def test_store_per_item_records(folder, data, compressed):
    """A per-item records file of a job record with no checksum (an old record): its bytes are
    whatever is on disk, gzipped or not."""
    from repro.store.files import JobRecord, Store

    store = Store(folder / "store")
    (folder / "store" / "m1").mkdir(parents=True, exist_ok=True)
    record = JobRecord.from_dict(
        {**malformed.store_record("m1", "fake_a"), "records_file": "fake_a.csv.gz"}
    )
    path = folder / "store" / "m1" / "fake_a.csv.gz"
    check(lambda p: store.read_items(record), path, gzip.compress(data) if compressed else data)


# --------------------------------------------------------------------------- TOML
@SETTINGS
@given(data=mutated(corpus.CONFIG_SAMPLE.encode() + b'\n[datasets]\nimagenet_val = "/x"\n'))
def test_repro_toml(folder, data):
    from repro.base.settings import read_settings

    check(read_settings, folder / "repro.toml", data)


@SETTINGS
@given(data=mutated(corpus.STUDY_SAMPLE.encode()))
def test_study_toml(folder, data):
    from repro.base.study import read_study

    study = folder / "studies" / "mystudy"
    study.mkdir(parents=True, exist_ok=True)
    (study / "claims.toml").write_text(corpus.CLAIM)
    check(lambda p: read_study(p.parent), study / "study.toml", data)


@SETTINGS
@given(data=mutated(corpus.CLAIM.encode()))
def test_claims_toml(folder, data):
    from repro.claims.loader import read_claim_file

    check(read_claim_file, folder / "claims.toml", data)


@SETTINGS
@given(data=mutated(corpus.ANALYSIS_SAMPLE.encode() + b"alpha = 0.05\n[bootstrap]\nseed = 3\n"))
def test_analysis_toml(folder, data):
    from repro.analysis.spec import load_spec

    check(load_spec, folder / "variant.toml", data)


# --------------------------------------------------------------------------- JSON
@SETTINGS
@given(data=mutated(json.dumps(malformed.store_record("m1", "fake_a")).encode()))
def test_store_record_json(folder, data):
    from repro.store.files import Store

    store = Store(folder / "records")
    path = folder / "records" / "m1" / "fake_a.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    check(lambda p: store.read("m1", "fake_a"), path, data)


@SETTINGS
@given(data=mutated(corpus.throughput_sample(None)))  # type: ignore[arg-type]
def test_throughput_json(folder, data):
    from repro.planner.cost import measured_rates

    check(lambda p: measured_rates(p, "float32"), folder / "throughput.json", data)


def test_the_mutations_reach_every_outcome(folder):
    """The strategy is not toothless: among the derandomized examples of the decisions CSV some
    parse and some are refused (a mutation that never broke a file would test nothing)."""
    from hypothesis import find

    from repro.scoring.shape_bias import read_decisions_csv

    path = folder / "outcome.csv"

    def refused(data: bytes) -> bool:
        path.write_bytes(data)
        try:
            read_decisions_csv(path, data_dir=folder)
        except ReproError:
            return True
        return False

    settings_ = settings(max_examples=200, derandomize=True, database=None)
    find(mutated(_decisions_bytes()), refused, settings=settings_)
    find(mutated(_decisions_bytes()), lambda d: not refused(d), settings=settings_)
    assert os.path.exists(path)

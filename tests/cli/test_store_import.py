"""The tests of tests/unit/test_store_import.py that start a process (`python -m repro` or
another), in the cli tier (tests/tier_guard.py keeps them out of the unit tier); the pure ones
stay there."""

from __future__ import annotations

import pytest

from repro.base.errors import DataError
from repro.store.importer import import_tidy
from tests.unit.test_store_import import _edit, _good, _known, _tidy

pytestmark = pytest.mark.cli


def _first(rows, kind, measurement="imagenet") -> int:
    return next(
        i for i, r in enumerate(rows) if r["kind"] == kind and r["measurement"] == measurement
    )


def _duplicate(rows):
    i = _first(rows, "column")
    return [*rows, dict(rows[i])], len(rows) + 2


def _no_counts(rows):
    kept = [
        {**x, "k": None, "n": None}
        for x in rows
        if x["kind"] == "column" and x["measurement"] == "shape_bias"
    ]
    return kept, 2


REFUSALS = [
    ("no mini/partial provenance", lambda r: _edit(r, 0, dataset_mini=None), "no dataset_mini"),
    (
        "unknown model",
        lambda r: _edit(r, 0, model="resnet_from_nowhere"),
        "unknown model 'resnet_from_nowhere'",
    ),
    (
        "unknown measurement",
        lambda r: _edit(r, 0, measurement="imagenet_z"),
        "unknown measurement 'imagenet_z'",
    ),
    (
        "unknown column",
        lambda r: _edit(r, _first(r, "column"), condition="top1_acc/imagenet-z"),
        "unknown column 'top1_acc/imagenet-z'",
    ),
    ("k > n", lambda r: _edit(r, _first(r, "condition"), k=50001), "k = 50001 > n = 50000"),
    ("negative count", lambda r: _edit(r, _first(r, "column"), k=-3), "k = -3 is negative"),
    ("NaN count", lambda r: _edit(r, _first(r, "column"), n="nan"), "n is nan"),
    ("NaN value", lambda r: _edit(r, _first(r, "column"), value="nan"), "value is nan"),
    (
        "value not k/n",
        lambda r: _edit(r, _first(r, "column"), value=77.0),
        "value 77.0 disagrees with k/n = ",
    ),
    ("duplicate", _duplicate, "duplicate of row"),
    (
        "job split in two",
        lambda r: _edit(r, _first(r, "column"), device="cuda"),
        "disagrees with row ",
    ),
    ("no counts", _no_counts, "values without counts are not imports"),
]


@pytest.mark.parametrize(("case", "mutate", "message"), REFUSALS, ids=[c for c, _, _ in REFUSALS])
def test_a_bad_row_refuses_the_file_naming_the_row_and_writes_nothing(
    case, mutate, message, tmp_path, run_cli
):
    rows, line = mutate(_good(tmp_path))
    path = _tidy(tmp_path, rows)
    target = tmp_path / "target"
    with pytest.raises(DataError, match=rf"in\.csv: row {line} \(") as err:
        import_tidy(path, target, **_known())
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not target.exists()
    if case in (
        "unknown model",
        "k > n",
        "duplicate",
    ):  # and so on the command line: one line, exit 2
        res = run_cli("store", "import", path, "--store", target)
        assert res.returncode == 2 and res.stderr.count("\n") == 1 and message in res.stderr, (
            res.stderr
        )
        assert res.stderr.startswith("error: ") and not target.exists()

"""``compare --independent`` pairs a stored measurement with a source's per-image predictions of the
same model on the same images (repro.diagnostics.independent_paired): the 2x2 table, Newcombe's
paired interval, the exact McNemar test and the agreement label, on ImageNet-X's real predictions of
torchvision's ResNet-50 V1 (the study's tv_resnet50) with known flips; a lab's own per-image file
added by a declaration; and what is not paired named with why."""

from __future__ import annotations

import json

import numpy as np
import pytest

from repro.claims.verdict import AGREES, DIFFERS, INCONCLUSIVE

pytestmark = pytest.mark.cli

PREDICTIONS = "imagenetx/model_predictions/ResNet50.csv"


def _items(data_dir, *, to_wrong=0, to_right=0, among=None):
    """ImageNet-X's ResNet-50 predictions as store records, with ``to_wrong`` of its correct images
    (of ``among``: 0-based val numbers, else all) made wrong and ``to_right`` wrong ones right."""
    from repro.scoring import accuracy
    from repro.scoring.predictions import read_predictions
    from repro.scoring.real import real_label_matrix

    p = read_predictions(data_dir / PREDICTIONS)
    idx, truth = accuracy.imagenet_val(p)
    pred = p.predicted_class.copy()
    real = real_label_matrix()[idx]
    scope = np.ones(len(idx), dtype=bool) if among is None else np.isin(idx, among)
    hit = (real == pred[:, None]).any(axis=1) if among is not None else pred == truth
    right = np.flatnonzero(scope & hit & (real[:, 0] >= 0 if among is not None else True))
    wrong = np.flatnonzero(scope & ~hit & (real[:, 0] >= 0 if among is not None else True))
    for i in right[:to_wrong]:  # a class that is neither the label nor a ReaL label
        pred[i] = next(c for c in range(1000) if c != truth[i] and c not in real[i])
    for i in wrong[:to_right]:
        pred[i] = real[i, 0] if among is not None else truth[i]
    return [
        {"file_name": f, "predicted_class": int(c), "predicted_probability": float(q)}
        for f, c, q in zip(p.file_name, pred, p.predicted_probability, strict=True)
    ]


def _write(store_dir, measurement, items, *, version=None, model="tv_resnet50"):
    from repro.measurements.registry import current_versions
    from repro.scoring.accuracy import imagenet_val
    from repro.scoring.predictions import from_records
    from repro.scoring.real import real_count, real_last_batch_count
    from repro.store.files import Store
    from repro.store.record import ColumnValue, JobRecord

    preds = from_records(items)
    if measurement == "imagenet":
        _, truth = imagenet_val(preds)
        k = int(np.count_nonzero(preds.predicted_class == truth))
        columns = [ColumnValue.from_count("top1_acc/imagenet", k, len(items))]
    else:
        std, pub = real_count(preds), real_last_batch_count(preds)
        columns = [
            ColumnValue.from_count("top1_acc/imagenet-real", std.k, std.n),
            ColumnValue.from_count("top1_acc/imagenet-real", pub.k, pub.n, variant="published"),
        ]
    record = JobRecord(
        model,
        measurement,
        version or current_versions([measurement])[measurement],
        "ok",
        conditions=[{"condition": "all", "k": columns[0].k, "n": columns[0].n}],
        columns=columns,
        provenance={"seed": 0, "device": "cpu", "dataset": "imagenet_val"},
    )
    Store(store_dir).write(record, items)


def _paired(run_cli, data_dir, tmp_path, store, *extra, env=None):
    out = tmp_path / "out.json"
    res = run_cli(
        "compare", "--independent", "--data-dir", str(data_dir), "--store", str(store),
        "--json", str(out), *extra, env=env,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr[-2000:]
    (study,) = [s for s in json.loads(out.read_text())["studies"] if s["study"] == "gavrikov2024"]
    return res, study


def test_a_remeasurement_pairs_with_imagenet_x_image_by_image(run_cli, data_dir, tmp_path):
    store = tmp_path / "store"
    # ImageNet val: 40 of the source's correct images decided wrong, 10 wrong ones right
    _write(store, "imagenet", _items(data_dir, to_wrong=40, to_right=10))
    # the ReaL last batch: the same decisions as the source
    _write(store, "imagenet_real", _items(data_dir))
    res, study = _paired(run_cli, data_dir, tmp_path, store)
    rows = {r["column"]: r for r in study["paired"]}
    val = rows["top1_acc/imagenet"]
    assert (val["source"], val["source_model"], val["identity"]) == (
        "imagenetx",
        "base/ResNet50",
        "certain",
    )
    assert val["theirs"] == [38065, 50000] and val["ours"] == [38065 - 30, 50000]
    assert (val["ours_only"], val["theirs_only"]) == (10, 40) and val["unshared"] == [0, 0]
    assert val["both"] + val["ours_only"] + val["theirs_only"] + val["neither"] == 50000
    assert val["difference"] == pytest.approx(-0.06)  # 100 * (10 - 40) / 50,000
    from scipy.stats import binomtest

    assert val["p"] == pytest.approx(binomtest(10, 50, 0.5).pvalue)  # exact McNemar
    lo, hi = val["interval"]
    assert lo < -0.06 < hi and val["confidence"] == pytest.approx(0.9)
    # 30 images of 50,000 lie inside the 0.1-point margin, and the paired interval resolves it
    assert -0.1 < lo and hi < 0.1 and val["label"] == AGREES
    real = rows["top1_acc/imagenet-real"]
    assert real["benchmark"] == "real_last_batch" and real["ours"] == real["theirs"] == [283, 326]
    assert real["ours_only"] == real["theirs_only"] == 0 and real["difference"] == 0
    # identical decisions on 326 images: the interval cannot resolve the one-image margin (0.31)
    assert real["interval"][1] > real["margin"] == pytest.approx(0.31)
    assert real["label"] == INCONCLUSIVE and "reaches beyond" in real["why"]
    assert study["paired_notes"] == []
    assert "paired on the same images" in res.stdout and "283/326" in res.stdout
    # REPORT.md's "What other labs measured" shows the same pairs
    from types import SimpleNamespace

    from repro.base.study import get_study
    from repro.report.sections.independent import paired_lines

    text = "\n".join(
        paired_lines(SimpleNamespace(store=store), get_study("gavrikov2024"), data_dir)
    )
    assert (
        "| tv_resnet50 | imagenetx | top1_acc/imagenet | 38035/50000 | 38065/50000 | 10 / 40 |"
        in text
    )
    assert (
        "| top1_acc/imagenet-real | 283/326 | 283/326 | 0 / 0 |" in text
        and "| inconclusive |" in text
    )
    text = "\n".join(
        paired_lines(SimpleNamespace(store=tmp_path / "none"), get_study("gavrikov2024"), data_dir)
    )
    assert text.endswith("the store is empty.")
    (line,) = paired_lines(SimpleNamespace(store=None), get_study("gavrikov2024"), data_dir)
    assert line.endswith("no store was given.")


def test_a_source_file_is_read_once_for_all_its_benchmarks(data_dir, tmp_path, monkeypatch):
    """ImageNet-X's ResNet-50 file gives two paired columns (ImageNet val, the ReaL last batch):
    the 50,000-row file is parsed once for both."""
    from repro.base.study import get_study
    from repro.diagnostics.independent_paired import paired_rows
    from repro.measurements.registry import current_versions

    store = tmp_path / "store"
    _write(store, "imagenet", _items(data_dir))
    _write(store, "imagenet_real", _items(data_dir))
    calls = _count_parses(monkeypatch)
    rows, notes = paired_rows(
        get_study("gavrikov2024"), store, versions=current_versions(), data_dir=data_dir
    )
    assert {r.column for r in rows} == {"top1_acc/imagenet", "top1_acc/imagenet-real"}
    assert [p.name for p in calls] == ["ResNet50.csv"] and notes == []


def _count_parses(monkeypatch) -> list:
    """The paths ``read_predictions`` parses from now on, its cache emptied first."""
    from repro.scoring import predictions

    monkeypatch.setattr(predictions, "_CACHE", type(predictions._CACHE)())
    parse = predictions._parse
    calls: list = []
    monkeypatch.setattr(
        predictions, "_parse", lambda data, path, *a: calls.append(path) or parse(data, path, *a)
    )
    return calls


def test_the_independent_rows_read_each_predictions_file_once(data_dir, monkeypatch):
    """ImageNet-X's per-image files give a top-1 and a ReaL column each: one read per file."""
    from repro.base.study import get_study
    from repro.diagnostics.independent import independent_rows

    calls = _count_parses(monkeypatch)
    rows, _, _ = independent_rows(get_study("gavrikov2024"), data_dir)
    scored = {r.source_model for r in rows if r.source == "imagenetx"}
    assert len(calls) == len(set(calls)) == len(scored) > 0
    assert sum(r.source == "imagenetx" for r in rows) == 2 * len(scored)  # two columns a file


def test_compare_independent_with_a_store_parses_the_predictions_file_once(
    data_dir, tmp_path, monkeypatch, capsys
):
    """The independent rows and their pairing read ImageNet-X's ResNet-50 file in one command
    (run in this process): one parse serves both (read_predictions' cache, not a dict in each
    caller)."""
    from repro.cli import main

    store = tmp_path / "store"
    _write(store, "imagenet", _items(data_dir))
    calls = _count_parses(monkeypatch)
    out = tmp_path / "out.json"
    argv = ["compare", "--independent", "--data-dir", str(data_dir), "--store", str(store)]
    assert main([*argv, "--study", "gavrikov2024", "--json", str(out)]) == 0
    assert [p.name for p in calls] == ["ResNet50.csv"]
    (study,) = json.loads(out.read_text())["studies"]
    assert [r["column"] for r in study["paired"]] == ["top1_acc/imagenet"]
    assert "paired on the same images" in capsys.readouterr().out


def test_a_remeasurement_far_from_the_source_differs(run_cli, data_dir, tmp_path):
    store = tmp_path / "store"
    _write(store, "imagenet", _items(data_dir, to_wrong=150))  # 0.3 points below
    _, study = _paired(run_cli, data_dir, tmp_path, store)
    (val,) = study["paired"]
    assert (val["ours_only"], val["theirs_only"]) == (0, 150)
    assert val["difference"] == pytest.approx(-0.3) and val["label"] == DIFFERS
    assert val["p_holm"] < 1e-40 and "outside +-0.1" in val["why"]
    # the column it cannot pair is named with why
    assert study["paired_notes"] == [
        "tv_resnet50 x top1_acc/imagenet-real (imagenetx: base/ResNet50): no stored "
        "imagenet_real record"
    ]
    # a store whose records pair with nothing: REPORT.md names what the sources cover
    from types import SimpleNamespace

    from repro.base.study import get_study
    from repro.report.sections.independent import paired_lines

    (line,) = paired_lines(SimpleNamespace(store=tmp_path), get_study("gavrikov2024"), data_dir)
    assert line.endswith(
        "none in this store; the sources cover tv_resnet50 (top1_acc/imagenet, "
        "top1_acc/imagenet-real)."
    )


def test_what_is_not_paired_says_why(run_cli, data_dir, tmp_path):
    store = tmp_path / "store"
    _write(store, "imagenet", _items(data_dir), version="0+1")  # another measurement version
    _, study = _paired(run_cli, data_dir, tmp_path, store)
    assert study["paired"] == []
    (stale,) = [n for n in study["paired_notes"] if "top1_acc/imagenet " in n]
    assert "stored with version 0+1" in stale and "not compared" in stale
    # --models leaves the other models' notes out too
    _, study = _paired(run_cli, data_dir, tmp_path, store, "--models", "tv2_resnet50")
    assert study["paired"] == [] and study["paired_notes"] == []


def test_a_labs_own_per_image_file_pairs_with_the_store(run_cli, data_dir, tmp_path):
    """A lab declares its per-image predictions (kind = "predictions", a file beside the
    declaration): no code; its rows show beside ImageNet-X's."""
    import csv

    lab = tmp_path / "lab"
    lab.mkdir()
    items = _items(data_dir, to_wrong=3, among=_last_batch())
    with (lab / "preds.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(items[0]))
        w.writeheader()
        w.writerows(items)
    (lab / "mylab.toml").write_text(
        "\n".join(
            [
                'name = "mylab"',
                'title = "My lab\'s ResNet-50 predictions"',
                'citation = "Doe et al. 2031"',
                'study = "gavrikov2024"',
                "[[files]]",
                'name = "preds"',
                'file = "preds.csv"',
                'license = "CC BY 4.0"',
                'kind = "predictions"',
                'model = "my_r50"',
                "[protocol]",
                'classes = "1000"',
                "[[identity]]",
                'study_model = "tv_resnet50"',
                'source_model = "my_r50"',
                'level = "certain"',
                'evidence = "the torchvision enum, loaded by our script"',
                "[[columns]]",
                'column = "top1_acc/imagenet-real"',
                'value = "real_last_batch"',
                'unit = "percent"',
            ]
        )
        + "\n"
    )
    store = tmp_path / "store"
    _write(store, "imagenet_real", _items(data_dir))
    _, study = _paired(run_cli, data_dir, tmp_path, store, env={"REPRO_INDEPENDENT_PATH": str(lab)})
    rows = {r["source"]: r for r in study["paired"]}
    assert set(rows) == {"imagenetx", "mylab"}
    mine = rows["mylab"]
    assert mine["theirs"] == [280, 326] and mine["ours"] == [283, 326]
    assert (mine["ours_only"], mine["theirs_only"]) == (3, 0)
    assert mine["difference"] == pytest.approx(300 / 326)
    assert mine["label"] == INCONCLUSIVE  # 3 discordant images: McNemar p = 0.25
    assert mine["p"] == pytest.approx(0.25)
    # the lab's binomial row against the published 282/326 is there too
    (binomial,) = [
        r
        for r in study["rows"]
        if r["source"] == "mylab" and r["column"] == "top1_acc/imagenet-real"
    ]
    assert binomial["count"] == [280, 326]


def _last_batch():
    from repro.scoring.real import last_batch_images

    return last_batch_images()


def test_the_command_line_and_the_report_print_a_pairing_with_the_same_numbers(data_dir, tmp_path):
    """One format (``PairedRow.cells``) for both: the counts, the difference with its interval, and
    the Holm-adjusted p the label rests on (the command line shows the unadjusted p beside it)."""
    from types import SimpleNamespace

    from repro.base.study import get_study
    from repro.cli.compare_independent import _paired_lines
    from repro.diagnostics.independent_paired import paired_rows
    from repro.measurements.registry import current_versions
    from repro.report.sections.independent import paired_lines

    store = tmp_path / "store"
    _write(store, "imagenet", _items(data_dir, to_wrong=150))
    study = get_study("gavrikov2024")
    rows, notes = paired_rows(study, store, versions=current_versions(), data_dir=data_dir)
    (row,) = rows
    assert row.cells() == {
        "ours": "37915/50000",
        "theirs": "38065/50000",
        "difference": "-0.3",
        "interval": "[-0.341, -0.26]",
        "p": "1.4e-45",
        "p_holm": "1.4e-45",
    }
    text = _paired_lines(rows, notes, store)
    assert text[1].endswith("McNemar p  Holm p  label")
    assert text[2].split()[3:11] == [
        "37915/50000", "38065/50000", "0", "150", "-0.3", "[-0.341,", "-0.26]", "1.4e-45",
    ]  # fmt: skip
    assert text[2].split()[11:13] == ["1.4e-45", "differs:"]
    table = paired_lines(SimpleNamespace(store=store), study, data_dir)
    assert table[-1] == (
        "| tv_resnet50 | imagenetx | top1_acc/imagenet | 37915/50000 | 38065/50000 | 0 / 150 | "
        "-0.3 [-0.341, -0.26] | 1.4e-45 | differs |"
    )


def test_a_pairing_without_an_interval_or_p_prints_dashes():
    from dataclasses import replace

    from repro.diagnostics.independent_paired import PairedRow

    row = PairedRow(
        "m", "s", "sm", "certain", "c", "imagenet", "imagenet", (3, 4), (2, 4), 2, 1, 0, 1,
        25.0, (-12.5, 60.25), 0.9, 0.625, 1.0, 0.5, "inconclusive", "few images",
    )  # fmt: skip
    assert row.cells() == {
        "ours": "3/4",
        "theirs": "2/4",
        "difference": "+25",
        "interval": "[-12.5, +60.2]",
        "p": "0.62",
        "p_holm": "1",
    }
    bare = replace(row, interval=None, p=None, p_holm=None).cells()
    assert (bare["interval"], bare["p"], bare["p_holm"]) == ("-", "-", "-")

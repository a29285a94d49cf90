"""The negative-input corpus of issue 11 (item 8): for every command of ``python -m repro``,
each input it takes (a file, a folder, an environment variable, a value) and the malformed
values of that input's kind. ``tests/cli/test_cli_corpus.py`` runs every case and checks the
answer; this module only says what the cases are.

A case builds its input under a fresh temporary folder (``Where``) and returns the full
command line and the environment variables it sets. Kinds of input and their malformed values:

- every file input: missing, a number for the path, a folder, a device file, empty, truncated,
  latin-1, UTF-16 with BOM, binary garbage, one multi-MB line, a symlink loop, a name with a
  newline, a path that climbs out of the working directory (``../``);
- every folder input: missing, a number, a file, a symlink loop, and the kind's bad contents;
- the kinds' own hostile values (a pickle payload, a decompression-bomb PNG, a record with k > n
  or NaN, deeply nested JSON/TOML, unknown keys, wrong types, path traversal in names, ...).

``SLOTS`` lists, per command, where each of its inputs goes; ``EXEMPT`` the value-taking options
that are not inputs to corrupt (with the reason). The completeness test checks that every
option of every command is in one of them, so a new command or option fails until it is given
its inputs here.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.unit import malformed

MB = 1 << 20


@dataclass
class Where:
    """The folders of one case: everything it creates lies under ``root``; it runs in ``work``."""

    root: Path
    work: Path
    shared: dict[str, Path]  # inputs built once per session (mini datasets, a data copy); read only

    def file(self, name: str, data: bytes | str) -> Path:
        path = self.root / "in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return path

    def folder(self, name: str) -> Path:
        path = self.root / "in" / name
        path.mkdir(parents=True, exist_ok=True)
        return path


Value = Callable[[Where], str]  # builds the input, returns the argument (or variable) value


@dataclass(frozen=True)
class Bad:
    """One malformed value of a kind. ``expect``: ``error`` (exit 2, one ``error:`` line on
    stderr) or ``reported`` (the command's own report names the bad file and the fix, exit 1:
    a corrupt store record in a sweep or a comparison, a bad file found by a checking command)."""

    name: str
    value: Value
    expect: str = "error"
    needs: tuple[str, ...] = ()  # message fragments (beyond the hint) the answer must contain


@dataclass(frozen=True)
class Slot:
    """Where one input of a command goes: ``option`` (``--model``; ``""`` for the positional;
    ``$VAR`` for an environment variable), the kind of its malformed values, the rest of a valid
    command line (``{name}`` fields are filled from ``Where``), and the outputs it may write
    (paths relative to the working folder, or ``{root}/...``)."""

    command: tuple[str, ...]
    option: str
    kind: str
    base: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    skip: tuple[
        str, ...
    ] = ()  # malformed values of the kind that are valid for this input (why: in the comment)
    expect: dict[str, str] = field(default_factory=dict)  # per malformed value: another expectation


# --------------------------------------------------------------------------- generic bytes
def _garbage(n: int = 4096, seed: int = 0) -> bytes:
    import random

    return random.Random(seed).randbytes(n)


def _truncate(good: bytes) -> bytes:
    """Cut in the middle of the last non-empty line (never on a line boundary)."""
    body = good.rstrip(b"\n")
    last = body.rfind(b"\n")
    return body[: last + 1 + max(1, (len(body) - last - 1) // 2)]


def _latin1(good: bytes) -> bytes:
    """The sample with a non-ASCII character, encoded latin-1 (not UTF-8)."""
    text = good.decode()
    return text.replace("\n", " \u00e9\u00e8\n", 1).encode("latin-1")


def file_cases(sample: Callable[[Where], bytes], suffix: str) -> list[Bad]:
    """The malformed values of every file input, built from a valid ``sample`` of its kind."""

    def content(name: str, make: Callable[[bytes], bytes]) -> Bad:
        return Bad(name, lambda w: str(w.file(f"{name}{suffix}", make(sample(w)))))

    def loop(w: Where) -> str:
        path = w.root / "in" / f"loop{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(path.name)
        return str(path)

    def outside(
        w: Where,
    ) -> str:  # ../../in/x: a relative path that climbs out of the working folder
        w.file(f"outside{suffix}", _garbage(512, 1))
        return os.path.relpath(w.root / "in" / f"outside{suffix}", w.work)

    return [
        Bad("missing", lambda w: str(w.root / "in" / f"does-not-exist{suffix}")),
        Bad("number", lambda w: "42"),
        Bad("folder", lambda w: str(w.folder(f"a-folder{suffix}"))),
        Bad("device", lambda w: "/dev/null"),
        content("empty", lambda good: b""),
        content("truncated", _truncate),
        content("latin1", _latin1),
        content("utf16", lambda good: good.decode().encode("utf-16")),
        content("binary", lambda good: _garbage()),
        content("nul", lambda good: good[: len(good) // 3] + b"\x00" * 8 + good[len(good) // 3 :]),
        content("huge-line", lambda good: b"x" * (4 * MB)),
        Bad("symlink-loop", loop),
        Bad("newline-name", lambda w: str(w.file(f"bad\nname{suffix}", _garbage(256, 2)))),
        Bad("outside", outside),
    ]


def folder_cases() -> list[Bad]:
    """The malformed values of every folder input (its contents: the kind's own cases)."""

    def loop(w: Where) -> str:
        path = w.root / "in" / "loop-dir"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(path.name)
        return str(path)

    return [
        Bad("missing", lambda w: str(w.root / "in" / "no-such-folder")),
        Bad("number", lambda w: "42"),
        Bad("file", lambda w: str(w.file("a-file", b"not a folder\n"))),
        Bad("symlink-loop", loop),
    ]


def out_file_cases() -> list[Bad]:
    """An output file that cannot be written: a folder, a path under a regular
    file, a symlink loop."""

    def loop(w: Where) -> str:
        path = w.work / "loop.out"
        path.symlink_to(path.name)
        return str(path)

    def under_file(w: Where) -> str:
        (w.work / "plain").write_text("a file\n")
        return str(w.work / "plain" / "out.x")

    def folder(w: Where) -> str:
        (w.work / "out-folder").mkdir()
        return str(w.work / "out-folder")

    return [Bad("folder", folder), Bad("under-a-file", under_file), Bad("symlink-loop", loop)]


def out_dir_cases() -> list[Bad]:
    """An output folder that cannot be made: a file, a path under a file, a symlink loop."""

    def loop(w: Where) -> str:
        path = w.work / "loop.d"
        path.symlink_to(path.name)
        return str(path)

    def under_file(w: Where) -> str:
        (w.work / "plain").write_text("a file\n")
        return str(w.work / "plain" / "sub")

    def file(w: Where) -> str:
        (w.work / "a-file").write_text("a file\n")
        return str(w.work / "a-file")

    return [Bad("file", file), Bad("under-a-file", under_file), Bad("symlink-loop", loop)]


# --------------------------------------------------------------------- decisions / predictions CSV
def _csv_text(rows: list[list[str]]) -> bytes:
    return ("\n".join(",".join(r) for r in rows) + "\n").encode()


def decisions_sample(w: Where) -> bytes:
    path = malformed.write_decisions(w.root / "sample.csv", malformed.decisions_rows(8))
    data = path.read_bytes()
    path.unlink()
    return data


def _decisions_with(change: Callable[[list[dict[str, str]]], None]) -> Value:
    def make(w: Where) -> str:
        rows = malformed.decisions_rows(8)
        change(rows)
        return str(malformed.write_decisions(w.root / "in" / "d.csv", rows))

    return lambda w: (w.folder(""), make(w))[1]


def _set(i: int, key: str, value: str) -> Callable[[list[dict[str, str]]], None]:
    return lambda rows: rows[i].__setitem__(key, value)


def decisions_cases() -> list[Bad]:
    cols = ",".join(malformed.DECISION_COLUMNS)
    return file_cases(decisions_sample, ".csv") + [
        Bad(
            "wide",
            lambda w: str(w.file("wide.csv", ",".join(f"c{i}" for i in range(100_000)) + "\n1\n")),
        ),
        Bad(
            "huge-field",
            lambda w: str(
                w.file("field.csv", f"{cols}\nm,1,1,NaN,{'a' * 300_000},cat,NaN,cat1-dog1.png\n")
            ),
        ),
        Bad(
            "unterminated-quote",
            lambda w: str(w.file("quote.csv", f'{cols}\nm,1,1,NaN,"cat,cat,NaN,cat1-dog1.png\n')),
        ),
        Bad("header-only", lambda w: str(w.file("header.csv", cols + "\n"))),
        Bad(
            "duplicate-trial",
            lambda w: str(malformed.duplicate_trial_decisions(w.folder("") / "dup.csv")),
        ),
        Bad(
            "category-mismatch",
            lambda w: str(malformed.category_mismatch_decisions(w.folder("") / "cat.csv")),
        ),
        Bad("trial-nan", _decisions_with(_set(2, "trial", "nan"))),
        Bad("session-inf", _decisions_with(_set(2, "session", "inf"))),
        Bad("rt-text", _decisions_with(_set(2, "rt", "fast"))),
        Bad("traversal-image", _decisions_with(_set(2, "imagename", "../../../etc/passwd"))),
    ]


VAL = "ILSVRC2012_val_{:08d}.JPEG"


def predictions_sample(w: Where) -> bytes:
    rows = [["file_name", "predicted_class", "predicted_probability"]]
    rows += [[VAL.format(i + 1), str(i % 1000), "0.5"] for i in range(20)]
    return _csv_text(rows)


def _predictions_with(i: int, column: int, value: str) -> Value:
    def make(w: Where) -> str:
        rows = [r.split(",") for r in predictions_sample(w).decode().splitlines()]
        rows[i][column] = value
        return str(w.file("p.csv", _csv_text(rows)))

    return make


def predictions_cases() -> list[Bad]:
    return file_cases(predictions_sample, ".csv") + [
        Bad(
            "wide",
            lambda w: str(
                w.file(
                    "wide.csv",
                    ",".join(f"c{i}" for i in range(100_000))
                    + "\n"
                    + ",".join("1" * 100_000)
                    + "\n",
                )
            ),
        ),
        Bad(
            "header-only",
            lambda w: str(w.file("h.csv", "file_name,predicted_class,predicted_probability\n")),
        ),
        Bad("class-1000", _predictions_with(3, 1, "1000")),
        Bad("class-negative", _predictions_with(3, 1, "-1")),
        Bad("class-float", _predictions_with(3, 1, "3.5")),
        Bad("class-huge", _predictions_with(3, 1, "1" * 40)),
        Bad("probability-nan", _predictions_with(3, 2, "NaN")),
        Bad("probability-inf", _predictions_with(3, 2, "Infinity")),
        Bad("probability-2", _predictions_with(3, 2, "2")),
        Bad("duplicate-file", _predictions_with(3, 0, VAL.format(1))),
        Bad("traversal-file", _predictions_with(3, 0, "../../../etc/passwd")),
        Bad("unterminated-quote", _predictions_with(3, 0, '"' + VAL.format(4))),
        Bad("million-lines", lambda w: str(w.file("big.csv", _million_predictions()))),
    ]


def _million_predictions() -> bytes:
    """A 10**6-row predictions CSV (~40 MB): well formed, but the ImageNet validation set has
    50,000 images, so every name past those is unknown."""
    rows = "".join(f"ILSVRC2012_val_{i:08d}.JPEG,{i % 1000},0.5\n" for i in range(1, 1_000_001))
    return ("file_name,predicted_class,predicted_probability\n" + rows).encode()


# --------------------------------------------------------------------------- thresholds (a value)
def thresholds_cases() -> list[Bad]:
    def v(text: str) -> Value:
        return lambda w: text

    return [
        Bad("empty", v("")),
        Bad("letters", v("a,b,c,d,e,f,g")),
        Bad("too-few", v("0,0,0")),
        Bad("too-many", v("0,0,0,0,0,0,0,0")),
        Bad("above-4", v("5,5,5,5,5,5,5")),
        Bad("negative", v("-1,0,0,0,0,0,0")),
        Bad("nan", v("nan,0,0,0,0,0,0")),
        Bad("infinity", v("inf,0,0,0,0,0,0")),
        Bad("float", v("1.5,0,0,0,0,0,0")),
        Bad("huge-number", v("1" * 5000 + ",0,0,0,0,0,0")),
        Bad("huge", v("0," * (MB // 2))),
        Bad("semicolons", v("0;0;0;0;0;0;0")),
        Bad("newline", v("0,0,0\n,0,0,0,0")),
        Bad("unicode-digit", v("\u0663,0,0,0,0,0,0")),
        Bad("superscript", v("\u00b2,0,0,0,0,0,0")),
        Bad("a-path", v("../../../etc/passwd")),
    ]


# --------------------------------------------------------------------------- model files
def checkpoint_sample(w: Where) -> bytes:
    import io

    import torch

    buf = io.BytesIO()
    torch.save(malformed.tiny_state_dict(), buf)
    return buf.getvalue()


def checkpoint_cases() -> list[Bad]:
    def marker(w: Where) -> Path:
        return w.root / "CODE-RAN"

    return [
        c for c in file_cases(checkpoint_sample, ".pth") if c.name not in ("latin1", "utf16")
    ] + [
        Bad("text", lambda w: str(malformed.text_checkpoint(w.folder("") / "text.pth"))),
        Bad(
            "pickle-payload",
            lambda w: str(malformed.malicious_plain_pickle(w.folder("") / "evil.pkl", marker(w))),
        ),
        Bad(
            "torch-payload",
            lambda w: str(malformed.malicious_torch_save(w.folder("") / "evil.pth", marker(w))),
        ),
        Bad("torchscript", lambda w: str(malformed.torchscript_file(w.folder("") / "script.pt"))),
        Bad("int64-weights", lambda w: str(malformed.int64_weights(w.folder("") / "int.pth"))),
        Bad("json", lambda w: str(w.file("weights.json", '{"fc.weight": [[1, 2]]}'))),
        Bad("zip-bomb", lambda w: str(_zip_bomb(w.folder("") / "bomb.pth"))),
        Bad("unknown-name", lambda w: "resnet50_prim"),
        Bad("traversal-name", lambda w: "../../../etc/passwd"),
    ]


def _zip_bomb(path: Path) -> Path:
    """A zip (torch's checkpoint container) whose one member inflates to 1 GiB."""
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        with zf.open("archive/data.pkl", "w", force_zip64=True) as fh:
            chunk = b"\0" * MB
            for _ in range(1024):
                fh.write(chunk)
    return path


# --------------------------------------------------------------------------- image folders
def image_folder_cases(dataset: str) -> list[Bad]:
    """A copy of the session's mini ``dataset`` with one bad file, or a
    folder that is no dataset."""

    def copy(w: Where) -> Path:
        dest = w.root / "in" / dataset
        shutil.copytree(w.shared[dataset], dest, symlinks=True)
        return dest

    def one_image(dest: Path) -> Path:
        return sorted(
            p
            for p in dest.rglob("*")
            if p.is_file() and p.suffix.lower() in (".png", ".jpeg", ".jpg")
        )[1]

    def with_image(change: Callable[[Path], None]) -> Value:
        def make(w: Where) -> str:
            dest = copy(w)
            change(one_image(dest))
            return str(dest)

        return make

    def replace(data: bytes) -> Callable[[Path], None]:
        return lambda p: p.write_bytes(data)

    def extra(name: str, make_entry: Callable[[Path], None]) -> Value:
        def make(w: Where) -> str:
            dest = copy(w)
            make_entry(dest / name)
            return str(dest)

        return make

    def only(names: list[str]) -> Value:
        def make(w: Where) -> str:
            dest = w.folder("lookalike")
            for n in names:
                (dest / n).mkdir()
            return str(dest)

        return make

    return folder_cases() + [
        Bad("empty", lambda w: str(w.folder("empty"))),
        Bad("bomb-png", with_image(lambda p: malformed.decompression_bomb(p))),
        Bad("bomb-warning-png", with_image(lambda p: malformed.decompression_bomb_warning(p))),
        Bad("truncated-image", with_image(lambda p: p.write_bytes(p.read_bytes()[:200]))),
        Bad("text-image", with_image(replace(b"not an image\n"))),
        Bad("empty-image", with_image(replace(b""))),
        # (a PNG's chunk CRC is checked; a byte flipped inside a JPEG's entropy-coded
        # data still decodes: valid)
        *(
            [Bad("bad-crc-png", with_image(lambda p: p.write_bytes(_bad_crc(p.read_bytes()))))]
            if dataset == "cue_conflict"
            else []
        ),
        Bad("image-symlink-loop", with_image(lambda p: (p.unlink(), p.symlink_to(p.name)))),
        Bad("image-is-folder", with_image(lambda p: (p.unlink(), p.mkdir()))),
        Bad("image-outside", with_image(lambda p: (p.unlink(), p.symlink_to("/etc/passwd")))),
        Bad("newline-class", extra("bad\nclass", lambda p: p.mkdir())),
        Bad("wrong-layout", only(["not_a_class", "another"])),
    ]


def _bad_crc(png: bytes) -> bytes:
    """A PNG whose IHDR chunk fails its CRC."""
    data = bytearray(png)
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        data[29] ^= 0xFF  # the IHDR CRC
    else:
        data[len(data) // 2] ^= 0xFF
    return bytes(data)


# --------------------------------------------------------------------------- measurement store
def _record(**kw) -> dict:
    return malformed.store_record(model="m1", measurement="fake_a", **kw)


def store_cases() -> list[Bad]:
    """A store folder holding one corrupt record (``reported``: the sweep and the comparison go
    on and name it) next to nothing else, or a store path that is no folder (``error``)."""

    def with_record(
        text: str | Callable[[], str], folder: str = "m1", name: str = "fake_a"
    ) -> Value:
        def make(w: Where) -> str:
            store = w.root / "in" / "store"
            malformed.write_record(store, folder, name, text() if callable(text) else text)
            return str(store)

        return make

    def dumps(rec: dict, **kw) -> str:
        return json.dumps(rec, **kw)

    def nan_value() -> str:
        rec = _record()
        rec["columns"][0]["value"] = float("nan")
        return dumps(rec)

    def inf_interval() -> str:
        rec = _record()
        rec["columns"][0]["interval"] = [float("-inf"), float("inf")]
        return dumps(rec)

    def traversal() -> str:
        rec = _record()
        rec["records_file"] = "../../../../../../etc/passwd"
        return dumps(rec)

    def deep() -> str:
        return '{"model": "m1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"

    def huge() -> str:
        rec = _record()
        rec["provenance"]["note"] = "x" * (4 * MB)
        rec["status"] = "x" * 100
        return dumps(rec)

    def bad(name: str, value: Value) -> Bad:
        return Bad(name, value, expect="reported")

    record = dumps(_record())
    return [
        Bad("file", lambda w: str(w.file("store-file", b"not a folder\n"))),
        Bad("symlink-loop", folder_cases()[3].value),
        Bad("number", lambda w: "42"),
        bad("truncated", with_record(record[:60])),
        bad("binary", with_record(lambda: _garbage().decode("latin-1"))),
        bad("utf16", lambda w: _utf16_record(w, record)),
        bad("empty", with_record("")),
        bad("list", with_record("[1, 2]")),
        bad("k-above-n", with_record(lambda: dumps(_record(k=60, n=50)))),
        bad(
            "missing-key",
            with_record(lambda: dumps({k: v for k, v in _record().items() if k != "status"})),
        ),
        bad("nan-value", with_record(nan_value)),
        bad("infinity-interval", with_record(inf_interval)),
        bad("deep-nesting", with_record(deep)),
        bad("huge", with_record(huge)),
        bad("other-models-folder", with_record(record, folder="m2")),
        bad("records-file-traversal", with_record(traversal)),
        bad(
            "newline-folder",
            with_record(
                lambda: dumps(
                    malformed.store_record(model="m2\nx", measurement="fake_a", k=60, n=50)
                ),
                folder="m2\nx",
            ),
        ),
    ]


def _utf16_record(w: Where, record: str) -> str:
    store = w.root / "in" / "store"
    (store / "m1").mkdir(parents=True)
    (store / "m1" / "fake_a.json").write_bytes(record.encode("utf-16"))
    return str(store)


# --------------------------------------------------------------------------- TOML files
def _toml(w: Where, name: str, text: str | bytes) -> str:
    return str(w.file(name, text))


def toml_cases(sample: str, name: str, extra: list[tuple[str, str]]) -> list[Bad]:
    """A TOML input: the file cases (on a valid ``sample``), broken and deeply nested TOML, and
    the kind's own (unknown keys, wrong types: ``extra``)."""
    deep = "a = " + "[" * 50_000 + "]" * 50_000 + "\n"
    cases = [c for c in file_cases(lambda w: sample.encode(), ".toml") if c.name != "empty"]
    cases += [
        Bad("not-toml", lambda w: _toml(w, name, "[paths\n")),
        Bad("deep-nesting", lambda w: _toml(w, name, deep)),
        Bad("deep-tables", lambda w: _toml(w, name, "[" + ".".join(["t"] * 5000) + "]\n")),
        Bad("huge-key", lambda w: _toml(w, name, "k" * (4 * MB) + " = 1\n")),
    ]
    cases += [Bad(n, (lambda text: lambda w: _toml(w, name, text))(t)) for n, t in extra]
    return cases


#: the config and study-path cases run on every command (one per way of failing: the file, its
#: encoding, its syntax, its keys, its model table)
CONFIG_SAMPLE_CASES = (
    "missing",
    "folder",
    "utf16",
    "not-toml",
    "deep-nesting",
    "unknown_paths_key",
    "exec_pickle_global",
)
STUDY_SAMPLE_CASES = ("missing", "binary", "unknown-key", "claims-missing")

CONFIG_SAMPLE = '[paths]\nweights = "w"\n\n[runner]\nmodels = ["tiny_random_a"]\n'


def config_cases() -> list[Bad]:
    extra = [(k, v) for k, v in malformed.CONFIGS.items() if k != "not_toml"] + [
        ("paths-number", "[paths]\ndata = 42\n"),
        ("paths-nan", "[paths]\nstore = nan\n"),
        ("paths-table", "[paths]\nstore = { a = 1 }\n"),
        ("runner-string", '[runner]\nmodels = "tiny_random_a"\n'),
        ("datasets-number", "[datasets]\nimagenet_val = 1\n"),
        ("table-is-value", 'paths = "x"\n'),
        ("studies-number", "[studies]\npaths = [1]\n"),
        ("model-wrong-types", '[models.mine]\nsource = "local"\nreference = 42\nseed = "x"\n'),
        ("model-unknown-source", '[models.mine]\nsource = "ftp"\nreference = "x.pth"\n'),
        ("model-override-number", "[models]\ntv_resnet50 = 42\n"),
        (
            "model-traversal-name",
            '[models."../../x"]\nsource = "local"\nreference = "/x.pth"\nfoo = 1\n',
        ),
    ]
    return toml_cases(CONFIG_SAMPLE, "repro.toml", extra)


def _study_folder(
    w: Where, study_toml: str | bytes, claims: str | bytes | None = None, name: str = "mystudy"
) -> str:
    folder = w.root / "in" / "studies" / name
    folder.mkdir(parents=True)
    (folder / "study.toml").write_bytes(
        study_toml.encode() if isinstance(study_toml, str) else study_toml
    )
    (folder / "claims.toml").write_bytes(
        (claims or "").encode() if isinstance(claims, str | None) else claims
    )
    return str(folder.parent)


STUDY_SAMPLE = (
    'name = "mystudy"\ntitle = "T"\ncitation = "C"\nclaims = "claims.toml"\n'
    'measurements = []\n[table]\nfile = "table.csv"\n'
)
CLAIM = (
    '[[claim]]\nid = "c1"\nstudy = "mystudy"\nstatement = "s"\nsource = "p"\nstatistic = "m:f"\n'
    'version = 1\n[claim.tolerance]\npolicy = "absolute"\nparams = { abs = 0.1 }\nreason = "r"\n'
)


def study_path_cases() -> list[Bad]:
    """``REPRO_STUDY_PATH``: the folder itself, and a study folder with a bad
    study.toml or claim file."""

    def study(text: str | bytes, claims: str | bytes | None = None, name: str = "mystudy") -> Value:
        return lambda w: _study_folder(w, text, claims, name)

    deep = "a = " + "[" * 50_000 + "]" * 50_000 + "\n"
    return folder_cases() + [
        Bad("empty-study-toml", study("")),
        Bad("binary", study(_garbage())),
        Bad("utf16", study(STUDY_SAMPLE.encode("utf-16"))),
        Bad("latin1", study(_latin1(STUDY_SAMPLE.encode()))),
        Bad("truncated", study(STUDY_SAMPLE[:30])),
        Bad("deep-nesting", study(deep)),
        Bad("unknown-key", study(STUDY_SAMPLE + "measurement = []\n")),
        Bad("name-number", study(STUDY_SAMPLE.replace('name = "mystudy"', "name = 42"))),
        Bad(
            "measurements-string",
            study(STUDY_SAMPLE.replace("measurements = []", 'measurements = "shape_bias"')),
        ),
        Bad(
            "unknown-measurement",
            study(STUDY_SAMPLE.replace("measurements = []", 'measurements = ["shape_bais"]')),
        ),
        Bad(
            "claims-traversal",
            study(STUDY_SAMPLE.replace('"claims.toml"', '"../../../../../../etc/passwd"')),
        ),
        Bad("claims-missing", study(STUDY_SAMPLE.replace('"claims.toml"', '"nope.toml"'))),
        Bad(
            "duplicate-name",
            study(STUDY_SAMPLE.replace('"mystudy"', '"gavrikov2024"', 1), name="dup"),
        ),
        Bad(
            "table-traversal",
            study(STUDY_SAMPLE.replace('"table.csv"', '"../../../../../../etc/passwd"')),
        ),
        Bad("claims-binary", study(STUDY_SAMPLE, _garbage())),
        Bad("claims-unknown-key", study(STUDY_SAMPLE, CLAIM + "oops = 1\n")),
        Bad(
            "claims-version-text",
            study(STUDY_SAMPLE, CLAIM.replace("version = 1", 'version = "one"')),
        ),
        Bad(
            "claims-params-number",
            study(
                STUDY_SAMPLE, CLAIM.replace('statistic = "m:f"', 'statistic = "m:f"\nparams = 3')
            ),
        ),
        Bad(
            "claims-published-nan",
            study(
                STUDY_SAMPLE,
                CLAIM.replace('statistic = "m:f"', 'statistic = "m:f"\npublished = nan'),
            ),
        ),
        Bad("claims-deep", study(STUDY_SAMPLE, deep)),
    ]


ANALYSIS_SAMPLE = 'extends = "gavrikov2024"\nname = "variant"\n'


def analysis_cases() -> list[Bad]:
    def loop(w: Where) -> str:
        path = w.root / "in" / "self.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'extends = "{path}"\nname = "x"\n')
        return str(path)

    extra = [
        ("unknown-key", ANALYSIS_SAMPLE + "groupz = 1\n"),
        ("extends-missing", 'extends = "../../nope.toml"\nname = "x"\n'),
        ("extends-number", "extends = 42\n"),
        ("extends-unknown-study", 'extends = "gavrikov2025"\n'),
        ("groups-number", ANALYSIS_SAMPLE + "groups = 3\n"),
        ("group-models-number", ANALYSIS_SAMPLE + '[groups.at]\nlabel = "AT"\nmodels = 3\n'),
        ("group-nan", ANALYSIS_SAMPLE + "[groups.at]\nlabel = nan\nmodels = []\n"),
        ("confidence-text", ANALYSIS_SAMPLE + 'confidence = "high"\n'),
        ("confidence-nan", ANALYSIS_SAMPLE + "confidence = nan\n"),
    ]
    return toml_cases(ANALYSIS_SAMPLE, "variant.toml", extra) + [
        Bad("extends-self", loop),
        Bad("not-toml-name", lambda w: "gavrikov2025"),
    ]


# --------------------------------------------------------------------------- throughput JSON
def throughput_sample(w: Where) -> bytes:
    runs = [
        {"stage": s, "precision": p, "passes_per_s": 100.0}
        for s in ("shape_bias", "spectral", "critical_band", "classify", "pgd")
        for p in ("float32", "bfloat16")
    ]
    return (
        json.dumps({"model": "m", "device": "cpu", "batch_size": 8, "runs": runs}) + "\n"
    ).encode()


def _throughput_with(change: Callable[[dict], None]) -> Value:
    def make(w: Where) -> str:
        doc = json.loads(throughput_sample(w))
        change(doc)
        return str(w.file("t.json", json.dumps(doc)))

    return make


def _rate(value: object) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        doc["runs"][2]["passes_per_s"] = value

    return change


def throughput_cases() -> list[Bad]:
    return file_cases(throughput_sample, ".json") + [
        Bad("nan-rate", _throughput_with(_rate(float("nan")))),
        Bad("infinity-rate", _throughput_with(_rate(float("inf")))),
        Bad("negative-rate", _throughput_with(_rate(-5.0))),
        Bad("zero-rate", _throughput_with(_rate(0))),
        Bad("text-rate", _throughput_with(_rate("fast"))),
        Bad("bool-rate", _throughput_with(_rate(True))),
        Bad("list", lambda w: str(w.file("t.json", "[1, 2, 3]"))),
        Bad("runs-number", _throughput_with(lambda d: d.__setitem__("runs", 3))),
        Bad("run-number", _throughput_with(lambda d: d["runs"].__setitem__(0, 3))),
        Bad(
            "missing-stage",
            _throughput_with(
                lambda d: d.__setitem__("runs", [r for r in d["runs"] if r["stage"] != "pgd"])
            ),
        ),
        Bad("deep-nesting", lambda w: str(w.file("t.json", "[" * 100_000 + "]" * 100_000))),
    ]


# ---------------------------------------------------------------- critical-band grids (counts CSV)
def grid_sample(w: Where) -> bytes:
    """A valid counts CSV of a 16-class noise grid: SD 0 split over the 7 bands,
    then 4 SDs x 7 bands."""
    from repro.scoring.critical_band import N_BANDS, NOISE_SDS

    rows = [["condition", "k", "n"]]
    for sd in NOISE_SDS:
        for band in range(N_BANDS):
            k = 150 if sd == 0 else max(10, 150 - int(sd * 600) * (1 + (band == 4)))
            rows.append([f"noise{sd:g}freq{band}", str(k), "160"])
    return _csv_text(rows)


def _grid_with(i: int, column: int, value: str) -> Value:
    def make(w: Where) -> str:
        rows = [r.split(",") for r in grid_sample(w).decode().splitlines()]
        rows[i][column] = value
        return str(w.file("g.csv", _csv_text(rows)))

    return make


def grid_cases() -> list[Bad]:
    return file_cases(grid_sample, ".csv") + [
        Bad("header-only", lambda w: str(w.file("h.csv", "condition,k,n\n"))),
        Bad("k-above-n", _grid_with(5, 1, "161")),
        Bad("k-negative", _grid_with(5, 1, "-1")),
        Bad("k-nan", _grid_with(5, 1, "NaN")),
        Bad("n-zero", _grid_with(5, 2, "0")),
        Bad("unknown-sd", _grid_with(9, 0, "noise0.5freq1")),
        Bad("unknown-band", _grid_with(9, 0, "noise0.02freq9")),
        Bad("unknown-name", _grid_with(9, 0, "pgd")),
        Bad("duplicate-condition", _grid_with(9, 0, "noise0.02freq0")),
        Bad("json-list", lambda w: str(w.file("g.json", "[1, 2, 3]"))),
        Bad(
            "json-trials-text",
            lambda w: str(w.file("g.json", json.dumps({"noise0freq0": ["yes"]}))),
        ),
    ]


# ---------------------------------------------------------------------- tidy tables (store import)
def tidy_sample(w: Where) -> bytes:
    """What ``compare --tidy`` writes for one measured job (tv_resnet50 on
    ImageNet, with counts)."""
    from repro.base.stats import Count
    from repro.measurements.registry import current_versions
    from repro.store.export import write_tidy_csv
    from repro.store.files import Store
    from repro.store.record import STATUS_OK, ColumnValue, JobRecord

    src = w.root / "tidy-src"
    k, n = 38073, 50000
    col = ColumnValue.from_count("top1_acc/imagenet", k, n)
    prov = {
        "seed": 0,
        "device": "cpu",
        "dataset": "imagenet_val",
        "dataset_items": n,
        "dataset_mini": False,
        "dataset_partial": False,
        "dataset_fingerprint": "abc123",
        "repro_version": "0.1",
        "git_commit": "0" * 8,
        "torch": "2.14.1",
        "finished_utc": "2031-01-01T00:00:00Z",
        "batch_size": 128,
        "host": "h",
        "duration_s": 1.0,
        "model_weights_sha256": "f" * 64,
    }
    Store(src).write(
        JobRecord(
            "tv_resnet50",
            "imagenet",
            current_versions(["imagenet"])["imagenet"],
            STATUS_OK,
            conditions=[{"condition": "all", **Count(k, n).as_json()}],
            value=col.value,
            interval=col.interval,
            columns=[col],
            provenance=prov,
        )
    )
    out = w.root / "tidy-src.csv"
    write_tidy_csv(src, out)
    data = out.read_bytes()
    shutil.rmtree(src)
    out.unlink()
    return data


def _tidy_with(field_name: str, value: str, row: int = 0) -> Value:
    import csv
    import io

    def make(w: Where) -> str:
        rows = list(csv.DictReader(io.StringIO(tidy_sample(w).decode())))
        rows[row][field_name] = value
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return str(w.file("t.csv", buf.getvalue()))

    return make


def tidy_cases() -> list[Bad]:
    return file_cases(tidy_sample, ".csv") + [
        Bad(
            "header-only",
            lambda w: str(w.file("h.csv", tidy_sample(w).decode().splitlines()[0] + "\n")),
        ),
        Bad("unknown-model", _tidy_with("model", "resnet50_prim")),
        Bad("unknown-measurement", _tidy_with("measurement", "shape_bais")),
        Bad("k-above-n", _tidy_with("k", "60000")),
        Bad("k-nan", _tidy_with("k", "NaN")),
        Bad("k-negative", _tidy_with("k", "-1")),
        Bad("value-disagrees", _tidy_with("value", "0.1")),
        Bad("mini-provenance", _tidy_with("dataset_mini", "True")),
        Bad("traversal-model", _tidy_with("model", "../../../etc/passwd")),
    ]


# --------------------------------------------------------------------------- published data folders
def data_dir_cases() -> list[Bad]:
    """A published data folder: missing, not a folder, empty, or a copy with one table tampered."""

    def tampered(w: Where) -> str:
        dest = w.root / "in" / "data"
        shutil.copytree(w.shared["data"], dest)
        path = dest / "gavrikov2024" / "benchmark.csv"
        lines = path.read_text().splitlines()
        lines[3] = lines[3].replace("0", "9", 1)
        path.write_text("\n".join(lines) + "\n")
        return str(dest)

    def truncated(w: Where) -> str:
        dest = w.root / "in" / "data"
        shutil.copytree(w.shared["data"], dest)
        path = dest / "gavrikov2024" / "benchmark.csv"
        path.write_bytes(_truncate(path.read_bytes()))
        return str(dest)

    return folder_cases() + [
        Bad("empty", lambda w: str(w.folder("empty-data"))),
        Bad("tampered-table", tampered),
        Bad("truncated-table", truncated),
    ]


# --------------------------------------------------------------------------- plain values
def _constant(value: str) -> Value:
    return lambda w: value


def _values(*pairs: tuple[str, str]) -> list[Bad]:
    return [Bad(n, _constant(v)) for n, v in pairs]


def int_cases(*, zero: bool = True, negative: bool = True) -> list[Bad]:
    pairs = [("text", "abc"), ("float", "1.5"), ("empty", ""), ("huge", "9" * 30)]
    pairs += [("zero", "0")] if zero else []
    pairs += [("negative", "-1")] if negative else []
    return _values(*pairs)


def name_cases(unknown: str) -> list[Bad]:
    return _values(
        ("unknown", unknown),
        ("traversal", "../../../etc/passwd"),
        ("newline", "a\nb"),
        ("empty", ""),
        ("huge", "n" * 100_000),
        ("commas-only", ",,,"),
    )


def probability_cases() -> list[Bad]:
    return _values(
        ("text", "high"),
        ("zero", "0"),
        ("one", "1"),
        ("above-one", "1.5"),
        ("negative", "-0.5"),
        ("nan", "nan"),
        ("infinity", "inf"),
        ("empty", ""),
        ("percent", "99%"),
    )


def choice_cases() -> list[Bad]:
    return _values(("unknown", "bogus"), ("empty", ""), ("newline", "a\nb"))


def device_cases() -> list[Bad]:
    return _values(
        ("unknown", "gpu"),
        ("cuda-index", "cuda:99"),
        ("cpu-index", "cpu:-1"),
        ("empty", ""),
        ("newline", "cpu\n"),
    )


def env_ref_cases() -> list[Bad]:
    return _values(
        ("no-colon", "tests.fakes"),
        ("missing-module", "no_such_module:f"),
        ("missing-attribute", "tests.fakes:nope"),
        ("not-callable", "tests.fakes:N_ITEMS"),
        ("needs-arguments", "tests.fakes:make_model"),
        ("wrong-result", "os:getcwd"),
        ("traversal", "../../x:f"),
        ("empty", ""),
    )


def relpath_cases() -> list[Bad]:
    return _values(
        ("traversal", "../../../etc/passwd"),
        ("absolute", "/etc/passwd"),
        ("unknown", "gavrikov2024/benchmark.cvs"),
        ("newline", "a\nb"),
        ("empty", ""),
        ("folder", "gavrikov2024"),
    )


def splits_cases() -> list[Bad]:
    return _values(
        ("unknown", "9"),
        ("letters", "a,b"),
        ("empty", ""),
        ("commas", ",,,"),
        ("traversal", "../.."),
    )


def stages_cases() -> list[Bad]:
    return _values(("unknown", "bogus"), ("empty", ""), ("commas", ",,,"), ("newline", "pgd\nx"))


KINDS: dict[str, Callable[[], list[Bad]]] = {
    "decisions": decisions_cases,
    "predictions": predictions_cases,
    "thresholds": thresholds_cases,
    "checkpoint": checkpoint_cases,
    "cue_conflict": lambda: image_folder_cases("cue_conflict"),
    "imagenet_val": lambda: image_folder_cases("imagenet_val"),
    "store": store_cases,
    # a store the command only reads, whose records it shows as found (``report``: the models of a
    # study's session; a corrupt record is named in the report, which gates
    # nothing): the store path cases
    "store_path": lambda: [c for c in store_cases() if c.expect == "error"],
    "config": config_cases,
    "config_sample": lambda: [c for c in config_cases() if c.name in CONFIG_SAMPLE_CASES],
    "study_path_sample": lambda: [c for c in study_path_cases() if c.name in STUDY_SAMPLE_CASES],
    "study_path": study_path_cases,
    "analysis": analysis_cases,
    "throughput": throughput_cases,
    "grid": grid_cases,
    "tidy": tidy_cases,
    "probability": probability_cases,
    "data_dir": data_dir_cases,
    "folder": folder_cases,
    "out_file": out_file_cases,
    "out_dir": out_dir_cases,
    "int": int_cases,
    "int_nonneg": lambda: int_cases(zero=False),
    "name_model": lambda: name_cases("resnet50_prim"),
    "name_measurement": lambda: name_cases("shape_bais"),
    "name_study": lambda: name_cases("gavrikov2025"),
    "name_dataset": lambda: name_cases("imagenet_vall"),
    "name_session": lambda: name_cases("reall"),
    "choice": choice_cases,
    "device": device_cases,
    "env_ref": env_ref_cases,
    "relpath": relpath_cases,
    "thresholds_value": thresholds_cases,
    "splits": splits_cases,
    "stages": stages_cases,
}

# --------------------------------------------------------------------------- where each input goes
PROBE = ("--model", "tiny_random_a", "--device", "cpu", "--batch-size", "8")
PROBE_SPECTRAL = ("probe", "spectral", "--data", "{imagenet_val}", *PROBE)
PROBE_SHAPE = ("probe", "shape-bias", "--data", "{cue_conflict}", *PROBE)
MEASURE = (
    "measure",
    "--models",
    "m1,m2",
    "--measurements",
    "fake_a",
    "--env",
    "tests.fakes:environment",
    "--no-progress",
    "--device",
    "cpu",
)
THROUGHPUT = (
    "throughput",
    "--model",
    "tiny_random_a",
    "--device",
    "cpu",
    "--stages",
    "classify",
    "--limit",
    "4",
)
STORE_FAKE = ("--store", "{root}/store")
STUDIES = (
    "claims",
    "report",
    "data fetch",
    "data verify",
    "measure",
    "compare",
    "reproduce",
    "plan",
    "place",
)
PLACE = ("place", "--model", "efficientnet_lite0")


def _slots() -> list[Slot]:
    s: list[Slot] = []

    def add(command: str, option: str, kind: str, base: tuple[str, ...] = (), **kw) -> None:
        s.append(Slot(tuple(command.split()), option, kind, base, **kw))

    # claims / report / reproduce: the published data, the analysis definition, the outputs
    for cmd in ("claims", "report"):
        add(cmd, "--data-dir", "data_dir")
        add(cmd, "--analysis", "analysis")
        add(cmd, "--study", "name_study")
    add("claims", "--json", "out_file")
    add("claims", "--source", "choice")
    add("claims", "--store", "store_path", ("claims", "--source", "store"), skip=("number",))
    add("claims", "--device", "device", ("claims", "--source", "measure", *STORE_FAKE))
    add("report", "--out", "out_file")
    add(
        "report", "--store", "store_path", skip=("number",)
    )  # a store not made yet: the report says none measured
    rep = ("reproduce", "--published-only")
    add("reproduce", "--data-dir", "data_dir", rep)
    add("reproduce", "--analysis", "analysis", rep)
    add("reproduce", "--study", "name_study", rep)
    add("reproduce", "--out", "out_file", rep)
    add("reproduce", "--store", "out_dir", ("reproduce", "--mini"))
    add("reproduce", "--work-dir", "out_dir", ("reproduce", "--mini"))
    add("reproduce", "--models", "name_model", ("reproduce", "--mini", "--work-dir", "{root}/mini"))
    add(
        "reproduce",
        "--measurements",
        "name_measurement",
        ("reproduce", "--mini", "--work-dir", "{root}/mini"),
    )
    add("reproduce", "--batch-size", "int", ("reproduce", "--mini", "--work-dir", "{root}/mini"))
    add("reproduce", "--device", "device", ("reproduce", "--mini", "--work-dir", "{root}/mini"))
    # data
    add(
        "data fetch",
        "",
        "relpath",
        ("data", "fetch", "--data-dir", "{root}/fetched"),
        outputs=("{root}/fetched",),
    )
    add("data fetch", "--data-dir", "out_dir", ("data", "fetch", "gavrikov2024/benchmark.csv"))
    add(
        "data verify",
        "--data-dir",
        "data_dir",
        expect={"tampered-table": "reported", "truncated-table": "reported", "empty": "reported"},
    )
    add(
        "data make-mini",
        "",
        "out_dir",
        ("data", "make-mini", "--datasets", "cue_conflict", "--per-class", "1"),
    )
    mini = ("data", "make-mini", "{root}/mini-out")
    add("data make-mini", "--per-class", "int", mini, outputs=("{root}/mini-out",))
    add(
        "data make-mini", "--seed", "int_nonneg", mini, outputs=("{root}/mini-out",), skip=("zero",)
    )
    add("data make-mini", "--datasets", "name_dataset", mini, outputs=("{root}/mini-out",))
    add("data check", "", "name_dataset", ("data", "check", "--root", "{root}/nothing"))
    # --build-cache: the mode that decodes the images (without it the check is
    # of layout and counts only)
    add(
        "data check",
        "--root",
        "imagenet_val",
        ("data", "check", "imagenet_val", "--build-cache"),
        outputs=("{root}/cache",),
        expect={
            n: "reported"
            for n in (
                "empty",
                "bomb-png",
                "bomb-warning-png",
                "truncated-image",
                "text-image",
                "empty-image",
                "bad-crc-png",
                "image-symlink-loop",
                "image-is-folder",
                "image-outside",
                "newline-class",
                "wrong-layout",
            )
        },
    )
    add(
        "data check",
        "--data-dir",
        "data_dir",
        ("data", "check", "graysplit"),
        expect={n: "reported" for n in ("empty", "tampered-table", "truncated-table")},
    )
    # score
    add("score shape-bias", "", "decisions", ("score", "shape-bias"))
    add("score critical-band", "", "thresholds", ("score", "critical-band"))
    add("score critical-band", "--grid", "grid", ("score", "critical-band"))
    add(
        "score benchmark",
        "--predictions",
        "predictions",
        ("score", "benchmark", "--benchmark", "imagenet"),
    )
    add(
        "score benchmark",
        "--benchmark",
        "choice",
        ("score", "benchmark", "--predictions", "{predictions}"),
    )
    add("score imagenet-x", "--predictions", "predictions", ("score", "imagenet-x"))
    add(
        "score imagenet-x",
        "--which",
        "choice",
        ("score", "imagenet-x", "--predictions", "{predictions}"),
    )
    add(
        "score imagenet-x",
        "--correctness",
        "choice",
        ("score", "imagenet-x", "--predictions", "{predictions}"),
    )
    # probe
    add(
        "probe",
        "--model",
        "checkpoint",
        ("probe", "spectral", "--data", "{imagenet_val}", "--device", "cpu", "--batch-size", "8"),
    )
    add("probe", "--data", "imagenet_val", ("probe", "spectral", *PROBE))
    add("probe", "--data", "cue_conflict", ("probe", "shape-bias", *PROBE))
    add("probe", "", "choice", ("probe", "--data", "{imagenet_val}", *PROBE))
    add(
        "probe",
        "--batch-size",
        "int",
        (
            "probe",
            "spectral",
            "--data",
            "{imagenet_val}",
            "--model",
            "tiny_random_a",
            "--device",
            "cpu",
        ),
    )
    add(
        "probe",
        "--seed",
        "int_nonneg",
        ("probe", "critical-band", "--data", "{imagenet_val}", *PROBE),
        skip=("zero",),
    )
    add("probe", "--splits", "splits", PROBE_SPECTRAL)
    add("probe", "--stimuli", "choice", PROBE_SPECTRAL)
    add(
        "probe", "--noise", "choice", ("probe", "critical-band", "--data", "{imagenet_val}", *PROBE)
    )
    add(
        "probe",
        "--device",
        "device",
        ("probe", "spectral", "--data", "{imagenet_val}", "--model", "tiny_random_a"),
    )
    # a weights folder not made yet is made (the download goes there): an output too
    add(
        "probe",
        "--weights-dir",
        "folder",
        (
            "probe",
            "spectral",
            "--data",
            "{imagenet_val}",
            "--device",
            "cpu",
            "--model",
            "tv_resnet50",
        ),
        outputs=("{store}",),
    )
    add("probe", "--out", "out_file", PROBE_SHAPE)
    # measure / compare
    # (a store named 42 is a new store; measure reads only the records of the jobs it runs, so a
    # corrupt record of another model, in the folder 'm2\nx', is not its to
    # report: compare reports it)
    add(
        "measure",
        "--store",
        "store",
        MEASURE,
        outputs=("{store}",),
        skip=("number", "newline-folder"),
    )
    add(
        "measure",
        "--models",
        "name_model",
        ("measure", "--measurements", "imagenet", *STORE_FAKE, "--device", "cpu", "--no-progress"),
        outputs=("{root}/store",),
    )
    add(
        "measure",
        "--measurements",
        "name_measurement",
        ("measure", "--models", "tiny_random_a", *STORE_FAKE, "--device", "cpu", "--no-progress"),
        outputs=("{root}/store",),
    )
    add(
        "measure",
        "--env",
        "env_ref",
        (
            "measure",
            "--models",
            "m1",
            "--measurements",
            "fake_a",
            *STORE_FAKE,
            "--no-progress",
            "--device",
            "cpu",
        ),
        outputs=("{root}/store",),
    )
    add("measure", "--batch-size", "int", MEASURE + STORE_FAKE, outputs=("{root}/store",))
    add("measure", "--workers", "int", MEASURE + STORE_FAKE, outputs=("{root}/store",))
    add("measure", "--order", "choice", MEASURE + STORE_FAKE, outputs=("{root}/store",))
    add("measure", "--subset", "int", MEASURE + STORE_FAKE, outputs=("{root}/store",))
    add(
        "measure",
        "--subset-seed",
        "int_nonneg",
        MEASURE + STORE_FAKE + ("--subset", "4"),
        outputs=("{root}/store",),
        skip=("zero",),
    )
    add(
        "measure",
        "--timeout-min",
        "int",
        MEASURE + STORE_FAKE + ("--executor", "slurm"),
        outputs=("{root}/store",),
    )
    slurm = (
        MEASURE + STORE_FAKE + ("--executor", "slurm")
    )  # refused by the parser, before any cluster is asked
    add("measure", "--slurm-cpus-per-task", "int", slurm, outputs=("{root}/store",))
    add("measure", "--slurm-gpus", "int_nonneg", slurm, outputs=("{root}/store",))
    add(
        "measure", "--slurm-mem-gb", "int", slurm, outputs=("{root}/store",), skip=("float",)
    )  # 1.5 GB is fine
    add("measure", "--executor", "choice", MEASURE + STORE_FAKE, outputs=("{root}/store",))
    add("measure", "--device", "device", MEASURE[:-2] + STORE_FAKE, outputs=("{root}/store",))
    # a tampered or truncated published table is not read by measure (the study lists its models in
    # study.toml): the tables are verified where they are read (claims, compare, data verify)
    add(
        "measure",
        "--data-dir",
        "data_dir",
        (
            "measure",
            "--models",
            "all",
            "--measurements",
            "fake_a",
            "--env",
            "tests.fakes:environment",
            *STORE_FAKE,
            "--no-progress",
            "--device",
            "cpu",
        ),
        outputs=("{root}/store",),
        skip=("tampered-table", "truncated-table"),
    )
    add("measure", "--study", "name_study", MEASURE + STORE_FAKE, outputs=("{root}/store",))
    add("measure", "--worker", "splits", MEASURE + STORE_FAKE, outputs=("{root}/store",))
    add(
        "measure",
        "--session",
        "name_session",
        ("measure", "--env", "tests.fakes:environment", *STORE_FAKE, "--no-progress"),
        outputs=("{root}/store",),
    )
    add("compare", "--store", "store", ("compare",), skip=("number",))
    add("compare", "--data-dir", "data_dir", ("compare", *STORE_FAKE))
    add("compare", "--models", "name_model", ("compare", *STORE_FAKE))
    add("compare", "--study", "name_study", ("compare", *STORE_FAKE))
    add("compare", "--tidy", "out_file", ("compare", *STORE_FAKE))
    add("compare", "--json", "out_file", ("compare", *STORE_FAKE))
    # store import: the tidy table, and the store it goes into (nothing is
    # written when a row is bad)
    add("store import", "", "tidy", ("store", "import", *STORE_FAKE))
    add("store import", "--store", "out_dir", ("store", "import", "{tidy}"))
    # place: any model of the store (or the zoo, or with external values), from a store
    add("place", "--model", "name_model", ("place", *STORE_FAKE))
    # the corrupt records are m1's (place reads only the placed model's records);
    # a store named 42 is empty
    add(
        "place",
        "--store",
        "store",
        ("place", "--model", "m1"),
        skip=("number", "newline-folder"),
        expect={"other-models-folder": "error"},
    )  # m1's record in m2's folder: m1 has none, m2 is not asked for
    add("place", "--study", "name_study", PLACE + STORE_FAKE)
    add("place", "--data-dir", "data_dir", PLACE + STORE_FAKE)
    add("place", "--json", "out_file", PLACE + STORE_FAKE)
    # throughput / plan
    add(
        "throughput",
        "--model",
        "checkpoint",
        ("throughput", "--device", "cpu", "--stages", "classify", "--limit", "4"),
    )
    add("throughput", "--limit", "int", THROUGHPUT[:-2])
    add("throughput", "--batch-size", "int", THROUGHPUT)
    add("throughput", "--stages", "stages", THROUGHPUT[:5] + THROUGHPUT[7:])
    add(
        "throughput",
        "--seed",
        "int_nonneg",
        (
            "throughput",
            "--model",
            "tiny_random_a",
            "--device",
            "cpu",
            "--stages",
            "critical_band",
            "--limit",
            "4",
        ),
        skip=("zero",),
    )
    add("throughput", "--device", "device", THROUGHPUT[:3] + THROUGHPUT[5:])
    add(
        "throughput",
        "--data-dir",
        "data_dir",
        (
            "throughput",
            "--model",
            "tiny_random_a",
            "--device",
            "cpu",
            "--stages",
            "shape_bias",
            "--limit",
            "4",
        ),
    )
    add(
        "throughput",
        "--weights-dir",
        "folder",
        (
            "throughput",
            "--model",
            "tv_resnet50",
            "--device",
            "cpu",
            "--stages",
            "classify",
            "--limit",
            "4",
        ),
        outputs=("{store}",),
    )
    add("throughput", "--out", "out_file", THROUGHPUT)
    add("throughput", "--data-major", "int", THROUGHPUT)
    add("plan", "--throughput", "throughput")
    add("plan", "--device", "choice")
    for opt in ("--gpus", "--models", "--cpu-workers", "--cores", "--disk-gb"):
        add("plan", opt, "int")
    add("plan", "--measurements", "name_measurement")
    add("plan", "--study", "name_study")
    add("plan", "--confidence", "probability")
    add("plan", "--json", "out_file", ("plan", "--confidence", "0.9"))
    add("plan", "--data-dir", "data_dir", ("plan", "--confidence", "0.9"))
    # the settings every command reads
    # the config is read by one function for every command (repro.cli.common.check_config, before
    # the handler): all its cases on `config` and `models`, a sample of each way
    # it can fail on the others
    for cmd in (
        "claims",
        "report",
        "data fetch",
        "data verify",
        "data make-mini",
        "data check",
        "score shape-bias",
        "score critical-band",
        "score benchmark",
        "score imagenet-x",
        "probe",
        "measure",
        "compare",
        "reproduce",
        "throughput",
        "plan",
        "store import",
        "place",
    ):
        add(cmd, "$REPRO_CONFIG", "config_sample")
    for cmd in ("config", "models"):
        add(cmd, "$REPRO_CONFIG", "config")
    # the studies are discovered by one function too (repro.base.study.discover)
    add("claims", "$REPRO_STUDY_PATH", "study_path")
    for cmd in STUDIES[1:]:
        add(cmd, "$REPRO_STUDY_PATH", "study_path_sample")
    return s


#: the base command line of each command when another input is the malformed one
BASE: dict[str, tuple[str, ...]] = {
    "claims": ("claims",),
    "report": ("report", "--out", "{root}/out/REPORT.md"),
    "data fetch": ("data", "fetch", "--data-dir", "{root}/fetched"),
    "data verify": ("data", "verify"),
    "data make-mini": ("data", "make-mini", "{root}/mini-out", "--datasets", "cue_conflict"),
    "data check": ("data", "check", "cue_conflict", "--root", "{cue_conflict}"),
    "score shape-bias": ("score", "shape-bias", "{decisions}"),
    "score critical-band": ("score", "critical-band", "0,0,0,0,2,2,0"),
    "score benchmark": (
        "score",
        "benchmark",
        "--predictions",
        "{predictions}",
        "--benchmark",
        "imagenet",
    ),
    "score imagenet-x": ("score", "imagenet-x", "--predictions", "{predictions}"),
    "probe": PROBE_SPECTRAL,
    "models": ("models",),
    "measure": MEASURE + STORE_FAKE,
    "compare": ("compare", *STORE_FAKE),
    "reproduce": ("reproduce", "--published-only", "--out", "{root}/out/R.md"),
    "config": ("config",),
    "throughput": THROUGHPUT,
    "plan": ("plan",),
    "store import": ("store", "import", "{tidy}", *STORE_FAKE),
    "place": PLACE + STORE_FAKE,
}

#: outputs a command may write whatever input is malformed (besides the slot's own)
OUTPUTS: dict[str, tuple[str, ...]] = {
    "report": ("{root}/out",),
    "reproduce": ("{root}/out", "{root}/mini", "runs"),
    "data fetch": ("{root}/fetched",),
    "data make-mini": ("{root}/mini-out",),
    "measure": ("{root}/store",),
    "compare": ("{root}/store",),
    "throughput": ("{root}/cache",),
    "probe": ("{root}/cache/autotune",),
    "store import": ("{root}/store",),
}

#: value-taking options that are not inputs to corrupt here
EXEMPT: dict[tuple[str, str], str] = {
    (
        "measure",
        "--slurm-partition",
    ): "a name looked up in sinfo's partitions (no cluster here: tests/cluster checks it)",
}

SLOTS = _slots()


def slot_id(slot: Slot) -> str:
    return f"{' '.join(slot.command)} {slot.option or '<arg>'}"

"""Claims: where each input value of a claim came from (its provenance).

Also which inputs a claim needs measured when it is judged on our measurements.

Labels, per input column and model:

- ``published``: the study's published table (or a published file of the study);
- ``measured``: a current record of our measurement store, measured by this suite;
- ``imported``: a current record of our store brought in by ``python -m repro store import``
  (counts and provenance, the imported file's sha256 kept): measured evidence like ``measured``
  (``repro.claims.verdict.MEASURED_LABELS``);
- ``mini``: our store, measured on generated mini data (a mini run; never evidence);
- ``failed``: the run was to measure it and the job failed (the published value is NOT used
  in its place: the claim is ``incomplete``);
- ``missing``: the run was to measure it and the store holds no current value (never run,
  another measurement version, a corrupt record, measured on mini or partial data in a real
  run, or a measured value that is undefined); the claim is ``incomplete``.

The rule: which inputs a claim NEEDS measured. A run on our measurements (``pytest --source
store|measure``, ``python -m repro reproduce``) has models and measurements (``RunInputs``):

- models: ``reproduce``: the models it measured (in a mini run, the study models the tiny
  ones stand in for); ``pytest --source store|measure``: every model of the zoo;
- measurements: those whose dataset is configured for the run (``reproduce``, ``--source
  measure``: exactly what it measures; ``--source store`` adds every measurement the store
  holds a record of).

A claim needs measured every (model, column) where the model is one of the run's models that
its statistic reads (its per-model inputs, ``StatisticResult.per_model``) and the column is
one of its input columns (``StatisticResult.sources``) that a measurement of the run produces.
Each such value must be ``measured`` (``mini`` in a mini run); a ``failed`` or ``missing`` one
makes the claim ``incomplete``. So does a claim with inputs that a registered measurement
produces when the run measured none of them (nothing of it would be checked against our
measurements). Every other input is published and labelled so; a claim whose inputs no
registered measurement produces (the ImageNet-X factor tables) is judged on the published
data under any source.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from repro.claims.verdict import LABEL_IMPORTED, LABEL_MEASURED, LABEL_MINI, LABEL_PUBLISHED
from repro.measurements.registry import MEASUREMENTS, current_versions, get

PUBLISHED, MEASURED, IMPORTED, MINI = LABEL_PUBLISHED, LABEL_MEASURED, LABEL_IMPORTED, LABEL_MINI
MISSING, FAILED = "missing", "failed"
LABELS = (MEASURED, IMPORTED, MINI, PUBLISHED, MISSING, FAILED)  # display order
SHOW = 3  # values named per problem line; the rest are counted


def measurement_of_columns() -> dict[str, str]:
    """{benchmark.csv column: the registered measurement producing it} (its headline columns)."""
    out: dict[str, str] = {}
    for name, spec in MEASUREMENTS.items():
        for col in spec.columns:
            out.setdefault(col, name)
    return out


@dataclass(frozen=True)
class RunInputs:
    """What a run on our measurements was to measure, and what the store holds for it.

    models: the run's models (study names)
    columns: {column: measurement} of the run's measurements
    cells: {(model, column): (label, note)} for the run's values the store has a record of
        (``measured``/``imported``/``mini``, or ``failed``/``missing`` with why); a run value not
        here is missing (no record)
    not_run: {measurement: why it is not among the run's measurements}, for messages
    """

    mini: bool
    models: frozenset[str]
    columns: Mapping[str, str]
    cells: Mapping[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    not_run: Mapping[str, str] = field(default_factory=dict)

    def label(self, model: str, column: str) -> tuple[str, str]:
        """(label, why) of the value of ``column`` for ``model``."""
        measurement = self.columns.get(column)
        if measurement is None or model not in self.models:
            return PUBLISHED, ""
        return self.cells.get(
            (model, column), (MISSING, f"{model} x {measurement}: no record in the store")
        )


def run_inputs(
    store_dir: str | os.PathLike[str],
    measurements: Sequence[str],
    models: Collection[str] | None,
    *,
    mini: bool = False,
    stand_ins: Mapping[str, str] | None = None,
    versions: Mapping[str, str] | None = None,
    not_run: Mapping[str, str] | None = None,
) -> RunInputs:
    """The ``RunInputs`` of a run of ``measurements`` on ``models``, read from the store.

    ``models`` are store names (None: every zoo model). Each value is labelled as
    ``repro.store.export.wide_table`` would overlay it (the same versions and mini rule). In a mini
    run ``stand_ins`` maps each tiny model to the study model whose row its values replace."""
    from repro.store.export import JOB_FAILED, JOB_OK, job_states

    wanted = list(dict.fromkeys(measurements))
    versions = current_versions(wanted) if versions is None else versions
    states = job_states(store_dir, versions=versions, allow_mini=mini)
    rename = dict(stand_ins or {}) if mini else {}
    columns = {col: m for m in wanted for col in get(m).columns}
    ok_label = MINI if mini else MEASURED
    cells: dict[tuple[str, str], tuple[str, str]] = {}
    for (model, measurement), st in states.items():
        if (
            measurement not in wanted
            or (models is not None and model not in models)
            or (mini and model not in rename)
        ):
            continue
        row = rename.get(model, model)
        for col in get(measurement).columns:
            if st.status == JOB_OK:
                value = st.values.get(col)
                label = IMPORTED if st.imported and not mini else ok_label
                cells[(row, col)] = (
                    (label, "")
                    if value is not None
                    else (MISSING, f"{model} x {measurement}: {col} undefined in the record")
                )
            elif st.status == JOB_FAILED:
                cells[(row, col)] = (FAILED, f"{model} x {measurement} failed: {st.note}")
            else:
                cells[(row, col)] = (MISSING, f"{model} x {measurement}: {st.status} ({st.note})")
    if models is None:
        from repro.zoo import specs

        models = [s.name for s in specs()]
    run_models = frozenset(rename.get(m, m) for m in models if not mini or m in rename)
    return RunInputs(mini, run_models, columns, cells, dict(not_run or {}))


@dataclass(frozen=True)
class Provenance:
    """Where each input value of one claim came from.

    ``cells[column][model]`` is its label; ``problems`` says why the claim is incomplete (empty:
    every input it needs is there)."""

    cells: dict[str, dict[str, str]]
    problems: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.problems

    def counts(self) -> dict[str, int]:
        """{label: number of input values}, labels in display order, zero counts left out."""
        total: dict[str, int] = {}
        for row in self.cells.values():
            for label in row.values():
                total[label] = total.get(label, 0) + 1
        return {lab: total[lab] for lab in LABELS if lab in total}

    def by_column(self) -> dict[str, dict[str, int]]:
        """{column: {label: count}} (what a regression snapshot holds)."""
        out = {}
        for col, row in self.cells.items():
            counts: dict[str, int] = {}
            for label in row.values():
                counts[label] = counts.get(label, 0) + 1
            out[col] = {lab: counts[lab] for lab in LABELS if lab in counts}
        return out

    def text(self) -> str:
        """``measured 48, published 96`` (``-`` for a claim with no per-model inputs)."""
        return ", ".join(f"{label} {n}" for label, n in self.counts().items()) or "-"

    def as_json(self) -> dict[str, Any]:
        return self.counts()


def _problem(kind: str, notes: list[str]) -> str:
    shown = "; ".join(notes[:SHOW]) + (f"; +{len(notes) - SHOW} more" if len(notes) > SHOW else "")
    return f"{len(notes)} input value(s) {kind} ({shown})"


def claim_provenance(result: Any, inputs: RunInputs | None) -> Provenance:
    """The provenance of the inputs of ``result`` (a ``StatisticResult``).

    Its input columns (``sources``) for the models it reads (``per_model``), under ``inputs`` (None:
    the published data alone, every value published). See the module docstring for the rule."""
    models = [m for m in result.per_model if isinstance(m, str)]
    columns = list(result.sources)
    cells: dict[str, dict[str, str]] = {}
    failed: list[str] = []
    missing: list[str] = []
    needed = 0
    for col in columns:
        row: dict[str, str] = {}
        for model in models:
            label, note = (PUBLISHED, "") if inputs is None else inputs.label(model, col)
            row[model] = label
            if label != PUBLISHED:
                needed += 1
            if label == FAILED:
                failed.append(f"{col} of {model}: {note}")
            elif label == MISSING:
                missing.append(f"{col} of {model}: {note}")
        cells[col] = row
    problems = []
    if failed:
        problems.append(_problem("failed", failed))
    if missing:
        problems.append(_problem("missing", missing))
    if inputs is not None and needed == 0:
        producer = measurement_of_columns()
        measurable = list(dict.fromkeys(producer[c] for c in columns if c in producer))
        if measurable:
            run = set(inputs.columns.values())
            why: dict[str, list[str]] = {}
            for m in measurable:
                reason = (
                    "measured for none of the models it reads"
                    if m in run
                    else inputs.not_run.get(m, "not measured in this run")
                )
                why.setdefault(reason, []).append(m)
            problems.append(
                "none of its inputs was measured in this run: "
                + "; ".join(f"{', '.join(ms)} ({reason})" for reason, ms in why.items())
            )
    return Provenance(cells, tuple(problems))

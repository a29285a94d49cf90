"""Runner: what a job was measured on, so that a stored record is reused only for the same job.

A job is (model x measurement); its record is only worth reusing when it was measured with the
same measurement version (probe VERSION + spec version), on the same data (dataset fingerprint,
item count, mini/partial flag, declared subset) and with the same weights
(``repro.zoo.weights_identity``). ``mismatches`` lists every difference in words (a record of an
older schema lacking a field counts as different); the runner re-measures such a job and says why.

What a reader of the store checks before overlaying a value on the published table (mini or
partial data is never evidence) is ``repro.store.validate.evidence_problem``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from repro.datasets.specs import SPECS


@dataclass(frozen=True)
class JobIdentity:
    dataset: str
    dataset_fingerprint: str
    dataset_items: int
    dataset_mini: bool
    dataset_partial: bool
    model_weights_sha256: (
        str | None
    )  # None: not known (a custom environment's model without weights)
    dataset_subset: dict[str, Any] | None = (
        None  # a declared subset (repro.datasets.subset): evidence with its own n
    )

    def provenance(self) -> dict[str, Any]:
        return asdict(self)


def full_size(dataset: str) -> int | None:
    """Images in the complete dataset (all conditions).

    None unless it is one of ``repro.datasets.specs``.
    """
    spec = SPECS[dataset] if dataset in SPECS else None
    return spec.total * len(spec.conditions) if spec is not None else None


def source_identity(dataset: str, source: Any) -> dict[str, Any]:
    """The data part of a job's identity, from an opened ImageSource."""
    items = len(source)
    mini = bool(getattr(source, "mini", False))
    full = full_size(dataset)
    subset = getattr(
        source, "subset", None
    )  # a declared, seeded, class-stratified subset is not "partial"
    partial = mini or (
        subset is None
        and (bool(getattr(source, "partial", False)) or (full is not None and items < full))
    )
    return {
        "dataset": dataset,
        "dataset_fingerprint": source.fingerprint(),
        "dataset_items": items,
        "dataset_mini": mini,
        "dataset_partial": partial,
        "dataset_subset": subset,
    }


def mismatches(provenance: dict[str, Any], expected: JobIdentity) -> list[str]:
    """Why a stored record does not belong to the job as it would run now (empty: it does)."""
    out = []
    if "dataset_fingerprint" not in provenance:
        return ["recorded without a dataset fingerprint"]
    if provenance.get("dataset") not in (None, expected.dataset):
        out.append(
            f"measured on dataset {provenance.get('dataset')!r}, the job reads {expected.dataset!r}"
        )
    if provenance["dataset_fingerprint"] != expected.dataset_fingerprint:
        out.append(
            f"measured on other data (fingerprint {str(provenance['dataset_fingerprint'])[:12]}, "
            f"now {expected.dataset_fingerprint[:12]})"
        )
    if provenance.get("dataset_items") != expected.dataset_items:
        out.append(
            f"measured on {provenance.get('dataset_items')} items, the dataset now has "
            f"{expected.dataset_items}"
        )
    if provenance.get("dataset_subset") != expected.dataset_subset:
        stored, now = provenance.get("dataset_subset"), expected.dataset_subset
        out.append(
            "measured on "
            + (
                f"a declared subset of {stored.get('size')} images"
                if isinstance(stored, dict)
                else "the whole dataset"
            )
            + ", the job reads "
            + (
                f"a declared subset of {now['size']} images (seed {now['seed']})"
                if now
                else "the whole dataset"
            )
        )
    if bool(provenance.get("dataset_mini")) != expected.dataset_mini:
        out.append(
            "measured on generated mini data"
            if provenance.get("dataset_mini")
            else "measured on full data, the configured dataset is now a mini copy"
        )
    if expected.model_weights_sha256 is not None:
        stored = provenance.get("model_weights_sha256")
        if stored is None:
            out.append("recorded without the weights hash")
        elif stored != expected.model_weights_sha256:
            out.append(
                f"measured with other weights (sha256 {stored[:12]}, now "
                f"{expected.model_weights_sha256[:12]})"
            )
    return out

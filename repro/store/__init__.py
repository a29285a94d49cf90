"""Measurement store: one file per (model x measurement) job, written atomically, with provenance.

The store is exported as a tidy table or in the paper's wide column layout.

``Store`` (files), ``JobRecord`` / ``ColumnValue`` (record), ``wide_table`` / ``tidy_rows``
(export).
"""

from repro.store.files import JobLock, Store
from repro.store.record import ColumnValue, JobRecord

__all__ = ["ColumnValue", "JobLock", "JobRecord", "Store"]

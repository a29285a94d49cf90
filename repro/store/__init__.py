"""Measurement store: one file per (model x measurement) job, written atomically, with provenance; exported as a tidy table or in the paper's wide column layout."""

"""Slow, literal per-image NumPy references (oracles) for the batched torch probes. Written
from METHODS.md section 3 and the study's code, not from repro's implementation."""

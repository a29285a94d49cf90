"""Generalization benchmarks (torch): per-image predictions on ImageNet and its variants, and PGD.

The classification benchmarks and L-inf PGD return counts and per-image prediction records; the
scoring lives in repro.scoring."""

"""Generalization benchmarks (torch): per-image predictions on ImageNet and its variants, and L-inf
PGD. They return counts and per-image prediction records; the scoring lives in repro.scoring."""

"""Scoring: pure functions from decisions, predictions or counts to the published quantities.

NumPy/SciPy, no torch: shape bias, spectral ratios, critical-band fit, accuracies, ImageNet-X factor
error ratios."""

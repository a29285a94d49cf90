"""Scoring: pure NumPy/SciPy functions from decisions, predictions or counts to the published
quantities (shape bias, spectral ratios, critical-band fit, accuracies, ImageNet-X factor error
ratios). No torch."""

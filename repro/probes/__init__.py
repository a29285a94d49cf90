"""Bias probes (torch, device-agnostic, batched): shape bias, spectral filtering, critical band.

Shape bias on cue-conflict images, spectral (low/high-pass) filtering, critical-band noise. They
return counts (ProbeResult); the maths lives in repro.scoring."""

"""Planner: what a run will cost before it starts, and what it may leave out.

Below the runner, which uses its cost model to time jobs; nothing here runs a job.

``cost`` (each measurement's forward and backward passes, the H200 rates and their sources),
``execution_plan`` (the study's device hours per order and precision: model-major or
data-major, float32 or bfloat16, the crop cache), ``plan_guide`` (the plan's reading aid),
``subset_plan`` (the smallest image subset per measurement that keeps every verdict at a
stated confidence), ``throughput`` and ``throughput_data_major`` (measured images per second
on this machine), ``autotune`` (the batch size per model and device), ``decode_rate`` (JPEG
decoding and preprocessing per second on this machine), ``pgd_deviation`` (PGD's early-stop
rule against the study's final-point rule, measured on real models: the passes the plan counts
for it). Importing this package does not import torch.
"""

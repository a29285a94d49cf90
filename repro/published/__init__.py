"""Published reference data: where it lives, how it is fetched and verified, how it is read.

Stage: input of the analysis. The files are never copied into the repository; they are
read from the data directory (``repro.base.settings.data_dir``).
"""

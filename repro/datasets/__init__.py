"""Datasets: readers for local dataset roots, validated layouts, the decode-once crop cache,
and generated miniature copies. Probes consume ``ImageSource`` objects (see ``base``)."""

"""Data sets: seeded synthetic generators (:mod:`.synthetic`) and loaders for the published data
sets of the paper's experiments (:mod:`.published`)."""

"""conflictlab: how language models resolve conflicting evidence (ContextConflict and related benchmarks).

Packages: ``lm`` (the model layer), ``contextconflict``, ``arbitration`` (one per
benchmark), ``report`` (tables and figures); ``io``, ``stats``, ``logs`` and
``provenance`` at the top.
"""

"""The names of NQ-Swap's reference runs in its tables, apart from the generation code so that the table and
profile rules need no model library: the closed-book and the original-context answers beside greedy reading
of the substituted context (``conflictlab.lm.methods.GREEDY``)."""

CLOSED_BOOK, ORIGINAL = "closed_book", "original"


def original_run(method: str) -> str:
    """The run of a contrastive ``method`` (CAD, AdaCAD) on the original context against the closed-book prompt
    (config ``nq_swap.original_methods``): the NQ column of CAD's Table 3, beside greedy reading's ``original``."""
    return f"{ORIGINAL}-{method}"


def is_reference(run: str) -> bool:
    """Whether ``run`` answers with no substituted context: a setting the methods are not ranked against."""
    return run in (CLOSED_BOOK, ORIGINAL) or run.startswith(f"{ORIGINAL}-")

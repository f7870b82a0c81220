"""The names of NQ-Swap's reference runs in its tables, apart from the generation code so that the table and
profile rules need no model library: the closed-book and the original-context answers beside greedy reading
of the substituted context (``conflictlab.lm.methods.GREEDY``)."""

CLOSED_BOOK, ORIGINAL = "closed_book", "original"

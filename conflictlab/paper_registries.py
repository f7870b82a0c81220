"""Every paper's registry (``conflictlab.<benchmark>.paper_numbers``: PAPER, NUMBERS, CLAIMS, EXCLUSIONS), in the
report's order. It imports every benchmark, so it stands above them; the reproduction scripts and tests read it."""

from conflictlab.arbitration import paper_numbers as arbitration
from conflictlab.conflictbank import paper_numbers as conflictbank
from conflictlab.conflicts import paper_numbers as conflicts
from conflictlab.contextconflict import paper_numbers as contextconflict

REGISTRIES = (contextconflict, conflicts, arbitration, conflictbank)

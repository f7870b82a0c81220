"""The six conflict types, their task families and their subsets (the release's folders)."""

from __future__ import annotations

from dataclasses import dataclass

ROOT_SUBSET = "root"


@dataclass(frozen=True)
class Subset:
    conflict_type: str
    name: str
    implicit: bool

    @property
    def folder(self) -> str:
        base = f"{self.conflict_type}_conflict"
        return base if self.name == ROOT_SUBSET else f"{base}/{self.name}"


TASK_FAMILY = {
    "inferential": "reasoning",
    "misinformation": "reasoning",
    "temporal": "reasoning",
    "ambiguity": "summarization",
    "granularity": "summarization",
    "perspective": "summarization",
}
CONFLICT_TYPES = tuple(TASK_FAMILY)

# Which subsets are implicit conflicts (need two or more inferential steps)
# follows the paper's Table 1 / issue #2.
SUBSETS: dict[str, tuple[Subset, ...]] = {
    "ambiguity": (Subset("ambiguity", ROOT_SUBSET, False),),
    "granularity": (
        Subset("granularity", "medical_qa", True),
        Subset("granularity", "ROAST-ABSA", False),
    ),
    "perspective": (
        Subset("perspective", "allsides", True),
        Subset("perspective", "perspectrum", False),
    ),
    "inferential": (
        Subset("inferential", "entailment_bank", False),
        Subset("inferential", "folio", True),
        Subset("inferential", "medical_qa", False),
    ),
    "misinformation": (
        Subset("misinformation", "cb_claim_evidence", False),
        Subset("misinformation", "sci_data", False),
    ),
    "temporal": (
        Subset("temporal", ROOT_SUBSET, True),
        Subset("temporal", "cb_claim_evidence_tmp", False),
    ),
}

# Files per subset in the full release (the listing that comes with the shared
# sample of the release, ../shared/contextconflict_sample/README.md): 5,770
# files, against the 5,781 samples the paper reports. Table 1 shows these
# beside the statistics of the data a run read.
RELEASE_FILES: dict[tuple[str, str], int] = {
    ("ambiguity", ROOT_SUBSET): 1000,
    ("temporal", ROOT_SUBSET): 62,
    ("temporal", "cb_claim_evidence_tmp"): 898,
    ("granularity", "medical_qa"): 75,
    ("granularity", "ROAST-ABSA"): 945,
    ("inferential", "entailment_bank"): 400,
    ("inferential", "folio"): 200,
    ("inferential", "medical_qa"): 176,
    ("misinformation", "cb_claim_evidence"): 632,
    ("misinformation", "sci_data"): 372,
    ("perspective", "allsides"): 500,
    ("perspective", "perspectrum"): 510,
}

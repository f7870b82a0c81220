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

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


@dataclass(frozen=True)
class BaseDataset:
    """One of the ten base datasets of the paper's Table 5 (Appendix B.1).

    The text copy of the paper lost Table 5's cells (domain, licence, usage);
    what is typed in here comes from the text that survives: the row order and
    references from Table 5's citation anchors, the subsets from §2.2 and the
    release's folders, construction and review from §2.2. ``licence_release``
    is the licence the dataset's own authors publish, only where this project
    read it (``licence_source`` says where); "" where it did not.
    """

    name: str
    reference: str  # as the paper's bibliography names it
    subsets: tuple[tuple[str, str], ...]  # (conflict type, subset) of SUBSETS
    construction: str
    review: str
    licence_release: str = ""
    licence_source: str = ""


_PRESERVED = "preserved original (§2.2, 'Curation of Remaining Datasets')"
_SPOT_CHECK = "10% sample reviewed (§2.2)"

# Table 5's rows, in the order of its citation anchors (AllSides, cited by
# none, sits in the gap between FOLIO and Perspectrum).
BASE_DATASETS: tuple[BaseDataset, ...] = (
    BaseDataset(
        "AmbigDocs",
        "Lee et al. (2024)",
        (("ambiguity", ROOT_SUBSET),),
        _PRESERVED,
        _SPOT_CHECK,
        "Apache-2.0",
        "huggingface.co/datasets/yoonsanglee/AmbigDocs (dataset card)",
    ),
    BaseDataset(
        "EntailmentBank",
        "Dalvi et al. (2021)",
        (("inferential", "entailment_bank"),),
        "semi-synthetic: one or two GPT-5 statements perturb the chain (§2.2)",
        "every instance double-annotated (§2.2)",
    ),
    BaseDataset(
        "NEJM-MedQA",
        "Savage et al. (2024)",
        (("inferential", "medical_qa"), ("granularity", "medical_qa")),
        "original question and reasoning chains kept as evidence; type from which chains are gold-correct (§2.2)",
        "not stated",
    ),
    BaseDataset(
        "FOLIO",
        "Han et al. (2024)",
        (("inferential", "folio"),),
        "semi-synthetic: one or two GPT-5 statements perturb the chain (§2.2)",
        "every instance double-annotated (§2.2)",
    ),
    BaseDataset("AllSides", "(no reference in the paper)", (("perspective", "allsides"),), _PRESERVED, _SPOT_CHECK),
    BaseDataset("Perspectrum", "Chen et al. (2019)", (("perspective", "perspectrum"),), _PRESERVED, _SPOT_CHECK),
    BaseDataset("ROAST-ABSA", "Chebolu et al. (2024)", (("granularity", "ROAST-ABSA"),), _PRESERVED, _SPOT_CHECK),
    BaseDataset(
        "SciFact",
        "Wadden et al. (2020)",
        (("misinformation", "sci_data"),),
        "semi-synthetic: GPT-5 conflicting evidence in the abstracts' style (§2.2)",
        "30% sample audited (§2.2)",
        "CC BY-NC 2.0",
        "huggingface.co/datasets/allenai/scifact (dataset card)",
    ),
    BaseDataset(
        "ConflictBank",
        "Su et al. (2024)",
        (("misinformation", "cb_claim_evidence"), ("temporal", "cb_claim_evidence_tmp")),
        "temporal: explicit timestamps attached to the evidence (§2.2); misinformation: not stated",
        "temporal: every instance double-annotated (§2.2)",
        "CC BY-SA 4.0",
        "authors' repository zhaochen0110/conflictbank (../shared/references/conflictbank.md)",
    ),
    # The temporal root folder's 62 files match CONFLICTS' 62 outdated-information
    # queries, and its samples are search results: our attribution, not the paper's.
    BaseDataset(
        "CONFLICTS",
        "Cattan et al. (2025)",
        (("temporal", ROOT_SUBSET),),
        _PRESERVED,
        _SPOT_CHECK,
        "Apache-2.0 (as reported)",
        "google-research-datasets/rag_conflicts (../shared/references/conflicts.md)",
    ),
)

"""NQ-Swap (entity-substitution knowledge conflicts): its descriptor (conflictlab.benchmarks)."""

from conflictlab.specs import Benchmark, Metric, ProfileSection

METRICS = ("em_sub", "em_org", "memorisation_ratio")
SOURCE = "results/tables/nq_swap.csv, benchmark = NQ-Swap; Clopper-Pearson 95% intervals"

BENCHMARK = Benchmark(
    name="nq_swap",
    title="NQ-Swap (substituted answers)",
    what="Short answers to Natural Questions whose passage names a substituted answer: exact match with the "
    "substituted and the original answer, and the memorisation ratio, under greedy decoding and each method",
    models_key="nq_swap.models",
    rule_files=("rules/nq_swap.smk",),
    config_section="nq_swap",
    schema="schemas/nq_swap.schema.yaml",
    paper="nq_swap",
    claims="conflictlab.nq_swap.claims:CLAIMS",
    profile_cells="conflictlab.nq_swap.profile:cells",
    profile_tables=("nq_swap",),
    profile_sections=(
        ProfileSection("settings", "Closed-book, original and substituted context (greedy)", SOURCE, METRICS),
        ProfileSection(
            "methods",
            "Resolution methods on the substituted context",
            SOURCE + "; n of MR: items whose answer matches either answer",
            METRICS,
        ),
    ),
    headline=r"^(em_sub|mr)/greedy$",
    caps=(("", "nq_swap.max_items"),),
    docs="docs/benchmarks/nq_swap.md",
    needs=(
        ("nq_swap.models", "NQ-Swap under CAD and AdaCAD (a second pass's logits)", "logits"),
        ("nq_swap.models", "NQ-Swap's context-aware steering", "activations"),
    ),
    metrics=(
        Metric(
            "em_sub",
            "proportion",
            "proportion",
            "proportion",
            "higher",
            2,
            None,
            "NQ-Swap: SQuAD-normalised exact match with the substituted answer (faithful to the context)",
        ),
        Metric(
            "em_org",
            "proportion",
            "proportion",
            "proportion",
            "lower",
            2,
            None,
            "NQ-Swap: SQuAD-normalised exact match with the original answer (the memorised one)",
        ),
        Metric(
            "memorisation_ratio",
            "proportion",
            "proportion",
            "proportion",
            "lower",
            2,
            None,
            "NQ-Swap: EM_org / (EM_org + EM_sub) over the items whose answer matches either (Longpre et al. 2021)",
        ),
    ),
)

"""ContextConflict, the core study: its descriptor (conflictlab.benchmarks)."""

from conflictlab.specs import Benchmark, ProfileSection

BENCHMARK = Benchmark(
    name="contextconflict",
    title="ContextConflict",
    what="Reasoning accuracy, Balance of evidence use and RAGAS Faithfulness of the generated responses",
    models_key="generators",
    model_lists=("generators", "scorers", "mechanistic.models", "steering.models"),
    rule_files=(
        "rules/data.smk",
        "rules/generate.smk",
        "rules/metrics.smk",
        "rules/shapley.smk",
        "rules/mechanistic.smk",
        "rules/steering.smk",
        "rules/contextconflict.smk",  # registers the results of the files above and its judged tables (judges.smk)
    ),
    judged=True,
    paper="contextconflict",
    claims="conflictlab.contextconflict.claims:CLAIMS",
    paper_config="config/paper-contextconflict.yaml",
    profile_cells="conflictlab.report.profile:contextconflict_cells",
    profile_tables=("accuracy", "balance", "faithfulness"),
    profile_sections=(
        ProfileSection(
            "accuracy",
            "Accuracy by reasoning type",
            "results/tables/accuracy.csv, rows level = type; Clopper-Pearson 95% interval",
            metrics=("accuracy",),
        ),
        ProfileSection(
            "balance",
            "Balance by summarization type (0 = even use of the evidence, 100 = one piece)",
            "results/tables/balance.csv, rows group = all, per scorer; mean over the n defined samples, "
            "Student-t 95% interval",
            metrics=("balance",),
        ),
        ProfileSection(
            "faithfulness",
            "Faithfulness by type (judged responses)",
            "results/tables/faithfulness.csv; mean RAGAS score over the n = n_scored scored responses, "
            "Student-t 95% interval",
            metrics=("faithfulness",),
        ),
    ),
    headline=r"^accuracy/",
    caps=(("faithfulness", "judges.faithfulness_max_per_type"), ("", "data.max_per_subset")),
    docs="docs/benchmarks/contextconflict.md",
)

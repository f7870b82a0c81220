"""CONFLICTS ("DRAGged into Conflicts"): its descriptor (conflictlab.benchmarks)."""

from conflictlab.specs import Benchmark, ProfileSection

BENCHMARK = Benchmark(
    name="conflicts",
    title="CONFLICTS",
    what="Task 1: predicting the conflict type of a query's search results; "
    "Task 2: cited answers under four strategies",
    models_key="conflicts.models",
    rule_files=("rules/conflicts.smk",),
    judged=True,
    paper="conflicts",
    claims="conflictlab.conflicts.claims:CLAIMS",
    paper_config="config/paper-conflicts.yaml",
    profile_cells="conflictlab.report.profile:conflicts_cells",
    profile_tables=("conflicts_table4", "conflicts_table5", "conflicts_table6"),
    profile_sections=(
        ProfileSection(
            "task1",
            "Task 1: conflict-type prediction",
            "results/tables/conflicts_table4.csv, rows source = this run; Clopper-Pearson 95% interval",
            metrics=("type_accuracy",),
        ),
        ProfileSection(
            "task2",
            "Task 2: expected behaviour and answer recall per strategy",
            "results/tables/conflicts_table5.csv, rows source = this run; Clopper-Pearson 95% intervals; "
            "n = n_behaviour, n_recall",
            metrics=(
                "expected_behaviour",
                "answer_recall",
            ),
        ),
        ProfileSection(
            "categories",
            "Task 2: expected behaviour by category and strategy",
            "results/tables/conflicts_table6.csv, rows source = this run; Clopper-Pearson 95% interval; "
            "n = n_<strategy>",
            metrics=("expected_behaviour",),
        ),
    ),
    headline=r"^(task1|behaviour/)",
    caps=(("", "conflicts.max_per_category"),),
    docs="docs/benchmarks/conflicts.md",
)

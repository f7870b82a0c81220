"""Evidence arbitration between a text summary and a numeric series: its descriptor (conflictlab.benchmarks)."""

from conflictlab.specs import Benchmark, ProfileSection

BENCHMARK = Benchmark(
    name="arbitration",
    title="Evidence arbitration (text vs numbers)",
    what="A/B answers when a text summary and a numeric series (or a stale window, an unreliable source, a tool) "
    "disagree",
    models_key="arbitration.models",
    rule_files=("rules/arbitration.smk",),
    paper="arbitration",
    claims="conflictlab.arbitration.claims:CLAIMS",
    paper_config="config/paper-arbitration.yaml",
    profile_cells="conflictlab.report.profile:arbitration_cells",
    profile_tables=("arbitration_orders",),
    profile_sections=(
        ProfileSection(
            "modality",
            "Text vs numbers (modality setting, the two disagree)",
            "results/tables/arbitration_orders.csv, setting = modality; per instance the mean of its two evidence "
            "orders; Clopper-Pearson 95% interval over instances",
            metrics=(
                "arbitration_accuracy",
                "follows_numbers",
            ),
        ),
        ProfileSection(
            "settings",
            "Accuracy under conflict by setting",
            "results/tables/arbitration_orders.csv, rows aligned_source = all; per instance the mean of its two "
            "evidence orders; Clopper-Pearson 95% interval over instances",
            metrics=("arbitration_accuracy",),
        ),
    ),
    headline=r"^modality/",
    # synthetic instances, sized by their own keys: no sampling cap
    caps=(("", None),),
    docs="docs/benchmarks/arbitration.md",
)

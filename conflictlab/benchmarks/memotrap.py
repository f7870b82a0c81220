"""MemoTrap (Inverse Scaling Prize; the knowledge-conflict task of CAD): its descriptor (conflictlab.benchmarks)."""

from conflictlab.specs import Benchmark, Metric, ProfileSection

BENCHMARK = Benchmark(
    name="memotrap",
    title="MemoTrap",
    what="Whether the instruction's ending beats the memorised one, by the classes' log-likelihood, "
    "under greedy reading, CAD and AdaCAD",
    models_key="memotrap.models",
    rule_files=("rules/memotrap.smk",),
    config_section="memotrap",
    schema="schemas/memotrap.schema.yaml",
    paper="memotrap",
    claims="conflictlab.memotrap.claims:CLAIMS",
    profile_cells="conflictlab.memotrap.profile:cells",
    profile_tables=("memotrap_accuracy",),
    profile_sections=(
        ProfileSection(
            "accuracy",
            "Accuracy by log-likelihood of the classes (greedy reading)",
            "results/tables/memotrap_accuracy.csv, method = greedy; Clopper-Pearson 95% interval",
            metrics=("memotrap_accuracy",),
        ),
        ProfileSection(
            "methods",
            "CAD and AdaCAD (the instruction as the context), against greedy reading",
            "results/tables/memotrap_accuracy.csv, file = all; Clopper-Pearson 95% interval of each accuracy, "
            "Newcombe's paired interval of each difference (n = the paired prompts)",
            metrics=("memotrap_accuracy",),
        ),
    ),
    headline=r"^(accuracy/all|methods/[^/]+)$",
    caps=(("", None),),  # every row of the configured files is read
    docs="docs/benchmarks/memotrap.md",
    needs=(
        ("memotrap.models", "MemoTrap's class log-likelihoods", "loglikelihood"),
        ("memotrap.models", "MemoTrap under CAD and AdaCAD (a second pass's logits)", "logits"),
    ),
    metrics=(
        Metric(
            "memotrap_accuracy",
            unit="proportion",
            kind="proportion",
            interval="proportion",
            better="higher",
            min_n_interval=2,
            min_n_mark=None,
            description="share of MemoTrap prompts whose asked-for class has the highest summed log-likelihood",
        ),
    ),
)

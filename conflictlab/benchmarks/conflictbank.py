"""ConflictBank: its descriptor (conflictlab.benchmarks)."""

from conflictlab.specs import Benchmark, ProfileSection

BENCHMARK = Benchmark(
    name="conflictbank",
    title="ConflictBank",
    what="A-D answers with conflicting evidence: memorization ratio MR, original (OAR) and conflicting (CAR) "
    "answer rates",
    models_key="conflictbank.models",
    model_lists=("conflictbank.models", "conflictbank.embedded.models"),
    rule_files=("rules/conflictbank.smk",),
    paper="conflictbank",
    claims="conflictlab.conflictbank.claims:CLAIMS",
    paper_config="config/paper-conflictbank.yaml",
    profile_cells="conflictlab.report.profile:conflictbank_cells",
    profile_tables=("conflictbank_mr",),
    profile_sections=(
        ProfileSection(
            "kinds",
            "MR, OAR and CAR by conflict kind (conflicting evidence alone)",
            "results/tables/conflictbank_mr.csv, settings misinformation, temporal, semantic, on the scored subset; "
            "Clopper-Pearson 95% intervals, MR's over n = n_mr, OAR's and CAR's over n = n_scored",
            metrics=(
                "mr",
                "oar",
                "car",
            ),
        ),
    ),
    headline=r"/mr$",
    caps=(("", "conflictbank.max_per_relation"),),
    docs="docs/benchmarks/conflictbank.md",
)

# conflictlab: how LLMs resolve contextual knowledge conflicts (ContextConflict
# and related benchmarks). This file only loads the config and includes rules;
# helpers live in rules/common.smk, logic in the conflictlab package.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "schemas/config.schema.yaml")


report: "report/workflow.rst"


include: "rules/common.smk"


wildcard_constraints:
    conflict_type=f"({'|'.join(CONFLICT_TYPES)})(-shuffled)?",
    model=f"[A-Za-z0-9][A-Za-z0-9._-]*(@({VARIANT_PATTERN}))?",
    ratio=r"\d+-\d+",


include: "rules/data.smk"
include: "rules/models.smk"
include: "rules/generate.smk"
include: "rules/metrics.smk"
include: "rules/shapley.smk"
include: "rules/arbitration.smk"
include: "rules/mechanistic.smk"
include: "rules/steering.smk"
include: "rules/conflictbank.smk"
include: "rules/conflicts.smk"
include: "rules/judges.smk"
include: "rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True

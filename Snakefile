# conflictlab: how LLMs resolve contextual knowledge conflicts (ContextConflict
# and related benchmarks). This file only loads the config and includes rules;
# shared helpers live in rules/common.smk, each rule file owns its paths and
# input functions, logic lives in the conflictlab package.

from snakemake.utils import min_version, validate

from conflictlab.conflictbank.ratio import MixtureRatio
from conflictlab.contextconflict.conflict_types import CONFLICT_TYPES
from conflictlab.contextconflict.variants import RESPONDER_PATTERN

min_version("9.0")


configfile: "config.yaml"


validate(config, "schemas/config.schema.yaml")


report: "report/workflow.rst"


include: "rules/common.smk"


# Values that travel through file names are spelled by their types
# (conflictlab.wildcards); the constraints are the types' patterns.
wildcard_constraints:
    conflict_type=f"({'|'.join(CONFLICT_TYPES)})(-shuffled)?",
    model=RESPONDER_PATTERN,
    ratio=MixtureRatio.PATTERN,


include: "rules/data.smk"
include: "rules/models.smk"
include: "rules/generate.smk"
include: "rules/metrics.smk"
include: "rules/shapley.smk"
include: "rules/arbitration.smk"
include: "rules/mechanistic.smk"
include: "rules/steering.smk"
include: "rules/methods.smk"  # after steering.smk (its test split and decoding settings) and shapley.smk (whose rule it reuses)
include: "rules/conflictbank.smk"
include: "rules/judges.smk"  # before conflicts.smk, whose judge job takes judges.smk's settings and cache
include: "rules/conflicts.smk"
include: "rules/profile.smk"  # after every benchmark's rule file (it reads their tables), before report.smk (which lists its pages)
include: "rules/reproduction.smk"  # after profile.smk (it reads the tables the profile reads), before report.smk
include: "rules/construction.smk"  # after judges.smk (its judge settings and cache), before report.smk (its outputs)
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        ALL_TARGETS,

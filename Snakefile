# conflictlab: how LLMs resolve contextual knowledge conflicts (ContextConflict
# and related benchmarks). This file only loads the config and includes rules;
# shared helpers live in rules/common.smk, each rule file owns its paths and
# input functions, logic lives in the conflictlab package.

from snakemake.utils import min_version, validate

from conflictlab import benchmarks

from conflictlab.conflictbank.ratio import MixtureRatio
from conflictlab.contextconflict.conflict_types import CONFLICT_TYPES
from conflictlab.contextconflict.variants import RESPONDER_PATTERN

min_version("9.0")


configfile: "config.yaml"


# The main schema validates every key but the sections of the benchmarks that
# ship a schema fragment of their own (conflictlab.benchmarks); each fragment
# validates its section.
_own_sections = {b.config_section for b in benchmarks.REGISTRY if b.schema}
_main = {key: value for key, value in config.items() if key not in _own_sections}
validate(_main, "schemas/config.schema.yaml")
config.update(_main)
for _benchmark in benchmarks.REGISTRY:
    if _benchmark.schema:
        validate(config.setdefault(_benchmark.config_section, {}), _benchmark.schema)

# The benchmarks config's `benchmarks:` list chooses (default: all), in registry
# order; an unknown name stops the run here, naming the valid ones.
SELECTED = benchmarks.selected_names(config)


report: "report/workflow.rst"


include: "rules/common.smk"


# Values that travel through file names are spelled by their types
# (conflictlab.wildcards); the constraints are the types' patterns.
wildcard_constraints:
    conflict_type=f"({'|'.join(CONFLICT_TYPES)})(-shuffled)?",
    model=RESPONDER_PATTERN,
    ratio=MixtureRatio.PATTERN,


include: "rules/benchmark_records.smk"  # how often a job's benchmark record samples it
include: "rules/benchmarks.smk"  # the registry's view: SELECTED, register_results
include: "rules/models.smk"
include: "rules/judges.smk"  # before the benchmarks: a benchmark's judge job takes its settings and cache


# Every registered benchmark's rule files, in registry order (conflictlab.benchmarks);
# config's `benchmarks:` list picks which of them the targets collect.
for _benchmark in benchmarks.REGISTRY:
    for _rule_file in _benchmark.rule_files:

        include: _rule_file


include: "rules/methods.smk"  # every method on each benchmark that runs; after steering.smk and shapley.smk
include: "rules/profile.smk"  # after every benchmark's rule file (it reads their tables), before report.smk (which lists its pages)
include: "rules/reproduction.smk"  # after profile.smk (it reads the tables the profile reads), before report.smk
include: "rules/validate_data.smk"  # the data check: every selected benchmark's validator (conflictlab.validate_data)
include: "rules/construction.smk"  # after judges.smk (its judge settings and cache), before report.smk (its outputs)
include: "rules/report.smk"
include: "rules/hooks.smk"  # when the run ends: its scheduler's pending timers cancelled


rule all:
    default_target: True
    input:
        ALL_TARGETS,

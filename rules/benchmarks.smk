# The benchmark registry (conflictlab.benchmarks) as the rule files see it:
# which benchmarks this config runs, and what each one's rule files hand to
# the default target, the HTML report, the profile and the reproduction report.

from conflictlab import benchmarks

# Every registered benchmark's rule files are included (the Snakefile), so that
# any of its outputs can be asked for by name; SELECTED (the Snakefile, from
# config's `benchmarks:` list) decides which of them the default target and
# the report pages collect.

# Every path of an outputs mapping (list values flattened).
flatten = lambda outputs: [
    path for value in outputs.values() for path in (value if isinstance(value, list) else [value])
]

# What each benchmark's rule files register (conflictlab.benchmarks.Results), by benchmark name.
BENCHMARK_RESULTS = benchmarks.Results()
BENCHMARK_OUTPUTS = BENCHMARK_RESULTS.outputs
BENCHMARK_TABLES = BENCHMARK_RESULTS.tables
BENCHMARK_USAGE = BENCHMARK_RESULTS.usage
# register_results(name, *, outputs=(), tables=None, usage=()): what benchmark `name`'s rule files make under
# this config, for the collectors that read the selected benchmarks (rules/report.smk, rules/profile.smk,
# rules/reproduction.smk): `outputs`, the paths the default target and the HTML report collect; `tables`,
# {CSV stem: path} of the tables the profile (its descriptor's profile_tables) and the paper rows
# (Ours.table) read; `usage`, the endpoint usage files of its jobs (the usage table). Each call adds.
register_results = BENCHMARK_RESULTS.register

# Whether benchmark `name` runs under this config: selected, with a model in its model list.
runs = lambda name: name in SELECTED and bool(run_config.lookup(config, benchmarks.BY_NAME[name].models_key))
# Whether the conflict-resolution methods run on benchmark `name` (rules/methods.smk): where it runs.
methods_run_on = lambda name: bool(config["methods"]["models"]) and runs(name)
# The outputs every selected benchmark registered, in registry order, and {stem: path} of their tables.
selected_outputs = lambda: [path for name in SELECTED for path in BENCHMARK_OUTPUTS[name]]
selected_tables = lambda: {stem: path for name in SELECTED for stem, path in BENCHMARK_TABLES[name].items()}

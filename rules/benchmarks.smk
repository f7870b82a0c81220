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

# What each benchmark's rule files register (register_results), by benchmark name.
BENCHMARK_OUTPUTS = {name: [] for name in benchmarks.NAMES}
BENCHMARK_TABLES = {name: {} for name in benchmarks.NAMES}
BENCHMARK_USAGE = {name: [] for name in benchmarks.NAMES}


def runs(name):
    """Whether benchmark ``name`` runs under this config: selected, with a model in its model list."""
    return name in SELECTED and bool(run_config.lookup(config, benchmarks.BY_NAME[name].models_key))


def register_results(name, *, outputs=(), tables=None, usage=()):
    """What benchmark ``name``'s rule files make under this config, for the
    collectors that read the selected benchmarks (rules/report.smk,
    rules/profile.smk, rules/reproduction.smk): ``outputs``, the paths the
    default target and the HTML report collect; ``tables``, ``{stem: CSV
    path}`` of the result tables the profile (its descriptor's
    profile_tables) and the paper rows (``Ours.table``) read; ``usage``, the
    endpoint usage files of its jobs (rules/report.smk's usage table). A rule
    file may call it more than once; each call adds."""
    if name not in BENCHMARK_OUTPUTS:
        raise ValueError(f"register_results: {name!r} is not a registered benchmark ({', '.join(benchmarks.NAMES)})")
    BENCHMARK_OUTPUTS[name].extend(outputs)
    BENCHMARK_TABLES[name].update(tables or {})
    BENCHMARK_USAGE[name].extend(usage)


def methods_run_on(name):
    """Whether the conflict-resolution methods run on benchmark ``name`` (rules/methods.smk): where it runs."""
    return bool(config["methods"]["models"]) and runs(name)


def selected_outputs():
    """The outputs every selected benchmark registered, in registry order."""
    return [path for name in SELECTED for path in BENCHMARK_OUTPUTS[name]]


def selected_tables():
    """``{stem: path}`` of the tables every selected benchmark registered."""
    return {stem: path for name in SELECTED for stem, path in BENCHMARK_TABLES[name].items()}

"""The benchmark registry (conflictlab.benchmarks) and the metric registry (conflictlab.metrics):
every registered benchmark brings the files its descriptor names, config's `benchmarks:` list picks
which run (an unknown name refused before any job), and a selected benchmark plans only its own
rules and the shared ones."""

import re

import jsonschema
import numpy as np
import pytest
import yaml

from conflictlab import benchmarks, metrics, stats
from conflictlab.paper_registries import BY_BENCHMARK, resolve
from conflictlab.provenance import import_closure
from conflictlab.report.paper_data import paper_file
from conflictlab.run_config import lookup

from .conftest import REPO, snakemake_cmd

REGISTRY = benchmarks.REGISTRY
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text())
NAV = (REPO / "mkdocs.yml").read_text()


def rules_in(path) -> set[str]:
    """The rules a rule file defines."""
    text = (REPO / path).read_text()
    return set(
        re.findall(r"^(?:rule|checkpoint) (\w+):", text, re.M) + re.findall(r"^use rule \w+ as (\w+)", text, re.M)
    )


# Rules of the files no benchmark owns (models, judges, methods, profile, reproduction, report, construction).
OWNED = {path for b in REGISTRY for path in b.rule_files}
SHARED_RULES = rules_in("Snakefile").union(
    *(rules_in(p.relative_to(REPO)) for p in (REPO / "rules").glob("*.smk") if str(p.relative_to(REPO)) not in OWNED)
)


@pytest.mark.parametrize("bench", REGISTRY, ids=lambda b: b.name)
def test_a_descriptor_names_files_and_keys_that_exist(bench):
    for path in (*bench.rule_files, bench.schema, bench.docs, bench.paper_config):
        assert path is None or (REPO / path).is_file(), f"{bench.name}: {path} does not exist"
    assert (REPO / "conflictlab" / bench.name / "__init__.py").is_file(), "a benchmark's package is its name"
    assert f"benchmarks/{bench.name}.md" in NAV or bench.docs is None
    for key in bench.all_model_lists:
        assert isinstance(lookup(CONFIG, key), list), key
    for _, key in bench.caps:
        assert key is None or lookup(CONFIG, key) is None or isinstance(lookup(CONFIG, key), int), key
    if bench.paper:
        assert BY_BENCHMARK[bench.name].paper.key == bench.name
        assert paper_file(bench.paper).is_file() and bench.claims and resolve(bench.claims)
    assert callable(resolve(bench.profile_cells)) if bench.profile_cells else not bench.profile_tables
    sections = [s.key for s in bench.profile_sections]
    assert len(sections) == len(set(sections))
    assert all(m in metrics.with_benchmarks(REGISTRY) for s in bench.profile_sections for m in s.metrics)
    re.compile(bench.headline or "")
    assert rules_in(bench.rule_files[0]), f"{bench.rule_files[0]} defines no rule"


@pytest.mark.parametrize("bench", REGISTRY, ids=lambda b: b.name)
def test_one_schema_validates_a_benchmarks_section_and_describes_every_key(bench):
    """Its own fragment (which then describes every key), or the main schema (the four first benchmarks)."""
    main = yaml.safe_load((REPO / "schemas/config.schema.yaml").read_text())
    if not bench.schema:
        assert bench.config_section is None or bench.config_section in main["properties"]
        return
    fragment = yaml.safe_load((REPO / bench.schema).read_text())
    jsonschema.validate(CONFIG[bench.config_section], fragment)
    assert bench.config_section not in main["properties"], "a fragment's section stays out of the main schema"

    def undescribed(schema, where):
        for key, sub in schema.get("properties", {}).items():
            if "description" not in sub:
                yield f"{where}.{key}"
            yield from undescribed(sub, f"{where}.{key}")

    assert list(undescribed(fragment, bench.config_section)) == []


def test_the_default_config_runs_every_registered_benchmark_in_registry_order():
    assert CONFIG["benchmarks"] == list(benchmarks.NAMES)
    assert benchmarks.selected_names({}) == list(benchmarks.NAMES)
    assert benchmarks.selected_names({"benchmarks": ["conflictbank", "conflicts"]}) == ["conflicts", "conflictbank"]


@pytest.mark.parametrize("chosen", [["conflicts", "nq-swap"], ["conflicts", "conflicts"], [], "conflicts"])
def test_a_bad_benchmarks_list_is_refused_naming_the_valid_names(chosen):
    with pytest.raises(ValueError, match="benchmarks") as error:
        benchmarks.selected_names({"benchmarks": chosen})
    if chosen == ["conflicts", "nq-swap"]:
        assert "'nq-swap'" in str(error.value) and all(name in str(error.value) for name in benchmarks.NAMES)


def test_a_deselected_benchmark_has_no_models_to_run():
    from conflictlab.run_config import model_lists, used_models

    config = {**CONFIG, "benchmarks": ["arbitration"]}
    lists = model_lists(config)
    assert lists["arbitration.models"] == CONFIG["arbitration"]["models"]
    assert lists["generators"] == lists["conflicts.models"] == lists["conflictbank.models"] == []
    # arbitration calls no judge: the judge model is not prepared
    assert set(used_models(config)) == set(CONFIG["arbitration"]["models"]) | set(CONFIG["methods"]["models"])


def test_the_reproduction_scripts_hash_every_descriptor_and_the_claims_it_names():
    closure = {
        str(p.relative_to(REPO)) for p in import_closure(REPO / "workflow/scripts/reproduction.py", REPO).modules
    }
    for bench in REGISTRY:
        assert f"conflictlab/benchmarks/{bench.name}.py" in closure
        if bench.claims:
            assert bench.claims.partition(":")[0].replace(".", "/") + ".py" in closure
    # a table script reads the metric registry, not the benchmark registry: a new benchmark reruns none of it
    table = {
        str(p.relative_to(REPO)) for p in import_closure(REPO / "workflow/scripts/accuracy_table.py", REPO).modules
    }
    assert "conflictlab/metrics.py" in table
    assert not any(path.endswith("/claims.py") or path.startswith("conflictlab/benchmarks") for path in table)


def plan(tmp_path, text: str):
    overlay = tmp_path / "benchmarks.yaml"
    overlay.write_text(text)
    result = snakemake_cmd("-n", "--configfile", str(overlay), env={"PYTHONPATH": str(REPO)})
    return result, result.stdout + result.stderr


def planned_rules(output: str) -> set[str]:
    return set(re.findall(r"^(?:local)?rule (\w+):", output, re.M))


@pytest.mark.parametrize(
    "bench",
    [pytest.param(b, marks=[] if b.name == "conflicts" else [pytest.mark.slow]) for b in REGISTRY],
    ids=lambda b: b.name,
)
def test_one_selected_benchmark_plans_only_its_rules_and_the_shared_ones(tmp_path, bench):
    result, output = plan(tmp_path, f"benchmarks: [{bench.name}]\n")
    assert result.returncode == 0, output[-3000:]
    planned = planned_rules(output)
    own = set().union(*(rules_in(path) for path in bench.rule_files))
    assert planned & own, f"no rule of {bench.name} planned"
    assert planned <= own | SHARED_RULES, planned - own - SHARED_RULES
    others = [b.name for b in REGISTRY if b is not bench]
    # methods.smk is shared but names each benchmark's method rules after it
    assert not [r for r in planned if r.startswith(tuple(f"{name}_" for name in others))]


def test_an_unknown_benchmark_stops_the_run_before_any_job(tmp_path):
    result, output = plan(tmp_path, "benchmarks: [conflicts, nq_swapp]\n")
    assert result.returncode != 0
    assert "'nq_swapp', which is not a registered benchmark" in output
    assert f"the valid names are {', '.join(benchmarks.NAMES)}" in output
    assert not planned_rules(output)


# --------------------------------------------------------------------------
# The metric registry


@pytest.mark.parametrize("spec", list(metrics.with_benchmarks(REGISTRY).values()), ids=lambda m: m.name)
def test_a_metric_spec_names_an_interval_function_and_a_floor_that_fits_its_kind(spec):
    assert spec.interval in metrics.INTERVALS
    function = metrics.INTERVALS[spec.interval]
    assert function is None or function.__module__ in ("conflictlab.stats", "conflictlab.paired")
    assert spec.min_n_interval >= stats.MIN_N_INTERVAL
    if spec.interval == "mean":  # the Student-t interval covers >= 93.5% from MIN_N_MEAN on (tests/test_coverage.py)
        assert spec.min_n_interval >= stats.MIN_N_MEAN
    assert metrics.min_n_mark(spec, 30) == (None if spec.better == "none" else max(30, spec.min_n_mark or 0))


@pytest.mark.parametrize("name", ["accuracy", "balance", "arbitration_accuracy"])
def test_a_specs_interval_covers_its_nominal_level_at_the_n_it_is_first_printed(name):
    """At the spec's min_n_interval (30 for a mean, 2 for a proportion), 2,000 simulated samples
    with a known truth: the interval covers it at least 93% of the time."""
    spec = metrics.get(name)
    rng = np.random.default_rng(0)
    n, truth, hits = spec.min_n_interval, 0.3, 0
    for _ in range(2000):
        if spec.interval == "mean":
            values = rng.beta(1.5, 3.5, size=n)  # mean 0.3, skewed
        elif spec.interval == "unit-proportion":
            values = rng.binomial(2, truth, size=n) / 2  # an instance's two orders
        else:
            values = rng.binomial(1, truth, size=n)
        _, low, high = metrics.estimate(spec, values)
        hits += bool(low <= truth <= high)  # no interval (no spread) counts as a miss
    assert hits / 2000 >= 0.93


def test_the_methods_table_takes_interval_and_direction_from_the_spec():
    from conflictlab.report.methods import method_cell

    values = np.r_[np.ones(20), np.zeros(20)]
    kwargs = dict(model="m", method="base", benchmark="b", metric="x", values=values, sample_ids=range(40))
    as_accuracy = method_cell(**kwargs, spec=metrics.get("accuracy"))
    as_balance = method_cell(**kwargs, spec=metrics.get("balance"))
    assert (as_accuracy["interval"], as_accuracy["higher_is_better"]) == ("clopper-pearson", True)
    assert (as_balance["interval"], as_balance["higher_is_better"]) == ("student-t", False)
    assert (as_accuracy["ci_low"], as_accuracy["ci_high"]) == stats.clopper_pearson_interval(20, 40)[1:]
    assert (as_balance["ci_low"], as_balance["ci_high"]) == stats.mean_interval(values)[1:]

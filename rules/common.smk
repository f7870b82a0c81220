# Helpers shared by the rule files. Names imported from the library (defined
# once there), config subsets per rule, code hashes, and the target lists that
# the target `all` and the HTML report collect.

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from conflictlab.contextconflict.conflict_types import CONFLICT_TYPES, TASK_FAMILY
from conflictlab.contextconflict.dataset import released_files
from conflictlab.contextconflict.steering import (
    VARIANT_PATTERN,
    all_variants,
    parse_variant,
    table4_variants,
    variant_schedule,
)
from conflictlab.conflictbank.prompts import SETTINGS as CONFLICTBANK_SETTINGS
from conflictlab.provenance import code_hash as _code_hash

REPO = Path(workflow.basedir)
REASONING_TYPES = [t for t in config["conflict_types"] if TASK_FAMILY[t] == "reasoning"]
SUMMARIZATION_TYPES = [t for t in config["conflict_types"] if TASK_FAMILY[t] == "summarization"]
# The summarization types of the shuffle analysis (Tables 9-10), where it runs (with a scorer).
SHUFFLE_TYPES = [t for t in SUMMARIZATION_TYPES if config["shapley"].get("shuffle_types") is None or t in config["shapley"]["shuffle_types"]] if config["scorers"] else []
# What a generator answers: every configured type and the shuffled-evidence copies.
GENERATION_SUBSETS = config["conflict_types"] + [f"{t}-shuffled" for t in SHUFFLE_TYPES]


def code_hash(script):
    """Digest of every conflictlab module workflow/scripts/<script> imports,
    directly or transitively (conflictlab.provenance), so that an edit to any
    of them reruns the rule and an edit elsewhere does not."""
    return _code_hash(REPO / "workflow" / "scripts" / script, REPO)


def subset(mapping, *keys):
    """Only ``keys`` of a config mapping: a rule's params hold exactly the
    settings it reads, so editing another key reruns nothing."""
    return {key: mapping[key] for key in keys if key in mapping}


# Model jobs take half the cores (Snakemake sets OMP_NUM_THREADS, which torch
# follows), so two run side by side: their start-up (imports, model load) is
# single-threaded, and on the 2-core demo machine two 1-thread jobs finish the
# DAG sooner than one 2-thread job at a time.
# (A function, so that commands without --cores, like --report, still parse.)
def torch_threads(wildcards):
    return max(1, workflow.cores // 2)


def generation_threads(wildcards):
    """vLLM runs one engine per job with its own thread binding: give it every core."""
    return workflow.cores if config["generation"]["backend"] == "vllm" else torch_threads(wildcards)


# The model jobs at the head of the DAG's longest chains (responses -> Shapley
# scoring -> Balance, Table 3, Table 4; CONFLICTS responses -> judge) and the
# seconds-long data jobs that feed them start first; the other model jobs, whose
# descendants are short report jobs, then fill the cores behind them instead of
# leaving one long job running alone at the end. Without it the six data jobs
# waited behind two ConflictBank jobs and generation started 2 minutes late.
CHAIN_HEAD_PRIORITY = 1


GPU_FOR_GENERATION = 1 if config["generation"]["backend"] == "vllm" else 0


BACKEND_KEYS = {"hf": ("batch_size",), "vllm": ("tensor_parallel_size", "vllm"), "openai": ("endpoint",)}


def generation_params():
    """The generation settings the chosen backend reads."""
    generation = config["generation"]
    common = ("backend", "templates", "max_new_tokens", "max_model_len", "on_too_long", "seed", "shard_size", "dtype")
    return subset(generation, *common, *BACKEND_KEYS[generation["backend"]])


def conflicts_generation_params():
    """CONFLICTS answers through the `generation` backend, with its own reply length."""
    generation = config["generation"]
    own = subset(generation, "backend", "max_model_len", "seed", "dtype", *BACKEND_KEYS[generation["backend"]])
    return {**own, "max_new_tokens": config["conflicts"]["max_new_tokens"]}


def data_params(wildcards):
    """The data settings build_subset reads for the configured source.

    ``on_error`` is left out: on clean data both modes give the same bytes, so
    switching it must not rerun the DAG. It counts (as ``fail_on_rejections``)
    only when it would change the outcome: ``fail`` while this type's last
    build recorded rejections, which reruns the job so that it fails with
    the named error instead of keeping the rejections."""
    data = config["data"]
    source = ("root",) if data["source"] == "released" else ("hf_dataset", "hf_revision")
    params = subset(data, "source", *source, "max_per_subset", "seed")
    subsets = (data.get("subsets") or {}).get(wildcards.conflict_type)
    if subsets is not None:
        params["subsets"] = subsets
    rejected = Path(f"results/data/{wildcards.conflict_type}.rejected.parquet")
    has_rejections = rejected.is_file() and pq.read_metadata(rejected).num_rows > 0
    params["fail_on_rejections"] = data["on_error"] == "fail" and has_rejections
    return params


def reported(path, caption, category):
    """``path`` flagged for the HTML report, with report/<caption>.rst as caption."""
    return report(path, caption=f"../report/{caption}.rst", category=category)


def flagged(outputs, captions, category):
    """``outputs`` with the keys in ``captions`` flagged for the report (each
    path of a list value)."""

    def flag(key, value):
        if key not in captions:
            return value
        if isinstance(value, list):
            return [reported(p, captions[key], category) for p in value]
        return reported(value, captions[key], category)

    return {key: flag(key, value) for key, value in outputs.items()}


MODEL_LISTS = ("generators", "scorers")
SECTION_MODEL_LISTS = ("arbitration", "mechanistic", "steering", "conflictbank", "conflicts")


def used_models():
    """Every model a configured rule runs (each is prepared once)."""
    named = [m for key in MODEL_LISTS for m in config[key]]
    named += [m for section in SECTION_MODEL_LISTS for m in config[section]["models"]]
    named += config["conflictbank"]["models"] + config["conflictbank"]["embedded"]["models"]
    if judge_model():
        named.append(judge_model())
    return sorted(set(named))


def judge_model():
    """The registry model the judge runs (None for an endpoint judge)."""
    return None if config["judges"]["backend"] == "openai" else config["judges"]["model"]


def check_model_names():
    unknown = sorted(set(used_models()) - set(config["models"]))
    if unknown:
        lists = ", ".join(list(MODEL_LISTS) + [f"{s}.models" for s in SECTION_MODEL_LISTS] + ["conflictbank.embedded.models", "judges.model"])
        raise ValueError(f"config: models named in {lists} are missing from 'models': " + ", ".join(unknown))


check_model_names()


def model_config(wildcards):
    return config["models"][wildcards.model]


def model_dir(name):
    return f"resources/models/{name}"


def samples_path(model, conflict_type):
    """The samples a model's responses answer: a steered rerun (``name@variant``)
    answers the steering test split, everything else the whole subset."""
    if "@" in model:
        return f"results/steering/split/{conflict_type}.test.parquet"
    return f"results/data/{conflict_type}.parquet"


def subset_inputs(wildcards):
    """The sample files a build_subset job reads (none when reading the hub).
    Whatever else the folder holds, or cannot be read, the job itself reports."""
    if config["data"]["source"] != "released":
        return []
    subsets = (config["data"].get("subsets") or {}).get(wildcards.conflict_type)
    found = released_files(config["data"]["root"], wildcards.conflict_type, subsets=subsets)
    return [str(path) for files in found.files.values() for path in files]


def default_scorer():
    """The first configured scorer: the one the figures, Table 3 and the shuffle
    tables use (None without scorers; those targets are then not requested)."""
    return config["scorers"][0] if config["scorers"] else None


# --------------------------------------------------------------------------
# Output paths that more than one rule names (the producing rule and a
# collector), written once here.


def accuracy_outputs():
    return {"md": "results/tables/accuracy.md", "csv": "results/tables/accuracy.csv"}


def balance_outputs():
    generators = config["generators"]
    figures = lambda kind, ext: [f"results/figures/position_{kind}_{m}.{ext}" for m in generators]  # noqa: E731
    return {
        "balance_md": "results/tables/balance.md",
        "balance_csv": "results/tables/balance.csv",
        "table6_md": "results/tables/table6.md",
        "table6_csv": "results/tables/table6.csv",
        "agreement_md": "results/tables/table6_agreement.md",
        "agreement_csv": "results/tables/table6_agreement.csv",
        "positions": "results/tables/position_shares.csv",
        "bars_png": figures("bars", "png"),
        "bars_pdf": figures("bars", "pdf"),
        "pies_png": figures("pies", "png"),
        "pies_pdf": figures("pies", "pdf"),
    }


def table1_outputs():
    return {"table1_md": "results/tables/table1.md", "table1_csv": "results/tables/table1.csv"}


def table3_outputs():
    return {"table3_md": "results/tables/table3.md", "table3_csv": "results/tables/table3.csv"}


def shuffle_outputs(model):
    return {
        # The paper's Tables 9 and 10 are this table for its two generators.
        "presented_md": f"results/tables/shuffled_positions_{model}.md",
        "presented_csv": f"results/tables/shuffled_positions_{model}.csv",
        "original_md": f"results/tables/shuffled_original_pieces_{model}.md",
        "original_csv": f"results/tables/shuffled_original_pieces_{model}.csv",
    }


ARBITRATION_INSTANCE_KEYS = ("n_per_setting", "seeds", "domain", "answer_choices", "trajectory", "tool_min_distance", "sensitivity")


def arbitration_outputs():
    return {
        "fig4_png": "results/figures/arbitration_fig4.png",
        "fig4_pdf": "results/figures/arbitration_fig4.pdf",
        "accuracy_md": "results/tables/arbitration_accuracy.md",
        "accuracy_csv": "results/tables/arbitration_accuracy.csv",
        "sensitivity_md": "results/tables/arbitration_sensitivity.md",
        "sensitivity_csv": "results/tables/arbitration_sensitivity.csv",
    }


# --------------------------------------------------------------------------
# ConflictBank.


def conflictbank_data_params():
    data = config["conflictbank"]
    source = ("path",) if data["source"] == "local" else ("hf_dataset", "hf_revision")
    return subset(data, "source", *source, "max_per_relation", "seed", "on_error")


def conflictbank_inputs(wildcards):
    """The local file the records come from (none when reading the hub)."""
    return [config["conflictbank"]["path"]] if config["conflictbank"]["source"] == "local" else []


def conflictbank_settings():
    """The configured prompt settings (null: all, the authors' twelve and the reversed orders)."""
    return config["conflictbank"]["settings"] or [setting.name for setting in CONFLICTBANK_SETTINGS]


def conflictbank_embedded_options():
    return {**subset(config["conflictbank"], "batch_size", "dtype"), "settings": config["conflictbank"]["embedded"]["settings"]}


def embedded_runs():
    """(model, ratio wildcard, predictions path) of every embedded-knowledge run."""
    embedded = config["conflictbank"]["embedded"]
    return [
        (model, ratio.replace(":", "-"), f"results/conflictbank/embedded/{model}/ratio-{ratio.replace(':', '-')}.parquet")
        for model in embedded["models"]
        for ratio in embedded["ratios"]
    ]


def conflictbank_outputs():
    return {
        "table_md": "results/tables/conflictbank_mr.md",
        "table_csv": "results/tables/conflictbank_mr.csv",
        "figure_png": "results/figures/conflictbank_mr.png",
        "figure_pdf": "results/figures/conflictbank_mr.pdf",
        "embedded_md": "results/tables/conflictbank_embedded.md",
        "embedded_csv": "results/tables/conflictbank_embedded.csv",
        "embedded_png": "results/figures/conflictbank_embedded.png",
        "embedded_pdf": "results/figures/conflictbank_embedded.pdf",
    }


def conflicts_outputs():
    return {
        "table4_md": "results/tables/conflicts_table4.md",
        "table4_csv": "results/tables/conflicts_table4.csv",
        "table5_md": "results/tables/conflicts_table5.md",
        "table5_csv": "results/tables/conflicts_table5.csv",
        "table6_md": "results/tables/conflicts_table6.md",
        "table6_csv": "results/tables/conflicts_table6.csv",
        "confusion_png": "results/figures/conflicts_confusion.png",
        "confusion_pdf": "results/figures/conflicts_confusion.pdf",
    }


# --------------------------------------------------------------------------
# LLM judges.

JUDGE_CACHE = "results/judges/cache"


def judge_params(job):
    """What a judge job reads: the judge settings that change its replies,
    the cache folder, and where a served judge's server logs."""
    judges = config["judges"]
    own = {"hf": ("model", "dtype", "batch_size"), "vllm": ("model", "dtype", "max_model_len", "vllm"),
           "served": ("model", "dtype", "max_model_len", "vllm"), "openai": ("endpoint",)}
    return {
        "judge": subset(judges, "backend", *own[judges["backend"]]),
        "cache": JUDGE_CACHE,
        "server_log": f"results/logs/judges/{job}.server.log",
    }


def judge_inputs(wildcards=None):
    return {"judge_model": model_dir(judge_model())} if judge_model() else {}


def judge_label():
    judges = config["judges"]
    return judges["endpoint"]["model"] if judges["backend"] == "openai" else judges["model"]


def faithfulness_models():
    """Every responding model whose responses get a Faithfulness score: the
    generators and, for Table 4, every steered rerun."""
    return config["generators"] + [name for model in config["steering"]["models"] for name in steered_names(model)]


def response_inputs(models, conflict_types):
    """(samples, responses) path lists, one pair per (model, type), models outer."""
    pairs = [(m, t) for m in models for t in conflict_types]
    return {
        "samples": [samples_path(m, t) for m, t in pairs],
        "responses": [f"results/responses/{m}/{t}.parquet" for m, t in pairs],
    }


def answer_match_inputs(wildcards):
    """accuracy.free_text: judge - the judge's verdicts on the long free-text golds."""
    if config["accuracy"]["free_text"] != "judge":
        return {}
    return {"matches": f"results/judges/answer_match/{wildcards.model}.parquet"}


def judge_table_inputs(wildcards):
    inputs = {"faithfulness": "results/judges/faithfulness.parquet", "gold": "results/judges/gold.parquet"}
    if SUMMARIZATION_TYPES and default_scorer():
        inputs["ratings"] = "results/judges/ratings.parquet"
        inputs["attributions"] = [f"results/metrics/{m}/attributions_{default_scorer()}.parquet" for m in config["generators"]]
    return inputs


def judge_table_outputs():
    outputs = {
        "faithfulness_md": "results/tables/faithfulness.md",
        "faithfulness_csv": "results/tables/faithfulness.csv",
        "gold_md": "results/tables/judge_gold.md",
        "gold_csv": "results/tables/judge_gold.csv",
    }
    if SUMMARIZATION_TYPES and default_scorer():
        outputs |= {
            "table2_md": "results/tables/table2.md",
            "table2_csv": "results/tables/table2.csv",
            "table7_md": "results/tables/table7.md",
            "table7_csv": "results/tables/table7.csv",
        }
    return outputs


def activation_files(analysis, ext):
    return expand(
        "results/activations/{{model}}/{analysis}/{conflict_type}.{ext}",
        analysis=analysis,
        conflict_type=config["conflict_types"],
        ext=ext,
    )


def mechanistic_outputs(model):
    figure = lambda n, name, ext: f"results/figures/fig{n}_{name}_{model}.{ext}"  # noqa: E731
    return {
        "probes": f"results/mechanistic/{model}/probes.parquet",
        "spectral": f"results/mechanistic/{model}/spectral.parquet",
        "projection": f"results/mechanistic/{model}/projection.parquet",
        "table8_md": f"results/tables/table8_{model}.md",
        "table8_csv": f"results/tables/table8_{model}.csv",
        "fig2_png": figure(2, "probes", "png"),
        "fig2_pdf": figure(2, "probes", "pdf"),
        "fig3_png": figure(3, "projection", "png"),
        "fig3_pdf": figure(3, "projection", "pdf"),
        "fig4_png": figure(4, "spectral", "png"),
        "fig4_pdf": figure(4, "spectral", "pdf"),
    }


def table4_outputs():
    models = config["steering"]["models"]
    return {
        "table4_md": "results/tables/table4.md",
        "table4_tex": "results/tables/table4.tex",
        "table4_csv": "results/tables/table4.csv",
        "fig31_png": [f"results/figures/fig31_alpha_{m}.png" for m in models],
        "fig31_pdf": [f"results/figures/fig31_alpha_{m}.pdf" for m in models],
    }


def flatten(outputs):
    paths = []
    for value in outputs.values():
        paths += value if isinstance(value, list) else [value]
    return paths


# --------------------------------------------------------------------------
# Steering variants (names and parsing live in conflictlab.contextconflict.steering).


def steering_variants():
    return all_variants(config["steering"]["alpha"], config["steering"]["alpha_sweep"])


def steering_generation_params():
    """The generation settings of steered reruns: hf, with steering's length,
    batch size and precision."""
    steering = config["steering"]
    generation = subset(config["generation"], "templates", "max_model_len", "on_too_long", "seed", "shard_size")
    return {
        **generation,
        "backend": "hf",
        "max_new_tokens": steering["max_new_tokens"],
        "batch_size": steering["batch_size"],
        "dtype": steering["dtype"],
    }


def steered_names(model):
    return [f"{model}@{variant}" for variant in steering_variants()]


def steering_metric_inputs(wildcards=None):
    """Per steered rerun: accuracy summaries (reasoning), attributions under
    the default scorer (summarization), and the judged Faithfulness (all types)."""
    names = [name for model in config["steering"]["models"] for name in steered_names(model)]
    inputs = {"faithfulness": "results/judges/faithfulness.parquet"}
    if REASONING_TYPES:
        inputs["accuracy"] = [f"results/metrics/{name}/accuracy_summary.parquet" for name in names]
    if SUMMARIZATION_TYPES and default_scorer():
        inputs["attributions"] = [f"results/metrics/{name}/attributions_{default_scorer()}.parquet" for name in names]
    return inputs


# --------------------------------------------------------------------------
# What the target `all` and the HTML report collect, every result of the
# configured workflow, from the output helpers above.


def report_inputs():
    targets = expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"])
    targets += flatten(table1_outputs())
    targets += [model_dir(name) for name in used_models()]
    targets += expand(
        "results/responses/{model}/{conflict_type}.parquet",
        model=config["generators"],
        conflict_type=config["conflict_types"],
    )
    if REASONING_TYPES:
        targets += flatten(accuracy_outputs())
    if SHUFFLE_TYPES:
        targets += flatten(balance_outputs()) + flatten(table3_outputs())
        for model in config["generators"]:
            targets += flatten(shuffle_outputs(model))
    if config["arbitration"]["models"]:
        targets += flatten(arbitration_outputs())
    for model in config["mechanistic"]["models"]:
        targets += flatten(mechanistic_outputs(model))
    if config["steering"]["models"]:
        targets += flatten(table4_outputs())
    if config["conflictbank"]["models"]:
        targets += flatten(conflictbank_outputs())
    if config["conflicts"]["models"]:
        targets += flatten(conflicts_outputs())
    targets += flatten(judge_table_outputs())
    return targets


def all_targets():
    return report_inputs() + ["results/report.html"]

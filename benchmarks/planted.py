"""Planted model outputs for a scale working directory (benchmarks/scale.py
run --planted): read the DAG's pending jobs from a Snakemake dry run, write
each model job's outputs with the library's planters
(``conflictlab.{contextconflict,conflictbank,arbitration}.synthetic``) at the
paths the job would write (``conflictlab.conflicts.synthetic`` too), and
name the analysis jobs that can then run on them.

A model job is a job of a rule that needs a model folder
(``resources/models/...`` or a trained ``results/conflictbank/trained/...``),
except the reports that only read a folder's config (:data:`READS_MODEL_CONFIG`).
Those with a planter in :data:`PLANTERS` are planted (the judges'
planters in ``conflictlab.judges.synthetic``); the others (training) stay
pending, and so does every job downstream of one (``blocked``). The trained
folder blocks nothing: only conflictbank_embedded_evaluate reads it, and that
one is planted without it (:func:`required`). A planter never waits for a model folder; it waits for the
other inputs it reads (the steered reruns wait for the steering split and
directions, Faithfulness for every rerun's planted responses).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA as ARBITRATION_SCHEMA
from conflictlab.arbitration.synthetic import planted_method_predictions as arbitration_method_predictions
from conflictlab.arbitration.synthetic import planted_predictions as arbitration_predictions
from conflictlab.conflictbank.evaluation import PREDICTION_SCHEMA as CONFLICTBANK_SCHEMA
from conflictlab.conflictbank.prompts import SETTINGS as CONFLICTBANK_SETTINGS
from conflictlab.conflictbank.synthetic import planted_method_predictions as conflictbank_method_predictions
from conflictlab.conflictbank.synthetic import planted_predictions as conflictbank_predictions
from conflictlab.conflicts import synthetic as cf
from conflictlab.conflicts.gold import GOLD_KINDS as CONFLICTS_GOLD_KINDS
from conflictlab.conflicts.judging import JUDGED_SCHEMA as CONFLICTS_JUDGED_SCHEMA
from conflictlab.conflicts.responses import RESPONSE_SCHEMA as CONFLICTS_RESPONSE_SCHEMA
from conflictlab.conflicts.responses import TYPE_PREDICTION_SCHEMA
from conflictlab.contextconflict import synthetic as cc
from conflictlab.contextconflict.causal import CAUSAL_SCHEMA
from conflictlab.contextconflict.pairs import INDEX_SCHEMA
from conflictlab.contextconflict.scoring import SKIP_SCHEMA, VALUE_SCHEMA
from conflictlab.io import atomic_path, read_tables, write_parquet
from conflictlab.judges import synthetic as judges
from conflictlab.judges.faithfulness import FAITHFULNESS_SCHEMA
from conflictlab.judges.gold import GOLD_KINDS, GOLD_SCHEMA, read_gold
from conflictlab.judges.ratings import RATING_SCHEMA
from conflictlab.lm.endpoint import USAGE_SCHEMA
from conflictlab.lm.methods import GREEDY, MethodRun
from conflictlab.lm.shards import RESPONSE_SCHEMA

# Analysis rules with a model folder among their inputs: they read its
# config.json (ConflictBank's MR against model size; the report's model list), never run it.
READS_MODEL_CONFIG = {"conflictbank_report", "html_report", "all"}
MODEL_INPUT = re.compile(r"^(resources/models/|results/conflictbank/trained/)")

# The planted truth, one seed per rule (recorded in planted.json).
CORRECT_SHARE = 0.6
SUPPORTED_SHARE = 0.75
ADHERENCE_SHARE = 0.7
RECALL_SHARE = 0.8
GOLD_AGREEMENT = 0.8
EVEN_SHARE = 0.5  # of the rated samples, rated evenly (judge Balance 0); the rest 1


@dataclass
class Job:
    rule: str
    inputs: list[str]
    outputs: list[str]
    wildcards: dict[str, str] = field(default_factory=dict)


def parse_plan(text: str) -> list[Job]:
    """The jobs of a ``snakemake -n`` printout (its rule blocks)."""
    jobs = []
    for block in re.split(r"\n(?=\[[^\]]*\d{4}\]\n)", text):
        rule = re.search(r"^(?:local)?rule (\w+):", block, re.MULTILINE)
        if not rule:
            continue

        def listed(key: str, block: str = block) -> list[str]:
            found = re.search(rf"^    {key}: (.*)$", block, re.MULTILINE)
            return [re.sub(r" \(\w+\)$", "", item) for item in found.group(1).split(", ")] if found else []

        wildcards = dict(item.split("=", 1) for item in listed("wildcards"))
        jobs.append(Job(rule.group(1), listed("input"), listed("output"), wildcards))
    return jobs


def is_model_job(job: Job) -> bool:
    return job.rule not in READS_MODEL_CONFIG and any(MODEL_INPUT.match(path) for path in job.inputs)


def required(job: Job) -> list[str]:
    """The inputs a planter reads: never a model folder."""
    return [path for path in job.inputs if not MODEL_INPUT.match(path)]


def blocked_jobs(jobs: list[Job]) -> set[int]:
    """Indices of the jobs that cannot run without a model: unplanted model
    jobs and every job that needs an output of one (to a fixed point)."""
    blocked = {k for k, job in enumerate(jobs) if is_model_job(job) and job.rule not in PLANTERS}
    producer = {path: k for k, job in enumerate(jobs) for path in job.outputs}
    changed = True
    while changed:
        changed = False
        for k, job in enumerate(jobs):
            needs = required(job) if job.rule in PLANTERS else job.inputs
            if k not in blocked and any(producer.get(path) in blocked for path in needs):
                blocked.add(k)
                changed = True
    return blocked


# --------------------------------------------------------------------------
# One planter per model rule: (working directory, job, config) -> truth
# summary for planted.json. Paths are the job's own outputs.


def _usage(wd: Path, job: Job) -> None:
    """A local model's job asks no endpoint: its usage table has no rows."""
    for path in job.outputs:
        if path.startswith("results/usage/"):
            write_parquet(USAGE_SCHEMA.empty_table(), wd / path, USAGE_SCHEMA)


def _samples_for(job: Job, stem: str) -> str:
    """The job's samples file of one subset: results/data/<stem>.parquet, else
    its steering test split (what a steered or method rerun answers)."""
    if f"results/data/{stem}.parquet" in job.inputs:
        return f"results/data/{stem}.parquet"
    for path in job.inputs:
        if not path.startswith("results/responses/") and Path(path).name in (f"{stem}.parquet", f"{stem}.test.parquet"):
            return path
    raise KeyError(f"{job.rule}: no samples input for {stem}")


def _run_and_stem(path: str) -> str:
    """``model/stem`` of a per-type output: a steered or method rerun's
    folder (``tiny@cas-a1``) is the ``model`` its rows name."""
    return f"{Path(path).parent.name}/{Path(path).stem}"


def plant_generate(wd: Path, job: Job, config: dict) -> dict:
    """generate, steered_generate (every variant) and method_generate: each
    rerun's responses to its samples (the steering test split), right for CORRECT_SHARE."""
    truth = {}
    for path in job.outputs:
        if path.startswith("results/responses/"):
            stem = Path(path).stem
            responses, correct = cc.plant_responses(
                read_tables(wd / _samples_for(job, stem)),
                config["generation"]["templates"],
                model=Path(path).parent.name,
                correct_share=CORRECT_SHARE,
                seed=len(truth),
            )
            write_parquet(responses, wd / path, RESPONSE_SCHEMA)
            truth[_run_and_stem(path)] = {
                "n": responses.num_rows,
                "n_graded": int(correct.size),
                "n_correct": int(correct.sum()),
            }
    _usage(wd, job)
    return truth


def plant_shapley(wd: Path, job: Job, config: dict) -> dict:
    settings, truth = config["shapley"], {}
    for path in job.outputs:
        if path.endswith(".skipped.parquet"):
            continue
        stem, model = Path(path).stem, Path(path).parent.name
        samples = read_tables(wd / _samples_for(job, stem))
        responses = read_tables(wd / f"results/responses/{model}/{stem}.parquet")
        values, skipped, planted = cc.plant_values(
            samples,
            responses,
            scorer=job.wildcards["scorer"],
            seed=len(truth),
            exact_max_n=settings["exact_max_n"],
            n_permutations=settings["n_permutations"],
            shapley_seed=settings["seed"],
        )
        write_parquet(values, wd / path, VALUE_SCHEMA)
        write_parquet(skipped, wd / path.replace(".parquet", ".skipped.parquet"), SKIP_SCHEMA)
        truth[_run_and_stem(path)] = {
            "games": planted.num_rows,
            "mean_balance": float(np.mean(planted.column("balance").to_numpy())),
        }
    return truth


def plant_causal(wd: Path, job: Job, config: dict) -> dict:
    attributions = read_tables(wd / next(path for path in job.inputs if "/attributions_" in path))
    table = cc.plant_causal(attributions, model=job.wildcards["model"])
    write_parquet(table, wd / job.outputs[0], CAUSAL_SCHEMA)
    return {"rows": table.num_rows}


def plant_faithfulness(wd: Path, job: Job, config: dict) -> dict:
    parts = []
    for path in required(job):
        if path.startswith("results/responses/"):
            model, stem = Path(path).parent.name, Path(path).stem
            parts.append(
                cc.plant_faithfulness(
                    read_tables(wd / _samples_for(job, stem)),
                    read_tables(wd / path),
                    model=model,
                    judge=cc.PLANTED,
                    supported_share=SUPPORTED_SHARE,
                    seed=len(parts),
                )
            )
    table = pa.concat_tables(parts)
    write_parquet(table, wd / job.outputs[0], FAITHFULNESS_SCHEMA)
    _usage(wd, job)
    return {"rows": table.num_rows, "faithfulness": SUPPORTED_SHARE}


def plant_activations(wd: Path, job: Job, config: dict) -> dict:
    model_config = json.loads((wd / f"resources/models/{job.wildcards['model']}/config.json").read_text())
    settings, truth = config["mechanistic"], {}
    for k, conflict_type in enumerate(config["conflict_types"]):
        planted = cc.plant_activations(
            read_tables(wd / f"results/data/{conflict_type}.parquet"),
            config["generation"]["templates"],
            n_layers=model_config["num_hidden_layers"],
            hidden_size=model_config["hidden_size"],
            drop_last=settings["drop_last"],
            matched=settings["matched_templates"],
            seed=k,
        )
        for analysis, (states, index) in planted.items():
            base = f"results/activations/{job.wildcards['model']}/{analysis}/{conflict_type}"
            with atomic_path(wd / f"{base}.npy") as tmp:
                with open(tmp, "wb") as handle:
                    np.save(handle, states)
            write_parquet(index, wd / f"{base}.index.parquet", INDEX_SCHEMA)
        truth[conflict_type] = {analysis: list(states.shape) for analysis, (states, _) in planted.items()}
    return truth


def plant_conflictbank(wd: Path, job: Job, config: dict) -> dict:
    records = read_tables(wd / "results/conflictbank/data.parquet")
    if job.rule == "conflictbank_embedded_evaluate":
        settings, seed = config["conflictbank"]["embedded"]["settings"], 1 + sum(map(ord, job.wildcards["ratio"]))
    else:
        settings, seed = config["conflictbank"]["settings"] or [s.name for s in CONFLICTBANK_SETTINGS], 0
    table = conflictbank_predictions(records, settings, model=job.wildcards["model"], seed=seed)
    write_parquet(table, wd / job.outputs[0], CONFLICTBANK_SCHEMA)
    _usage(wd, job)
    return {"rows": table.num_rows, "settings": len(settings)}


def plant_arbitration(wd: Path, job: Job, config: dict) -> dict:
    instances = read_tables(
        [wd / "results/arbitration/instances.parquet", wd / "results/arbitration/sensitivity_instances.parquet"]
    )
    table = arbitration_predictions(instances, model=job.wildcards["model"], accuracy=CORRECT_SHARE)
    write_parquet(table, wd / job.outputs[0], ARBITRATION_SCHEMA)
    _usage(wd, job)
    return {"rows": table.num_rows, "accuracy": CORRECT_SHARE}


def _conflicts_queries(wd: Path) -> pa.Table:
    return read_tables(wd / "results/conflicts/data.parquet")


def plant_conflicts_respond(wd: Path, job: Job, config: dict) -> dict:
    queries, (types_path, responses_path, _) = _conflicts_queries(wd), job.outputs
    types = cf.plant_types(queries, model=job.wildcards["model"], accuracy=CORRECT_SHARE)
    responses = cf.plant_responses(
        queries, types, model=job.wildcards["model"], strategies=config["conflicts"]["strategies"], seed=1
    )
    write_parquet(types, wd / types_path, TYPE_PREDICTION_SCHEMA)
    write_parquet(responses, wd / responses_path, CONFLICTS_RESPONSE_SCHEMA)
    _usage(wd, job)
    return {"queries": queries.num_rows, "responses": responses.num_rows, "type_accuracy": CORRECT_SHARE}


def _method_runs(job: Job, config: dict) -> list[str]:
    """The run names of a methods rule's job: greedy first, then every
    configured method (rules/methods.smk, METHODS_WITH_GREEDY)."""
    return [
        MethodRun(job.wildcards["model"], method).format()
        for method in dict.fromkeys([GREEDY, *config["methods"]["list"]])
    ]


def plant_conflicts_methods(wd: Path, job: Job, config: dict) -> dict:
    runs, queries = _method_runs(job, config), _conflicts_queries(wd)
    table = pa.concat_tables(
        [cf.plant_responses(queries, None, model=run, strategies=("vanilla",), seed=k) for k, run in enumerate(runs)]
    )
    write_parquet(table, wd / job.outputs[0], CONFLICTS_RESPONSE_SCHEMA)
    return {"runs": len(runs), "responses": table.num_rows}


def plant_conflictbank_methods(wd: Path, job: Job, config: dict) -> dict:
    runs = _method_runs(job, config)
    table = conflictbank_method_predictions(read_tables(wd / "results/conflictbank/data.parquet"), runs, greedy=runs[0])
    write_parquet(table, wd / job.outputs[0], CONFLICTBANK_SCHEMA)
    return {"runs": len(runs), "rows": table.num_rows}


def plant_arbitration_methods(wd: Path, job: Job, config: dict) -> dict:
    runs = _method_runs(job, config)
    table = arbitration_method_predictions(
        read_tables(wd / "results/arbitration/instances.parquet"), runs, accuracy=CORRECT_SHARE
    )
    write_parquet(table, wd / job.outputs[0], ARBITRATION_SCHEMA)
    return {"runs": len(runs), "rows": table.num_rows, "accuracy": CORRECT_SHARE}


def plant_judge_gold(wd: Path, job: Job, config: dict) -> dict:
    kinds = {**GOLD_KINDS, **CONFLICTS_GOLD_KINDS}  # what rule judge_gold reads
    items = read_gold(wd / next(path for path in job.inputs if path.endswith(".jsonl")), kinds)
    table = judges.plant_gold(items, kinds=kinds, agreement=GOLD_AGREEMENT)
    write_parquet(table, wd / job.outputs[0], GOLD_SCHEMA)
    _usage(wd, job)
    return {"items": table.num_rows, "agreement": GOLD_AGREEMENT}


def plant_judge_ratings(wd: Path, job: Job, config: dict) -> dict:
    parts = []
    for path in required(job):
        if path.startswith("results/responses/"):
            table, _ = judges.plant_ratings(
                read_tables(wd / _samples_for(job, Path(path).stem)),
                read_tables(wd / path),
                model=Path(path).parent.name,
                even_share=EVEN_SHARE,
                seed=len(parts),
            )
            parts.append(table)
    table = pa.concat_tables(parts)
    write_parquet(table, wd / job.outputs[0], RATING_SCHEMA)
    _usage(wd, job)
    return {"rows": table.num_rows, "judge_balance": 1 - EVEN_SHARE}


def plant_conflicts_judge(wd: Path, job: Job, config: dict) -> dict:
    responses = read_tables(
        [wd / path for path in job.inputs if path.startswith("results/conflicts/") and "responses" in Path(path).name]
    )
    table = cf.plant_judged(
        _conflicts_queries(wd),
        responses,
        judge=cf.PLANTED,
        adherence=ADHERENCE_SHARE,
        recall=RECALL_SHARE,
        grounding=SUPPORTED_SHARE,
    )
    write_parquet(table, wd / job.outputs[0], CONFLICTS_JUDGED_SCHEMA)
    _usage(wd, job)
    return {"rows": table.num_rows, "adherence": ADHERENCE_SHARE, "recall": RECALL_SHARE, "grounding": SUPPORTED_SHARE}


PLANTERS = {
    "generate": plant_generate,
    "shapley_values": plant_shapley,
    "shapley_values_shuffled": plant_shapley,
    "steered_generate": plant_generate,
    "shapley_values_steered": plant_shapley,
    "method_generate": plant_generate,
    "shapley_values_method": plant_shapley,
    "shapley_values_reruns": plant_shapley,
    "causal_intervention": plant_causal,
    "judge_faithfulness": plant_faithfulness,
    "activations": plant_activations,
    "conflictbank_evaluate": plant_conflictbank,
    "conflictbank_embedded_evaluate": plant_conflictbank,
    "arbitration_evaluate": plant_arbitration,
    "conflicts_respond": plant_conflicts_respond,
    "conflicts_methods_respond": plant_conflicts_methods,
    "conflicts_judge": plant_conflicts_judge,
    "conflictbank_methods": plant_conflictbank_methods,
    "arbitration_methods": plant_arbitration_methods,
    "judge_gold": plant_judge_gold,
    "judge_ratings": plant_judge_ratings,
}


def plant_all(wd: Path, snakemake: list[str], config: dict, log) -> dict:
    """Plant every plantable model job of ``wd``'s DAG, in dependency order.

    ``snakemake``: the command line (without targets) that dry-runs the DAG.
    A model job waits until its required inputs exist; when none can be
    planted yet (causal_intervention reads the attributions), the analysis
    jobs producing the missing inputs run first. Returns {"planted": {rule:
    truth}, "analysis_rules": [...], "targets": [...], "blocked_rules": [...]}.
    """
    planted: dict[str, dict] = {}
    while True:
        plan = subprocess.run([*snakemake, "-n", "--rerun-triggers", "mtime"], capture_output=True, text=True, cwd=wd)
        if plan.returncode:
            raise RuntimeError(f"dry run failed:\n{plan.stderr[-3000:]}")
        jobs = parse_plan(plan.stdout + plan.stderr)
        blocked = blocked_jobs(jobs)
        pending = {path for job in jobs for path in job.outputs}
        # A planted job stays in the plan when its inputs include outputs of
        # jobs that are not planted (Faithfulness: the steered responses).
        todo = [
            job
            for k, job in enumerate(jobs)
            if job.rule in PLANTERS and k not in blocked and not all((wd / path).exists() for path in job.outputs)
        ]
        ready = [job for job in todo if not any(path in pending for path in required(job))]
        for job in ready:
            log(f"planting {job.rule} {job.wildcards}")
            planted.setdefault(job.rule, {})[json.dumps(job.wildcards, sort_keys=True)] = PLANTERS[job.rule](
                wd, job, config
            )
        analysis = sorted(
            {job.rule for k, job in enumerate(jobs) if k not in blocked and not is_model_job(job) and job.rule != "all"}
        )
        if ready:
            continue
        # Only analysis jobs can run here: what a planter waits for from another
        # planter (Faithfulness on the steered reruns) comes once that one is planted.
        to_plant = {path for job in todo for path in job.outputs}
        missing = sorted({path for job in todo for path in required(job) if path in pending and path not in to_plant})
        if todo and not missing:
            raise RuntimeError(f"planters wait on each other: {sorted({job.rule for job in todo})}")
        if todo:  # run the analysis jobs the remaining planters wait for, then plant again
            log(f"running {len(missing)} analysis inputs of {sorted({job.rule for job in todo})} first")
            done = subprocess.run(
                [*snakemake, "--rerun-triggers", "mtime", "--allowed-rules", *analysis, "--", *missing], cwd=wd
            )
            if done.returncode:
                raise RuntimeError(f"the analysis jobs before {todo[0].rule} failed")
            continue
        targets = sorted(
            {
                path
                for k, job in enumerate(jobs)
                if k not in blocked and not is_model_job(job) and job.rule != "all"
                for path in job.outputs
            }
        )
        return {
            "planted": planted,
            "analysis_rules": analysis,
            "targets": targets,
            "blocked_rules": sorted({jobs[k].rule for k in blocked}),
        }

"""The paper DAG at fractions of the papers' sizes (config/scale.yaml, README
Paper scale): run it, then read every job's Snakemake benchmark record and
print per rule the wall time and peak RSS at each fraction, the growth
exponent, and the projected cost of config/paper.yaml's model rules.

    python benchmarks/scale.py run --base /tmp/scale --fractions 1/64 1/16 [--cores 2] [--data-only | --planted]
    python benchmarks/scale.py report --base /tmp/scale
    python benchmarks/scale.py project --inputs /tmp/scale/f1

``project`` counts the tokens config/paper.yaml's model rules forward, with
SmolLM2's tokenizer (the scale run's ``tiny`` model folder), from the built
inputs of a working directory run with ``--data-only`` at fraction 1 (the
papers' sizes; ConflictBank's 20,000 records that ``max_per_relation: 200``
keeps need an input of at least 1/28 of its 553,117; their 17 prompts each
are counted on a seeded 1,000 and scaled), and turns them into hours on one
H200 at the README's measured rates (GPU figures).

``run`` gives each fraction a working directory of its own (``<base>/f<den>``,
``snakemake --directory``): synthetic inputs (benchmarks/synthetic_inputs.py)
in ``synthetic/``, the fraction's sizes in ``fraction.yaml`` over
config/scale.yaml, and ``run.json`` with the whole run's wall time and peak RSS
(``/usr/bin/time -v``). ``--data-only`` runs only the rules that need no model
(their inputs at that fraction; 1 is the papers' size).

``--planted`` runs every analysis rule on planted model outputs: the data
rules and the models' folders first (``data.log``), then
benchmarks/planted.py writes what each model rule would (the planters of
``conflictlab.{contextconflict,conflictbank,arbitration,conflicts,judges}.synthetic``,
with a known truth: accuracy, Balance, per-setting rates, CONFLICTS types and
verdicts, the judges' gold agreement and ratings) at the paths a dry run of the DAG names, recording it in
``planted.json``; then Snakemake runs with ``--allowed-rules`` the analysis
rules not downstream of an unplanted model rule (training only) and
``--rerun-triggers mtime`` (planted files have no Snakemake metadata), so no
model rule runs. ``run.json`` times that last run (``plant_s``: the
planting, analysis jobs it needed included); at ``--fractions 1`` it is the
papers' size.

``report`` sums a rule's jobs' wall seconds (``s``) and CPU seconds
(``cpu_time``) and takes their largest ``max_rss`` (MB) per fraction, fits the
exponent b of CPU time ~ fraction^b by least squares on the logs (every
fraction) and between the two largest (the local exponent, where fixed
start-up costs weigh least), and flags a rule whose local exponent exceeds 1.2
as growing faster than its work (every rule's work here is proportional to the
fraction: samples, queries, records, instances and training steps all scale
with it). Both CPU time and wall time are fitted, and a rule is flagged only
when both local exponents exceed 1.2, since each misleads in its own way: on a
machine shared with other work a job's wall time depends on what else ran
beside it (a job got 27% of a core for minutes); and Snakemake samples a job's
CPU time (every 5 s in this workflow, rules/benchmark_records.smk; Snakemake's
own default, when these figures were taken: every 0.5 s for its first 15 s,
then every 30 s), so a record misses the CPU seconds after the last sample
(arbitration_evaluate at 1/64: 38.4 s wall, 15.0 CPU s).
Compare exponents of long jobs, not single seconds.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import re
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

from conflictlab.logs import JobUsage

REPO = Path(__file__).resolve().parent.parent
SUPERLINEAR = 1.2


def fraction_sizes(f: Fraction) -> dict:
    """config/scale.yaml's sizes at fraction ``f`` of config/paper.yaml's
    (arbitration instances even: half high, half low)."""
    even = lambda n: max(2, 2 * round(n * f / 2))  # noqa: E731
    return {
        "arbitration": {"n_per_setting": even(2000), "sensitivity": {"n_per_setting": even(1000)}},
        "conflictbank": {
            "max_per_relation": max(1, round(200 * f)),
            "embedded": {"max_steps": max(2, round(4500 * f))},
        },
        "judges": {"gold": str(REPO / "resources" / "judges" / "gold.jsonl")},
    }


def workdir(base: Path, f: Fraction) -> Path:
    return base / f"f{f.denominator}" if f.numerator == 1 else base / f"f{f.numerator}-{f.denominator}"


def peak_rss_mb(time_v: str) -> float | None:
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_v)
    return int(match.group(1)) / 1024 if match else None


def run(args) -> None:
    for text in args.fractions:
        f = Fraction(text)
        wd = workdir(Path(args.base), f)
        wd.mkdir(parents=True, exist_ok=True)
        if not (wd / "synthetic").is_dir():
            cb = Fraction(args.conflictbank_fraction) if args.conflictbank_fraction else f
            subprocess.run(
                [
                    sys.executable,
                    str(REPO / "benchmarks" / "synthetic_inputs.py"),
                    str(wd / "synthetic"),
                    "--fraction",
                    str(float(f)),
                    "--conflictbank-fraction",
                    str(float(cb)),
                ],
                check=True,
            )
        (wd / "fraction.yaml").write_text(json.dumps(fraction_sizes(f)))
        command = [
            "/usr/bin/time",
            "-v",
            # this interpreter's environment's (a worktree has no .venv of its own)
            str(Path(sys.executable).parent / "snakemake"),
            "-s",
            str(REPO / "Snakefile"),
            "--directory",
            str(wd),
            "--cores",
            str(args.cores),
            "--keep-going",
            "--configfile",
            str(REPO / "config.yaml"),
            str(REPO / "config" / "scale.yaml"),
            str(wd / "fraction.yaml"),
        ]
        models = wd / "resources" / "models"
        if (
            args.reuse_model and not (models / "smollm2-135m-instruct").exists()
        ):  # a prepared folder without provenance counts as up to date
            models.mkdir(parents=True, exist_ok=True)
            (models / "smollm2-135m-instruct").symlink_to(Path(args.reuse_model).resolve(), target_is_directory=True)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(REPO)}
        record = {"fraction": str(f), "cores": args.cores, "data_only": args.data_only, "planted": args.planted}
        if (
            args.planted
        ):  # the data rules and the models' folders (the planted activations take tiny's shape), then plant
            data = subprocess.run(
                command + ["--until", *DATA_RULES, "resources/models/tiny"],
                stdout=open(wd / "data.log", "w"),
                stderr=subprocess.STDOUT,
                env=env,
            )
            if data.returncode:
                raise SystemExit(f"data rules failed: {wd / 'data.log'}")
            start = time.time()
            plan = plant_outputs(wd, command[2:], env)
            record["plant_s"] = round(time.time() - start, 1)
            command += ["--rerun-triggers", "mtime", "--allowed-rules", *plan["analysis_rules"], "--", *plan["targets"]]
        elif args.data_only:  # and SmolLM2's folder, whose tokenizer `project` counts with
            command += ["--until", *DATA_RULES, "resources/models/smollm2-135m-instruct"]
        start = time.time()
        with open(wd / "run.log", "w") as log:
            done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        record.update(
            wall_s=round(time.time() - start, 1),
            returncode=done.returncode,
            peak_rss_mb=peak_rss_mb((wd / "run.log").read_text()),
        )
        (wd / "run.json").write_text(json.dumps(record))
        print(record)


# The rules that need no model and feed the model rules (run --data-only).
DATA_RULES = ["table1", "conflicts_data", "conflictbank_data", "shuffle_evidence", "arbitration_generate"]


def merged_config(paths) -> dict:
    """The config Snakemake builds from ``--configfile`` ``paths`` (its own merge: later files update earlier ones, key
    by key)."""
    import yaml
    from snakemake.utils import update_config

    config: dict = {}
    for path in paths:
        update_config(config, yaml.safe_load(Path(path).read_text()) or {})
    return config


def plant_outputs(wd: Path, snakemake: list[str], env: dict) -> dict:
    """Plant every model rule's outputs in ``wd`` (benchmarks/planted.py) and
    write what was planted, with its truth, to ``planted.json``; returns the
    analysis rules and targets that can run on them. ``snakemake``: the
    Snakemake command line after /usr/bin/time -v, without targets."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    os.environ.update(env)  # the dry runs the planter starts
    import planted

    configs = snakemake[snakemake.index("--configfile") + 1 :]
    configs = configs[: next((k for k, a in enumerate(configs) if a.startswith("-")), len(configs))]
    plan = planted.plant_all(wd, snakemake, merged_config(configs), log=print)
    (wd / "planted.json").write_text(json.dumps(plan, indent=1))
    return plan


def rule_of(path: Path, root: Path) -> str:
    """The rule a benchmark file belongs to: its first path part below results/benchmarks."""
    parts = path.relative_to(root).parts
    return parts[0][: -len(".tsv")] if len(parts) == 1 else parts[0]


def job_usage(log: Path) -> JobUsage | None:
    """What a job's script logged at its exit (conflictlab.logs.JobUsage), or
    None where its log has no such line (older runs, a killed job)."""
    return JobUsage.parse(log.read_text(encoding="utf-8", errors="replace")) if log.is_file() else None


def read_benchmarks(wd: Path) -> dict[str, dict]:
    """{rule: {"s": summed seconds, "cpu": summed CPU seconds, "rss": largest
    max_rss (MB), "jobs": n, "exact": jobs whose CPU seconds came from their
    log}} of one working directory. A job's CPU seconds and peak RSS are the
    ones its script logged at exit (exact; its log has the benchmark's path
    under results/logs) where there are any, else the benchmark's sampled
    cpu_time and max_rss (a job of a second records 0.23 MB)."""
    root = wd / "results" / "benchmarks"
    rules: dict[str, dict] = {}
    for path in sorted(root.rglob("*.tsv")):
        logged = job_usage(wd / "results" / "logs" / path.relative_to(root).with_suffix(".log"))
        with open(path) as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                entry = rules.setdefault(rule_of(path, root), {"s": 0.0, "cpu": 0.0, "rss": 0.0, "jobs": 0, "exact": 0})
                entry["s"] += float(row["s"])
                entry["cpu"] += logged.cpu_s if logged else float(row.get("cpu_time") or 0.0)
                entry["exact"] += logged is not None
                rss = row.get("max_rss", "NA")
                entry["rss"] = max(
                    entry["rss"], logged.peak_rss_mb if logged else float(rss) if rss not in ("NA", "-") else 0.0
                )
                entry["jobs"] += 1
    return rules


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of log y on log x; None under two distinct x or a y <= 0."""
    points = [(x, y) for x, y in points if x > 0 and y > 0]
    if len({x for x, _ in points}) < 2:
        return None
    lx = [math.log(x) for x, _ in points]
    ly = [math.log(y) for _, y in points]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def report(args) -> list[dict]:
    base = Path(args.base)
    runs = {}
    for wd in sorted(base.iterdir()):
        if (wd / "run.json").is_file():
            meta = json.loads((wd / "run.json").read_text())
            runs[Fraction(meta["fraction"])] = (meta, read_benchmarks(wd))
    fractions = sorted(runs)
    print(
        "runs: "
        + "; ".join(
            (
                f"{f}: {m['wall_s']:.0f} s wall, peak {m['peak_rss_mb'] or 0:.0f} MB, exit {m['returncode']}"
                if m["wall_s"] is not None
                else f"{f}: stopped before the end"
            )
            + (" (data rules only)" if m.get("data_only") else "")
            + (" (analysis on planted outputs)" if m.get("planted") else "")
            for f, (m, _) in runs.items()
        )
    )
    print(
        "CPU seconds from the jobs' own logs (exact), else Snakemake's sampled cpu_time: "
        + "; ".join(
            f"{f}: {sum(e['exact'] for e in r.values())} of {sum(e['jobs'] for e in r.values())} jobs"
            for f, (_, r) in runs.items()
        )
    )
    rules = sorted({rule for _, (_, r) in runs.items() for rule in r})
    header = (
        ["rule (benchmark folder)"]
        + [f"wall s @{f}" for f in fractions]
        + [f"CPU s @{f}" for f in fractions]
        + [f"MB @{f}" for f in fractions]
    )
    header += ["b CPU (all)", "b CPU (last two)", "b wall (last two)", ""]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    rows = []
    for rule in rules:
        seconds = {f: runs[f][1][rule]["s"] for f in fractions if rule in runs[f][1]}
        cpu = {f: runs[f][1][rule]["cpu"] for f in fractions if rule in runs[f][1]}
        rss = {f: runs[f][1][rule]["rss"] for f in fractions if rule in runs[f][1]}
        b_all = slope([(float(f), c) for f, c in cpu.items()])
        last = sorted(cpu)[-2:]
        b_last = slope([(float(f), cpu[f]) for f in last])
        b_wall = slope([(float(f), seconds[f]) for f in last])
        flag = "superlinear" if b_last is not None and b_wall is not None and min(b_last, b_wall) > SUPERLINEAR else ""
        cells = (
            [rule]
            + [f"{seconds[f]:.1f}" if f in seconds else "" for f in fractions]
            + [f"{cpu[f]:.1f}" if f in cpu else "" for f in fractions]
        )
        cells += [f"{rss[f]:.0f}" if f in rss else "" for f in fractions]
        cells += [f"{b:.2f}" if b is not None else "" for b in (b_all, b_last, b_wall)] + [flag]
        print("| " + " | ".join(cells) + " |")
        rows.append(
            {
                "rule": rule,
                "seconds": seconds,
                "cpu": cpu,
                "rss": rss,
                "b_all": b_all,
                "b_last": b_last,
                "b_wall": b_wall,
                "flag": flag,
            }
        )
    return rows


# README, GPU figures (one H200, bfloat16, `bash benchmarks/device_check.sh`):
# the Shapley scorer forwarded 90,596 tokens in 2.63 s (Llama-3.2-1B shape)
# and 4.60 s (Llama-3.1-8B shape); batched transformers generation made 443
# new tokens/s (Llama-3.2-1B shape, 32 prompts). vLLM, the paper config's
# generation backend, was not measured.
PREFILL_1B, PREFILL_8B = 90_596 / 2.63, 90_596 / 4.60
DECODE_1B = 443.0
# Parameters per token (billions; active ones for the mixture-of-experts gpt-oss), for scaling the rates.
PARAMS_B = {
    "llama-3.1-8b-instruct": 8.0,
    "llama-3.1-70b-instruct": 70.6,
    "gpt-oss-20b": 3.6,
    "gpt-oss-120b": 5.1,
    "llama-3.2-1b": 1.24,
    "llama-3.1-8b": 8.0,
    "gemma-2b": 2.5,
    "gemma-3-27b-it": 27.0,
    "qwen2.5-72b-instruct": 72.7,
    "qwen3-1.7b": 1.7,
    "qwen3-4b": 4.0,
    "qwen3-8b": 8.2,
    "qwen3-14b": 14.8,
    "gemma-2-9b-it": 9.2,
    "llama-3-8b-instruct": 8.0,
    "mistral-7b-instruct-v0.3": 7.2,
    "gemma-7b": 8.5,
    "llama-2-7b": 6.7,
    "llama-2-13b": 13.0,
    "llama-2-70b": 69.0,
    "llama-3-8b": 8.0,
    "llama-3-70b": 70.6,
    "qwen1.5-0.5b": 0.6,
    "qwen1.5-4b": 4.0,
    "qwen1.5-7b": 7.7,
    "qwen1.5-14b": 14.2,
    "qwen1.5-72b": 72.3,
    "mistral-7b": 7.2,
}


def prefill_rate(params_b: float) -> float:
    """Tokens/s a forward of a ``params_b``-billion model reaches on one H200:
    the 8B-shape scorer's rate scaled by FLOPs per token, no faster than the
    1B shape's (whose batches did not fill the GPU)."""
    return min(PREFILL_1B, PREFILL_8B * 8.0 / params_b)


def decode_rate(params_b: float) -> float:
    """New tokens/s of batched transformers generation: the 1B shape's,
    scaled by weight bytes read per step (decoding is memory-bound)."""
    return DECODE_1B * 1.24 / params_b


def open_models(config: dict, names) -> list[str]:
    return [name for name in names if "hosted" not in config["models"][name]]


def token_counts(tokenizer, conversations, chunk: int = 1000) -> list[int]:
    """Prompt tokens of each conversation under ``tokenizer``'s chat template
    (tokenised ``chunk`` at a time: token id lists of a whole benchmark took
    13 GB)."""
    counts = []
    for start in range(0, len(conversations), chunk):
        texts = [
            tokenizer.apply_chat_template(c, tokenize=False, add_generation_prompt=True)
            for c in conversations[start : start + chunk]
        ]
        counts += [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    return counts


def shapley_tokens(tokenizer, samples, template: str, response_tokens: int) -> int:
    """Tokens one full forward per evidence subset would process (the naive
    way; the shared-prefix scorer forwards fewer) for every sample: each of the
    2^n subsets' prompt (the full prompt's tokens less the pieces left out)
    plus the response (``response_tokens``, its length limit)."""
    from conflictlab.contextconflict.prompts import build_messages

    conversations = [build_messages(template, s["question"], list(s["evidence"])) for s in samples]
    full = token_counts(tokenizer, conversations)
    total = 0
    for sample, n_full in zip(samples, full):
        pieces = [len(ids) for ids in tokenizer(list(sample["evidence"]), add_special_tokens=False)["input_ids"]]
        n = len(pieces)
        overhead = n_full - sum(pieces)
        total += 2**n * (overhead + response_tokens) + 2 ** (n - 1) * sum(pieces)
    return total


CONFLICTBANK_SAMPLE = 1000


def project(args) -> list[dict]:
    import yaml
    from transformers import AutoTokenizer

    from conflictlab.arbitration.evaluation import arbitration_conversations
    from conflictlab.conflictbank.evaluation import conflictbank_conversations
    from conflictlab.conflictbank.prompts import SETTINGS
    from conflictlab.conflicts.responses import TASK1_MAX_NEW_TOKENS, conflicts_conversations
    from conflictlab.contextconflict.conflict_types import TASK_FAMILY
    from conflictlab.contextconflict.generation import hosted_requests
    from conflictlab.io import read_tables

    wd = Path(args.inputs)
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    templates = base["generation"]["templates"]
    new_tokens = paper["generation"]["max_new_tokens"]
    tokenizer = AutoTokenizer.from_pretrained(wd / "resources" / "models" / "smollm2-135m-instruct")
    data = {t: read_tables(wd / "results" / "data" / f"{t}.parquet") for t in TASK_FAMILY}

    # The pseudo-words are tuned to English's tokens per word (conflictlab.fake_text.ZIPF); say what they cost here.
    sample = [" ".join(s["evidence"]) for t in TASK_FAMILY for s in data[t].slice(0, 50).to_pylist()]
    per_word = sum(len(ids) for ids in tokenizer(sample, add_special_tokens=False)["input_ids"]) / sum(
        len(t.split()) for t in sample
    )
    print(f"SmolLM2 tokens per synthetic word: {per_word:.2f} (English of the shared ContextConflict sample: 1.47)")

    rows = []

    def add(rule, models, prefill, decode=0, factor=1):
        """``prefill``/``decode`` tokens per model; ``factor``: forward-equivalents per token (3: training)."""
        hours = (
            sum((prefill * factor) / prefill_rate(PARAMS_B[m]) + decode / decode_rate(PARAMS_B[m]) for m in models)
            / 3600
        )
        rows.append(
            {
                "rule": rule,
                "models": len(models),
                "prefill_tokens": int(prefill) * len(models) * factor,
                "decode_tokens": decode * len(models),
                "h200_hours": hours,
            }
        )

    generators = open_models(paper, paper["generators"])
    requests = [r for t in TASK_FAMILY for r in hosted_requests(data[t], templates)]
    add(
        "generate", generators, sum(token_counts(tokenizer, [r.messages for r in requests])), len(requests) * new_tokens
    )
    summarization = [s for t, fam in TASK_FAMILY.items() if fam == "summarization" for s in data[t].to_pylist()]
    per_scorer = shapley_tokens(tokenizer, summarization, templates["summarization"], new_tokens)
    # every generator's responses, and (shuffle_types: null) each summarization type shuffled again
    add(
        "shapley_values + shapley_values_shuffled",
        open_models(paper, paper["scorers"]),
        per_scorer * 2 * len(generators),
    )
    queries = read_tables(wd / "results" / "conflicts" / "data.parquet").to_pylist()
    task1, task2 = conflicts_conversations(queries, paper["conflicts"]["strategies"])
    add(
        "conflicts_respond",
        open_models(paper, paper["conflicts"]["models"]),
        sum(token_counts(tokenizer, task1 + task2)),
        len(task1) * TASK1_MAX_NEW_TOKENS + len(task2) * paper["conflicts"]["max_new_tokens"],
    )
    instances = read_tables(
        [
            wd / "results" / "arbitration" / "instances.parquet",
            wd / "results" / "arbitration" / "sensitivity_instances.parquet",
        ]
    )
    add(
        "arbitration_evaluate",
        paper["arbitration"]["models"],
        sum(token_counts(tokenizer, arbitration_conversations(instances))),
    )
    records = read_tables(wd / "results" / "conflictbank" / "data.parquet")
    # 17 prompts per record: counted on a seeded sample of CONFLICTBANK_SAMPLE records, scaled to all of them
    counted = records.take(
        sorted(random.Random(0).sample(range(records.num_rows), min(CONFLICTBANK_SAMPLE, records.num_rows)))
    )
    per_record = sum(token_counts(tokenizer, conflictbank_conversations(counted, SETTINGS))) / counted.num_rows
    add("conflictbank_evaluate", paper["conflictbank"]["models"], round(per_record * records.num_rows))
    embedded = paper["conflictbank"]["embedded"]
    train_tokens = (
        embedded["max_steps"] * embedded["batch_size"] * embedded["gradient_accumulation"] * embedded["max_length"]
    )
    add(
        "conflictbank_train (forward + backward = 3 forwards)",
        embedded["models"],
        train_tokens * len(embedded["ratios"]),
        factor=3,
    )
    print(
        f"inputs: {sum(d.num_rows for d in data.values())} ContextConflict samples, {len(queries)} CONFLICTS queries, "
        f"{instances.num_rows} arbitration instances, {records.num_rows} ConflictBank records ({counted.num_rows} "
        "counted x 17 settings)"
    )
    print(
        "| rule (config/paper.yaml) | open models | tokens forwarded (prompt/prefill) | new tokens | hours on one H200 "
        "|\n|---|---|---|---|---|"
    )
    for row in rows:
        print(
            f"| {row['rule']} | {row['models']} | {row['prefill_tokens']:,} | {row['decode_tokens']:,} | "
            f"{row['h200_hours']:,.1f} |"
        )
    print(
        f"| total | | {sum(r['prefill_tokens'] for r in rows):,} | {sum(r['decode_tokens'] for r in rows):,} | "
        f"{sum(r['h200_hours'] for r in rows):,.1f} |"
    )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--base", required=True)
    run_parser.add_argument("--fractions", nargs="+", default=["1/64", "1/16"])
    run_parser.add_argument(
        "--conflictbank-fraction",
        default=None,
        help="of ConflictBank's 553,117 records in the inputs (default: the fraction)",
    )
    run_parser.add_argument("--cores", type=int, default=2)
    run_parser.add_argument("--data-only", action="store_true", help="only the rules that need no model")
    run_parser.add_argument(
        "--planted",
        action="store_true",
        help="the data rules, then planted outputs of every model rule, then only the analysis rules on them",
    )
    run_parser.add_argument(
        "--reuse-model",
        default=None,
        help="a prepared smollm2-135m-instruct folder to link instead of preparing it again",
    )
    report_parser = sub.add_parser("report")
    report_parser.add_argument("--base", required=True)
    project_parser = sub.add_parser("project")
    project_parser.add_argument(
        "--inputs", required=True, help="a working directory run with --data-only at fraction 1"
    )
    args = parser.parse_args(argv)
    return {"run": run, "report": report, "project": project}[args.command](args)


if __name__ == "__main__":
    main()

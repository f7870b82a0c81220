"""Tokens each conflict-resolution method forwards, relative to plain greedy
decoding, per benchmark, counted exactly from a finished run's outputs.

    python benchmarks/method_tokens.py [--results results] [--model smollm2-135m-instruct]

A token forwarded is a prompt token prefilled or a generated token fed back:
greedy forwards prompt + response tokens; CAD and AdaCAD add the context-free
prompt and feed every generated token to it too; a prompting method forwards
its own (longer) prompt. CONFLICTS keeps no count of generated tokens: its replies are re-tokenized. The closed
read-outs (ConflictBank, arbitration)
forward prompts only. Context-free prompts are rebuilt with the workflow's
own builders and the model's tokenizer; everything else is read from the
run's Parquet files. Counts, not timings: the same on every CPU.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from transformers import AutoTokenizer

from conflictlab.arbitration.prompts import context_free_prompt, encode_arbitration_prompt, method_prompt
from conflictlab.conflictbank.prompts import METHOD_SETTINGS, SETTINGS_BY_NAME, render_prompt
from conflictlab.conflicts.prompts import context_free_messages
from conflictlab.conflicts.responses import prompt_ids, reply_prefix
from conflictlab.contextconflict.prompts import context_free_messages as cc_context_free_messages
from conflictlab.contextconflict.prompts import encode_messages
from conflictlab.io import read_tables
from conflictlab.lm.methods import GREEDY, Method, MethodRun


def contextconflict(results: Path, model: str, tokenizer) -> dict[str, int]:
    questions = {}
    for split in (results / "steering" / "split").glob("*.test.parquet"):
        table = read_tables(split, columns=["sample_id", "question"])
        questions.update(zip(table.column("sample_id").to_pylist(), table.column("question").to_pylist()))
    counts = {}
    for folder in sorted((results / "responses").glob(f"{model}@*")):
        run = MethodRun.parse_if_method(folder.name)
        base = folder.name == f"{model}@base"
        if run is None and not base:
            continue
        label = GREEDY if base else run.method.format()
        rows = read_tables(
            sorted(folder.glob("*.parquet")), columns=["sample_id", "template", "n_prompt_tokens", "n_response_tokens"]
        ).to_pylist()
        total = sum(r["n_prompt_tokens"] + (r["n_response_tokens"] or 0) for r in rows)
        if run is not None and run.method.contrastive:
            total += sum(
                len(encode_messages(tokenizer, cc_context_free_messages(r["template"], questions[r["sample_id"]]))[1])
                + (r["n_response_tokens"] or 0)
                for r in rows
            )
        counts.setdefault(label, total)
    return counts


def conflictbank(results: Path, model: str, tokenizer, methods) -> dict[str, int]:
    records = read_tables(results / "conflictbank" / "data.parquet").to_pylist()
    counts = {}
    for method in map(Method.parse, methods):
        total = 0
        for name in METHOD_SETTINGS:
            for record in records:
                total += len(tokenizer(render_prompt(record, SETTINGS_BY_NAME[name], method.prompt_style))["input_ids"])
                if method.contrastive:
                    total += len(tokenizer(render_prompt(record, SETTINGS_BY_NAME["default"]))["input_ids"])
        counts[method.format()] = total
    return counts


def arbitration(results: Path, tokenizer, methods) -> dict[str, int]:
    rows = read_tables(results / "arbitration" / "instances.parquet").to_pylist()
    counts = {}
    for method in map(Method.parse, methods):
        total = sum(len(encode_arbitration_prompt(tokenizer, method_prompt(r, method.prompt_style))) for r in rows)
        if method.contrastive:
            total += sum(len(encode_arbitration_prompt(tokenizer, context_free_prompt(r))) for r in rows)
        counts[method.format()] = total
    return counts


def conflicts(results: Path, model: str, tokenizer) -> dict[str, int]:
    responses = read_tables(results / "conflicts" / model / "methods_responses.parquet").to_pylist()
    questions = {r["query_id"]: r["question"] for r in read_tables(results / "conflicts" / "data.parquet").to_pylist()}
    counts = {}
    for r in responses:
        method = MethodRun.parse(r["model"]).method
        generated = len(tokenizer(r["reply"] or "", add_special_tokens=False)["input_ids"])
        total = r["n_prompt_tokens"] + generated
        if method.contrastive:
            total += (
                len(prompt_ids(tokenizer, context_free_messages(questions[r["query_id"]]), reply_prefix("vanilla")))
                + generated
            )
        counts[method.format()] = counts.get(method.format(), 0) + total
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--model", default="smollm2-135m-instruct")
    args = parser.parse_args()
    tokenizer = AutoTokenizer.from_pretrained(Path("resources/models") / args.model)
    methods = sorted(
        {
            m.format()
            for m in (
                MethodRun.parse(r).method
                for r in read_tables(
                    args.results / "conflicts" / args.model / "methods_responses.parquet", columns=["model"]
                )
                .column("model")
                .unique()
                .to_pylist()
            )
        }
    )
    tables = {
        "ContextConflict (generation)": contextconflict(args.results, args.model, tokenizer),
        "CONFLICTS (generation)": conflicts(args.results, args.model, tokenizer),
        "ConflictBank (read-out)": conflictbank(args.results, args.model, tokenizer, methods),
        "arbitration (read-out)": arbitration(args.results, tokenizer, methods),
    }
    print(f"tokens forwarded per method, {args.model}, relative to greedy ({args.results})")
    print(f"{'benchmark':30s} " + " ".join(f"{m:>14s}" for m in methods))
    for name, counts in tables.items():
        base = counts.get(GREEDY)
        print(
            f"{name:30s} "
            + " ".join(f"{counts[m] / base:13.2f}x" if base and m in counts else f"{'-':>14s}" for m in methods)
        )
        print(f"{'  (tokens)':30s} " + " ".join(f"{counts.get(m, 0):14d}" for m in methods))


if __name__ == "__main__":
    main()

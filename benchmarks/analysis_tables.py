"""Analysis tables at the papers' full sizes, on synthetic inputs: the
columnar rewrites of issue 33 (polars group-bys in place of per-row loops).

    python benchmarks/analysis_tables.py [--models 6] [--resamples 2000] [--permutations 4999] [--seed 0]

Writes nothing. Synthesises, seeded with numpy, the inputs of each analysis
step in the real schemas at the papers' sizes and times each step in this
process (wall seconds, after one warm-up call with 20 resamples so that
imports and polars' first-call set-up are not counted):

- CONFLICTS (458 queries, the release's 161/115/115/62/5 per category):
  Task 1 predictions of ``--models`` models under both read-outs, Task 2
  verdicts of every (query, model, strategy): Tables 2, 4, 5 and 6 and the
  confusion figure's counts;
- ContextConflict (the release's 3,030 summarization samples of 5,781 with
  2–6 evidence pieces, at most 3 generators x 2 scorers): the Balance
  summary, shares by position, the causal Table 3, Table 6's scorer
  agreement (``--permutations`` within-type permutations) and the shuffle tables;
- arbitration (12 settings x 2 orders x 2 aligned sources x 5 seeds x 200
  instances, conflict and unimodal, ``--models`` models): accuracy per cell
  and the sensitivity table.

Content is random; only shapes, sizes and the null/undefined rates matter.
The bootstrap intervals (``--resamples``) are the step's own cost and are
included.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import numpy as np
import pyarrow as pa

from conflictlab.arbitration.evaluation import PREDICTION_SCHEMA as ARBITRATION_PREDICTION_SCHEMA
from conflictlab.arbitration.prompts import INSTANCE_SCHEMA
from conflictlab.conflicts.dataset import QUERY_SCHEMA
from conflictlab.conflicts.judging import JUDGED_SCHEMA
from conflictlab.conflicts.prompts import STRATEGIES
from conflictlab.conflicts.responses import TYPE_PREDICTION_SCHEMA
from conflictlab.conflicts.tables import PAPER_TABLE7, RECALL_CATEGORIES, RELEASE_COUNTS
from conflictlab.contextconflict.balance import ATTRIBUTION_SCHEMA
from conflictlab.contextconflict.causal import CAUSAL_SCHEMA
from conflictlab.contextconflict.conflict_types import RELEASE_FILES, TASK_FAMILY
from conflictlab.stats import balance


def _table(schema: pa.Schema, columns: dict) -> pa.Table:
    """``columns`` (name -> sequence) as a table of ``schema``; null for a field not given."""
    n = len(next(iter(columns.values())))
    return pa.Table.from_arrays(
        [pa.array(columns[f.name], f.type) if f.name in columns else pa.nulls(n, f.type) for f in schema], schema=schema
    )


def conflicts_inputs(rng: np.random.Generator, models: int) -> dict[str, pa.Table]:
    """CONFLICTS ``queries``, Task 1 ``predictions`` and Task 2 ``judged`` rows."""
    gold = np.repeat(list(RELEASE_COUNTS), list(RELEASE_COUNTS.values()))
    names = [f"model-{m}" for m in range(models)]
    queries = (
        _table(
            QUERY_SCHEMA,
            {
                "query_id": np.arange(gold.size),
                "conflict_type": gold,
                "source": rng.choice([*PAPER_TABLE7, "situatedqa-geo", "Other"], size=gold.size),
            },
        )
        if "source" in QUERY_SCHEMA.names
        else None
    )
    runs = [(model, readout) for model in names for readout in ("option_loglikelihood", "generated")]
    predicted = rng.choice([*RELEASE_COUNTS, None], size=gold.size * len(runs), p=[0.3, 0.2, 0.2, 0.15, 0.05, 0.1])
    predictions = _table(
        TYPE_PREDICTION_SCHEMA,
        {
            "query_id": np.tile(np.arange(gold.size), len(runs)),
            "model": np.repeat([m for m, _ in runs], gold.size),
            "conflict_type": np.tile(gold, len(runs)),
            "predicted": predicted.tolist(),
            "readout": np.repeat([r for _, r in runs], gold.size),
            "status": np.where(predicted == None, "unparseable", "ok"),  # noqa: E711
        },
    )
    cells = [(model, strategy) for model in names for strategy in STRATEGIES]
    n = gold.size * len(cells)
    types = np.tile(gold, len(cells))
    status = rng.choice(["ok", "unparseable", "too_long"], size=n, p=[0.94, 0.04, 0.02])
    ok = status == "ok"
    behaviour = rng.choice(["ok", "unreadable"], size=n, p=[0.97, 0.03])
    has_gold = np.isin(types, RECALL_CATEGORIES) | (rng.random(n) < 0.04)
    recall_status = np.where(~has_gold, "no_gold", rng.choice(["ok", "unreadable"], size=n, p=[0.97, 0.03]))
    grounding_status = rng.choice(["ok", "unreadable", "no_factual_sentences"], size=n, p=[0.9, 0.05, 0.05])
    sentences = rng.integers(0, 12, size=n)
    judged = _table(
        JUDGED_SCHEMA,
        {
            "query_id": np.tile(np.arange(gold.size), len(cells)),
            "model": np.repeat([m for m, _ in cells], gold.size),
            "strategy": np.repeat([s for _, s in cells], gold.size),
            "conflict_type": types,
            "judge": ["judge"] * n,
            "status": status,
            "adheres": [
                int(v) if good and b == "ok" else None for v, good, b in zip(rng.integers(0, 2, n), ok, behaviour)
            ],
            "behaviour_status": np.where(ok, behaviour, "not_generated"),
            "answer_recall": [
                int(v) if good and r == "ok" else None for v, good, r in zip(rng.integers(0, 2, n), ok, recall_status)
            ],
            "recall_status": np.where(ok | ~has_gold, recall_status, "not_generated"),
            "grounding": [
                float(v) if good and g == "ok" else None
                for v, good, g in zip(rng.random(n).round(3), ok, grounding_status)
            ],
            "grounding_status": np.where(ok, grounding_status, "not_generated"),
            "n_sentences": sentences,
            "n_cited_sentences": rng.binomial(sentences, 0.6),
            "n_citations": sentences,
            "n_invalid_citations": rng.binomial(sentences, 0.05),
        },
    )
    return {"queries": queries, "predictions": predictions, "judged": judged}


def contextconflict_inputs(rng: np.random.Generator, models: int) -> dict[str, pa.Table]:
    """ContextConflict ``attr`` (every scorer's attribution rows), ``causal``
    (Table 3 rows) and the shuffled run's ``samples`` (with their permutations)."""
    samples = [
        (f"{conflict_type}/{subset}/{i}", conflict_type, subset, int(rng.integers(2, 7)))
        for (conflict_type, subset), count in RELEASE_FILES.items()
        if TASK_FAMILY[conflict_type] == "summarization"
        for i in range(count)
    ]
    rows, causal = [], []
    for model in (f"generator-{m}" for m in range(models)):
        for scorer in ("loglik", "shapley"):
            for sample_id, conflict_type, subset, n in samples:
                phi = rng.normal(0.05, 0.1, size=n).round(4)
                result = balance(phi)
                rows.append(
                    {
                        "sample_id": sample_id,
                        "model": model,
                        "scorer": scorer,
                        "conflict_type": conflict_type,
                        "subset": subset,
                        "n_evidence": n,
                        "method": "exact",
                        "phi": phi.tolist(),
                        "phi_se": None,
                        "shares": None if result.undefined else result.shares.tolist(),
                        "balance": None if result.undefined else result.balance,
                        "gini": None if result.undefined else result.gini,
                        "undefined": result.undefined,
                        "v_empty": -3.0,
                        "v_full": -2.0,
                    }
                )
                if not result.undefined and scorer == "shapley":
                    high, low = rng.normal(0.2, 0.3), rng.normal(0.05, 0.3)
                    causal.append(
                        {
                            "sample_id": sample_id,
                            "model": model,
                            "scorer": scorer,
                            "conflict_type": conflict_type,
                            "high_piece": 1,
                            "low_piece": 2,
                            "ll_full": -1.0,
                            "ll_without_high": -1.0 - high,
                            "ll_without_low": -1.0 - low,
                            "delta_high": high,
                            "delta_low": low,
                        }
                    )
    shuffled = pa.table(
        {
            "sample_id": [s for s, *_ in samples],
            "extras": [json.dumps({"shuffle_permutation": rng.permutation(n).tolist()}) for *_, n in samples],
        }
    )
    return {
        "attr": pa.Table.from_pylist(rows, schema=ATTRIBUTION_SCHEMA),
        "causal": pa.Table.from_pylist(causal, schema=pa.schema([f for f in CAUSAL_SCHEMA if f.name in causal[0]])),
        "shuffled_samples": shuffled,
    }


def arbitration_inputs(rng: np.random.Generator, models: int, *, per_cell: int = 200) -> dict[str, pa.Table]:
    """Arbitration ``instances`` and ``predictions``: the main study's and a
    sensitivity study's (``sens/<factor>=<value>/...`` against ``sens/baseline``)."""
    ids, meta = [], {name: [] for name in ("setting", "condition", "order", "aligned_source", "seed")}
    variants = [("main", f"setting{s}") for s in range(12)] + [
        ("sens", variant)
        for variant in [
            "baseline",
            *(f"{factor}={value}" for factor in ("noise", "horizon", "scale") for value in range(3)),
        ]
    ]
    for study, setting in variants:
        for seed in range(5):
            for condition, order in [("unimodal", None), ("conflict", "aligned_first"), ("conflict", "aligned_last")]:
                for source in ("text", "numbers"):
                    for i in range(per_cell if study == "main" else per_cell // 4):
                        prefix = f"sens/{setting}/modality" if study == "sens" else setting
                        ids.append(f"{prefix}/s{seed}/{condition}/{order}/{source}/{i}")
                        for name, value in zip(
                            meta, (setting if study == "main" else "modality", condition, order, source, seed)
                        ):
                            meta[name].append(value)
    n = len(ids)
    letters = rng.choice(["A", "B"], size=n)
    instances = _table(
        INSTANCE_SCHEMA,
        {
            "instance_id": ids,
            **meta,
            "domain": ["health"] * n,
            "label": np.where(letters == "A", "high", "low"),
            "answer_letter": letters,
            "target": rng.random(n),
            "target_time": ["t"] * n,
            "latent": ["{}"] * n,
            "prompt": [""] * n,
        },
    )
    names = [f"model-{m}" for m in range(models)]
    logits = rng.normal(size=(n * models, 2)).round(3)  # rounded: margins tie, as real logits of small models do
    predicted = np.where(logits[:, 0] > logits[:, 1], "A", np.where(logits[:, 0] < logits[:, 1], "B", "tie"))
    predictions = _table(
        ARBITRATION_PREDICTION_SCHEMA,
        {
            "instance_id": ids * models,
            "model": np.repeat(names, n),
            "logit_a": logits[:, 0],
            "logit_b": logits[:, 1],
            "predicted_letter": predicted,
            "correct": predicted == np.tile(letters, models),
            "read_out": ["logits"] * (n * models),
        },
    )
    return {"instances": instances, "predictions": predictions}


def steps(inputs: dict[str, dict[str, pa.Table]], resamples: int, permutations: int, seed: int) -> dict:
    """Step name -> a no-argument call of it on ``inputs``."""
    from conflictlab.arbitration.report import accuracy_by_cell, mean_over_seeds, sensitivity_table
    from conflictlab.conflicts import tables as conflicts
    from conflictlab.contextconflict import balance as cc

    c, x, a = inputs["conflicts"], inputs["contextconflict"], inputs["arbitration"]
    boot = dict(n_resamples=resamples, seed=seed)
    return {
        "CONFLICTS Table 2 + Table 7": lambda: (conflicts.table2(c["queries"]), conflicts.table7(c["queries"])),
        "CONFLICTS Table 4 (Task 1)": lambda: conflicts.table4(c["predictions"]),
        "CONFLICTS Table 5 (Task 2)": lambda: conflicts.table5(c["judged"], **boot),
        "CONFLICTS Table 6": lambda: conflicts.table6(c["judged"]),
        "ContextConflict Balance summary": lambda: cc.summarize_balance(x["attr"], **boot),
        "ContextConflict shares by position": lambda: cc.position_shares(x["attr"], **boot),
        "ContextConflict Table 3 (causal)": lambda: cc.summarize_causal(x["causal"], **boot),
        "ContextConflict shuffle Tables 9-10": lambda: cc.shuffled_shares(x["attr"], x["shuffled_samples"], **boot),
        "ContextConflict Table 6 (scorers)": lambda: cc.scorer_robustness(
            x["attr"], n_permutations=permutations, seed=seed
        ),
        "arbitration accuracy per cell + seeds": lambda: mean_over_seeds(
            accuracy_by_cell(a["instances"], a["predictions"])
        ),
        "arbitration sensitivity": lambda: sensitivity_table(a["instances"], a["predictions"]),
    }


def synthesise(models: int, seed: int) -> dict[str, dict[str, pa.Table]]:
    return {
        "conflicts": conflicts_inputs(np.random.default_rng(seed), models),
        "contextconflict": contextconflict_inputs(np.random.default_rng(seed + 1), min(models, 3)),
        "arbitration": arbitration_inputs(np.random.default_rng(seed + 2), models),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models",
        type=int,
        default=6,
        help="models (CONFLICTS, arbitration; ContextConflict takes at most 3 generators)",
    )
    parser.add_argument(
        "--resamples", type=int, default=2000, help="bootstrap resamples (the *.bootstrap_resamples config keys)"
    )
    parser.add_argument(
        "--permutations",
        type=int,
        default=4999,
        help="Table 6's within-type permutations (scorer_robustness's default)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    inputs = synthesise(args.models, args.seed)
    sizes = {
        f"{benchmark}.{name}": table.num_rows for benchmark, tables in inputs.items() for name, table in tables.items()
    }
    print(
        f"inputs synthesised in {time.perf_counter() - started:.0f} s; rows: "
        + ", ".join(f"{k} {v:,}" for k, v in sizes.items())
    )
    for call in steps(inputs, 20, 19, args.seed).values():
        call()
    print(f"CPU: {os.cpu_count()} usable; load (1 min) {os.getloadavg()[0]:.1f}")
    for name, call in steps(inputs, args.resamples, args.permutations, args.seed).items():
        started = time.perf_counter()
        call()
        print(f"  {name:<42}{time.perf_counter() - started:>7.2f} s", flush=True)
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()

# What ContextConflict's rule files (data, generate, metrics, shapley,
# mechanistic, steering; its judged tables in judges.smk) make under this
# config, registered for the default target, the report, the profile and the
# reproduction report (rules/benchmarks.smk). The last of its rule files.

_balance_tables = bool(config["generators"] and config["scorers"] and SUMMARIZATION_TYPES)

register_results(
    "contextconflict",
    outputs=[
        *expand("results/data/{conflict_type}.parquet", conflict_type=config["conflict_types"]),
        *flatten(TABLE1_OUTPUTS),
        *expand(
            "results/responses/{model}/{conflict_type}.parquet",
            model=config["generators"],
            conflict_type=config["conflict_types"],
        ),
        *(flatten(ACCURACY_OUTPUTS) if REASONING_TYPES else []),
        *(flatten(BALANCE_OUTPUTS) if SHUFFLE_TYPES else []),
        *(flatten(TABLE3_OUTPUTS) if SHUFFLE_TYPES and LOCAL_GENERATORS else []),
        *[path for model in config["generators"] if SHUFFLE_TYPES for path in flatten(shuffle_outputs(model))],
        *[path for model in config["mechanistic"]["models"] for path in flatten(mechanistic_outputs(model))],
        *(flatten(TABLE4_OUTPUTS) if config["steering"]["models"] else []),
        *flatten(JUDGE_TABLE_OUTPUTS),
    ],
    # the profile's tables (its descriptor's profile_tables) and the paper rows' and claims' (by CSV stem)
    tables={
        **({"accuracy": ACCURACY_OUTPUTS["csv"]} if config["generators"] and REASONING_TYPES else {}),
        **({"balance": BALANCE_OUTPUTS["balance_csv"]} if _balance_tables else {}),
        **({"faithfulness": JUDGE_TABLE_OUTPUTS["faithfulness_csv"]} if config["generators"] else {}),
        "table1": TABLE1_OUTPUTS["table1_csv"],
        **({"table3": TABLE3_OUTPUTS["table3_csv"]} if SHUFFLE_TYPES else {}),
        **({"table4": TABLE4_OUTPUTS["table4_csv"]} if config["steering"]["models"] else {}),
        **(
            {Path(BALANCE_OUTPUTS[k]).stem: BALANCE_OUTPUTS[k] for k in ("table6_csv", "agreement_csv", "positions")}
            if _balance_tables
            else {}
        ),
        **{
            f"shuffled_positions_{m}": shuffle_outputs(m)["presented_csv"]
            for m in config["generators"]
            if SHUFFLE_TYPES
        },
        # the mechanistic tables are Parquet (results/mechanistic/<model>/), read by the same script
        **{
            f"mechanistic_{kind}_{m}": mechanistic_outputs(m)[kind]
            for m in config["mechanistic"]["models"]
            for kind in ("probes", "spectral", "projection", "subset_probes")
        },
    },
    usage=[
        *[f"results/usage/generate/{m}.parquet" for m in config["generators"]],
        "results/usage/judges/faithfulness.parquet",
        "results/usage/judges/gold.parquet",
        *(["results/usage/judges/ratings.parquet"] if JUDGE_TABLES_WITH_RATINGS else []),
        *(
            ["results/usage/judges/answer_match.parquet"]
            if config["accuracy"]["free_text"] == "judge" and REASONING_TYPES
            else []
        ),
    ],
)

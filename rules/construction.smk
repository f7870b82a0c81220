# Building new conflict data the papers' way (docs/construction.md): ConflictBank
# from a Wikidata dump (scatter by chunk, gather, generate, check, QA) and
# ContextConflict's semi-synthetic instances with their audit sheets. Named
# targets construct_conflictbank and construct_contextconflict; in `all` and the
# report (CONSTRUCTION_OUTPUTS) where construction.default_target is set.
# After judges.smk, whose judge settings, inputs and reply cache it takes;
# before report.smk, which collects CONSTRUCTION_OUTPUTS.

from conflictlab.construction.contextconflict import BUILT_SUBSETS

CONSTRUCTION = config["construction"]
CB_BUILD = CONSTRUCTION["conflictbank"]
CC_BUILD = CONSTRUCTION["contextconflict"]
CONSTRUCTION_GENERATOR = CONSTRUCTION["generator"]
if CONSTRUCTION_GENERATOR not in config["models"]:
    raise ValueError(f"config: construction.generator names {CONSTRUCTION_GENERATOR}, which is missing from 'models'")

# A local generator runs in process (chat template, greedy) whatever generation.backend is.
CONSTRUCTION_GENERATION = {
    "backend": run_config.INTERNALS_BACKEND,
    **subset(config["generation"], "batch_size", "dtype", "max_model_len"),
}

# What a construction job that generates reads and how it is priced.
CONSTRUCTION_MODEL_PARAMS = {
    "model": CONSTRUCTION_GENERATOR,
    "hosted": hosted_spec(CONSTRUCTION_GENERATOR),
    "price": config["models"][CONSTRUCTION_GENERATOR].get("prices"),
    "budget_usd": CONSTRUCTION["budget_usd"],
    "generation": CONSTRUCTION_GENERATION,
    "max_new_tokens": CONSTRUCTION["max_new_tokens"],
}

CB_CHUNKS = range(CB_BUILD["chunks"])
CB_DIR = "results/construction/conflictbank"


rule construct_cb_scan:
    """One chunk of the dump (lines n with n % chunks == chunk): entities, facts, rejected lines."""
    input:
        dump=CB_BUILD["dump"],
    output:
        entities=f"{CB_DIR}/chunks/{{chunk}}.entities.parquet",
        facts=f"{CB_DIR}/chunks/{{chunk}}.facts.parquet",
        rejected=f"{CB_DIR}/chunks/{{chunk}}.rejected.parquet",
        counts=f"{CB_DIR}/chunks/{{chunk}}.counts.parquet",
    log:
        "results/logs/construction/cb_scan/{chunk}.log",
    benchmark:
        "results/benchmarks/construction/cb_scan/{chunk}.tsv"
    wildcard_constraints:
        chunk=r"\d+",
    conda:
        "../envs/datasets.yaml"
    resources:
        mem_mb=2000,
    params:
        chunk=lambda wildcards: int(wildcards.chunk),
        n_chunks=CB_BUILD["chunks"],
        relations=CB_BUILD["relations"],
        code=code_hash("construct_cb_scan.py"),
    script:
        "../workflow/scripts/construct_cb_scan.py"


rule construct_cb_claims:
    """The chunks gathered: one fact per subject-relation pair, its substitutes and its four claims."""
    input:
        entities=expand(f"{CB_DIR}/chunks/{{chunk}}.entities.parquet", chunk=CB_CHUNKS),
        facts=expand(f"{CB_DIR}/chunks/{{chunk}}.facts.parquet", chunk=CB_CHUNKS),
        rejected=expand(f"{CB_DIR}/chunks/{{chunk}}.rejected.parquet", chunk=CB_CHUNKS),
        counts=expand(f"{CB_DIR}/chunks/{{chunk}}.counts.parquet", chunk=CB_CHUNKS),
    output:
        claims=f"{CB_DIR}/claims.parquet",
        rejected=f"{CB_DIR}/dump.rejected.parquet",
        counts=f"{CB_DIR}/counts.parquet",
    log:
        "results/logs/construction/cb_claims.log",
    benchmark:
        "results/benchmarks/construction/cb_claims.tsv"
    conda:
        "../envs/construction.yaml"
    resources:
        mem_mb=2000,
    params:
        seed=CONSTRUCTION["seed"],
        relations=CB_BUILD["relations"],
        part_facts=CB_BUILD["gather_part_facts"],
        code=code_hash("construct_cb_claims.py"),
    script:
        "../workflow/scripts/construct_cb_claims.py"


rule construct_cb_evidence:
    """Evidence for every claim of a seeded sample of facts (request count and cost checked first)."""
    input:
        unpack(lambda wildcards: model_inputs(CONSTRUCTION_GENERATOR)),
        claims=f"{CB_DIR}/claims.parquet",
    output:
        evidence=f"{CB_DIR}/evidence.parquet",
        usage="results/usage/construct_cb_evidence.parquet",
    log:
        "results/logs/construction/cb_evidence.log",
    benchmark:
        "results/benchmarks/construction/cb_evidence.tsv"
    conda:
        "../envs/construction.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
    params:
        generator=CONSTRUCTION_MODEL_PARAMS,
        facts=CB_BUILD["facts"],
        seed=CONSTRUCTION["seed"],
        code=code_hash("construct_cb_evidence.py"),
    script:
        "../workflow/scripts/construct_cb_evidence.py"


rule construct_cb_quality:
    """The quality controls: refusal filter, then NLI entailment and conflict confirmation by the judge."""
    input:
        **JUDGE_INPUTS,
        evidence=f"{CB_DIR}/evidence.parquet",
    output:
        checked=f"{CB_DIR}/evidence.checked.parquet",
    log:
        **judge_logs("construct_cb_quality"),
    benchmark:
        "results/benchmarks/construction/cb_quality.tsv"
    conda:
        "../envs/construction.yaml"
    threads: torch_threads
    resources:
        gpu=JUDGE_GPUS,
        mem_mb=8000,
    params:
        judge_settings=JUDGE_SETTINGS,
        checks=CB_BUILD["checks"],
        code=code_hash("construct_cb_quality.py"),
    script:
        "../workflow/scripts/construct_cb_quality.py"


rule construct_cb_qa:
    """QA pairs in the released format, and the counts after each step beside the paper's."""
    input:
        claims=f"{CB_DIR}/claims.parquet",
        checked=f"{CB_DIR}/evidence.checked.parquet",
        counts=f"{CB_DIR}/counts.parquet",
    output:
        qa=f"{CB_DIR}/QA_dataset.jsonl",
        md="results/tables/construction_conflictbank_steps.md",
        csv="results/tables/construction_conflictbank_steps.csv",
    log:
        "results/logs/construction/cb_qa.log",
    benchmark:
        "results/benchmarks/construction/cb_qa.tsv"
    conda:
        "../envs/construction.yaml"
    params:
        seed=CONSTRUCTION["seed"],
        checks=CB_BUILD["checks"],
        code=code_hash("construct_cb_qa.py"),
    script:
        "../workflow/scripts/construct_cb_qa.py"


rule construct_conflictbank:
    """Named target: ConflictBank built from the configured dump, read back by the existing loader
    (conflictbank.path may then name the QA file)."""
    input:
        qa=f"{CB_DIR}/QA_dataset.jsonl",
        rejected=f"{CB_DIR}/dump.rejected.parquet",
        steps="results/tables/construction_conflictbank_steps.md",
    output:
        records=f"{CB_DIR}/data.parquet",
    log:
        "results/logs/construction/cb_check.log",
    conda:
        "../envs/construction.yaml"
    params:
        code=code_hash("construct_cb_check.py"),
    script:
        "../workflow/scripts/construct_cb_check.py"


CC_DIR = "results/construction/contextconflict"
CC_SOURCES = {
    key: CC_BUILD[key]
    for key in (
        "scifact_claims",
        "scifact_corpus",
        "folio",
        "entailmentbank",
        "conflictbank",
    )
}
CC_ANNOTATORS = ["A", "B"]


rule construct_cc_generate:
    """ContextConflict's semi-synthetic samples from the base datasets (the paper's prompts), rejections recorded."""
    input:
        unpack(lambda wildcards: model_inputs(CONSTRUCTION_GENERATOR)),
        sources=list(CC_SOURCES.values()),
    output:
        instances=f"{CC_DIR}/instances.parquet",
        rejected=f"{CC_DIR}/rejected.parquet",
        release=directory(f"{CC_DIR}/data"),
        usage="results/usage/construct_cc_generate.parquet",
    log:
        "results/logs/construction/cc_generate.log",
    benchmark:
        "results/benchmarks/construction/cc_generate.tsv"
    conda:
        "../envs/construction.yaml"
    threads: torch_threads
    resources:
        mem_mb=8000,
    params:
        generator=CONSTRUCTION_MODEL_PARAMS,
        sources=CC_SOURCES,
        max_per_source=CC_BUILD["max_per_source"],
        seed=CONSTRUCTION["seed"],
        code=code_hash("construct_cc_generate.py"),
    script:
        "../workflow/scripts/construct_cc_generate.py"


rule construct_cc_audit:
    """The audit sheets: double annotation, sampled and spot checks at the configured rates, seeded."""
    input:
        instances=f"{CC_DIR}/instances.parquet",
        originals=expand(
            "results/data/{conflict_type}.parquet",
            conflict_type=config["conflict_types"],
        ),
    output:
        sheets=directory(f"{CC_DIR}/audit"),
    log:
        "results/logs/construction/cc_audit.log",
    benchmark:
        "results/benchmarks/construction/cc_audit.tsv"
    conda:
        "../envs/construction.yaml"
    params:
        audit=CC_BUILD["audit"],
        seed=CONSTRUCTION["seed"],
        code=code_hash("construct_cc_audit.py"),
    script:
        "../workflow/scripts/construct_cc_audit.py"


rule construct_cc_agreement:
    """Completed sheets (copied to audit_completed/sheet_A.csv, sheet_B.csv) -> agreement and disagreements."""
    input:
        sheets=expand(
            f"{CC_DIR}/audit_completed/sheet_{{annotator}}.csv",
            annotator=CC_ANNOTATORS,
        ),
    output:
        md="results/tables/construction_audit_agreement.md",
        csv="results/tables/construction_audit_agreement.csv",
        disagreements=f"{CC_DIR}/audit_disagreements.json",
    log:
        "results/logs/construction/cc_agreement.log",
    conda:
        "../envs/construction.yaml"
    params:
        annotators=CC_ANNOTATORS,
        code=code_hash("construct_cc_agreement.py"),
    script:
        "../workflow/scripts/construct_cc_agreement.py"


rule construct_contextconflict:
    """Named target: the constructed samples read back by the existing loader, and their audit sheets."""
    input:
        release=f"{CC_DIR}/data",
        rejected=f"{CC_DIR}/rejected.parquet",
        sheets=f"{CC_DIR}/audit",
    output:
        samples=f"{CC_DIR}/samples.parquet",
    log:
        "results/logs/construction/cc_check.log",
    conda:
        "../envs/construction.yaml"
    params:
        subsets={kind: list(subsets) for kind, subsets in BUILT_SUBSETS.items()},
        code=code_hash("construct_cc_check.py"),
    script:
        "../workflow/scripts/construct_cc_check.py"


CONSTRUCTION_SUMMARY_OUTPUTS = {
    "steps_md": "results/tables/construction_steps.md",
    "steps_csv": "results/tables/construction_steps.csv",
    "rejections_md": "results/tables/construction_rejections.md",
    "rejections_csv": "results/tables/construction_rejections.csv",
}


rule construct_summary:
    """The report's construction section: both pipelines' counts after each step beside the papers',
    and every rejection by its reason."""
    input:
        cb_steps="results/tables/construction_conflictbank_steps.csv",
        cb_rejected=f"{CB_DIR}/dump.rejected.parquet",
        cb_checked=f"{CB_DIR}/evidence.checked.parquet",
        cc_instances=f"{CC_DIR}/instances.parquet",
        cc_rejected=f"{CC_DIR}/rejected.parquet",
        audit=f"{CC_DIR}/audit",
    output:
        **flagged(
            CONSTRUCTION_SUMMARY_OUTPUTS,
            {"steps_csv": "construction_steps", "rejections_csv": "construction_rejections"},
            "Construction",
        ),
    log:
        "results/logs/construction/summary.log",
    benchmark:
        "results/benchmarks/construction/summary.tsv"
    localrule: True
    conda:
        "../envs/construction.yaml"
    params:
        generator=CONSTRUCTION_GENERATOR,
        judge=config["judges"]["model"],
        local=not is_hosted(CONSTRUCTION_GENERATOR),
        code=code_hash("construct_summary.py"),
    script:
        "../workflow/scripts/construct_summary.py"


# What `all` and the HTML report collect (rules/report.smk), and the generating jobs' endpoint usage: only
# where the run selects both benchmarks whose data it extends (so `benchmarks: [nq_swap]` runs NQ-Swap alone).
CONSTRUCTION_IN_DEFAULT = CONSTRUCTION["default_target"] and {"contextconflict", "conflictbank"} <= set(SELECTED)
CONSTRUCTION_OUTPUTS = (
    [f"{CB_DIR}/data.parquet", f"{CC_DIR}/samples.parquet", *CONSTRUCTION_SUMMARY_OUTPUTS.values()]
    if CONSTRUCTION_IN_DEFAULT
    else []
)
CONSTRUCTION_USAGE = (
    ["results/usage/construct_cb_evidence.parquet", "results/usage/construct_cc_generate.parquet"]
    if CONSTRUCTION_IN_DEFAULT
    else []
)

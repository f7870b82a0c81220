# The data check: every selected benchmark's whole input read through its
# validator (conflictlab.validate_data; each descriptor names one), no model.
# A rule without outputs, so that `snakemake validate_data` reads the files
# every time it is asked, whatever ran before. Its reports,
# results/validate_data.tsv and results/validate_data.rejections.tsv, are
# written by the script (atomically) and are not inputs of any rule.


rule validate_data:
    """Read every selected benchmark's input whole; print per file the records read and rejected; fail where
    a run with on_error: fail would stop."""
    log:
        "results/logs/validate_data.log",
    conda:
        "../envs/datasets.yaml"
    params:
        config=config,
        summary="results/validate_data.tsv",
        rejections="results/validate_data.rejections.tsv",
        code=code_hash("validate_data.py"),
    script:
        "../workflow/scripts/validate_data.py"

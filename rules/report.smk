rule html_report:
    """Every flagged table and figure with its caption, as one HTML file.

    It runs ``snakemake --report`` on the finished results with this run's
    exact config (so one ``snakemake --cores all`` ends with the report);
    ``snakemake --report report.html`` makes the same file by hand.
    """
    input:
        report_inputs(),
    output:
        html="results/report.html",
    params:
        python=sys.executable,
        snakefile=workflow.main_snakefile,
        config=json.dumps(config, sort_keys=True),
    log:
        "results/logs/html_report.log",
    conda:
        # The command itself runs the outer Snakemake (params.python).
        "../envs/snakemake.yaml"
    shell:
        """
        tmp=$(mktemp -d results/.report.XXXXXX)
        trap 'rm -rf "$tmp"' EXIT
        printf '%s' {params.config:q} > "$tmp/config.json"
        {params.python:q} -m snakemake --snakefile {params.snakefile:q} --nolock --configfile "$tmp/config.json" \
            --report "$tmp/report.html" > {log:q} 2>&1
        mv "$tmp/report.html" {output:q}
        """

"""Rule table4: steered reruns' Accuracy and Balance -> Table 4 (md, tex, csv) and Figure 31."""

from pathlib import Path

from conflictlab.contextconflict.balance import summarize_balance
from conflictlab.contextconflict.figures import alpha_sweep_curves
from conflictlab.contextconflict.steering import (
    METHOD_LABELS,
    METRIC_LABELS,
    cell_items,
    column_key,
    paired_results,
    steering_results,
    table4,
    table4_columns,
    with_marks,
)
from conflictlab.io import read_tables
from conflictlab.judges.faithfulness import DEVIATIONS, faithfulness_notes, summarize_faithfulness
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.tables import marked_latex, marked_markdown, write_csv, write_text
from conflictlab.stats import MIN_N_MEAN

log = configure_logging(snakemake.log[0], "table4")
params, out = snakemake.params, snakemake.output
inputs = dict(snakemake.input.items())


def read_all(paths):
    return read_tables(paths) if paths else None


variants = {variant: tuple(spec) for variant, spec in params.variants.items()}
attributions = read_all(inputs.get("attributions"))
balance = (
    None if attributions is None else summarize_balance(attributions, n_resamples=params.bootstrap, seed=params.seed)
)
judged = read_tables(inputs["faithfulness"]) if "faithfulness" in inputs else None
faithfulness = (
    None if judged is None else summarize_faithfulness(judged, n_resamples=params.bootstrap, seed=params.seed)
)
results = steering_results(variants, read_all(inputs.get("accuracy")), balance, faithfulness)

columns = table4_columns(results)
headers = [(column_key(m, t), f"{METRIC_LABELS[m]} {t}") for m, t in columns]
# Per-item values of every cell, paired on the sample id: Balance averages the
# defined shares, Faithfulness the scored responses, which can differ between variants.
items = cell_items(read_all(inputs.get("accuracy_items")), attributions, judged)
rows, notes = table4(
    results,
    table_variants=params.table4_variants,
    columns=columns,
    items=items,
    min_n=params.min_n_mark,
    seed=params.seed,
)
notes += faithfulness_notes(results)
caption = (
    f"Table 4: steered reruns on the test split (alpha = {params.alpha:g}; %). Acc and Fth (RAGAS Faithfulness, "
    f"judge {params.judge_label}) higher is better, Bal (Balance under scorer {params.scorer}) lower is better. "
    f"Cells: value [95% CI] (n): Clopper-Pearson for Acc, Student-t for Bal and Fth (none at n < {MIN_N_MEAN} or "
    "without spread); no interval at n < 2. Best bold within a model block only where the variant beats "
    "every other in paired tests on the samples both cover (exact McNemar for Acc, sign-flip for Bal and Fth; "
    f"Holm-corrected, 5%), every cell with n >= {params.min_n_mark}. The CSV gives each variant's paired difference "
    "from Base (difference, difference_low, difference_high, p_paired, n_pairs; Tango's score interval for Acc, "
    "the adjusted t for Bal and Fth, docs/statistics.md; p_paired is that one comparison's, unadjusted, while the "
    "marks use Holm's adjustment). "
    f"Fth: {DEVIATIONS}"
)
write_text(marked_markdown(rows, ["model", "method"], headers, caption=caption, notes=notes), out.table4_md)
write_text(marked_latex(rows, ["model", "method"], headers, caption=caption, group="model"), out.table4_tex)
write_csv(with_marks(paired_results(results, items, seed=params.seed), rows), out.table4_csv)

for model, png in zip(params.models, out.fig31_png):
    title = f"{model}: steering strength (Figure 31; base = no steering)"
    # Figure 31 plots the paper's two metrics, Accuracy and Balance.
    plotted = [c for c in columns if c[0] != "faithfulness"]
    save(alpha_sweep_curves(results, model=model, columns=plotted, title=title), Path(png).with_suffix(""))
log.info("%d result rows; %s", results.num_rows, ", ".join(METHOD_LABELS[v[0]] for v in variants.values()))
for note in notes:
    log.info("note: %s", note)

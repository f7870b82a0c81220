"""Rule table4: steered reruns' Accuracy and Balance -> Table 4 (md, tex, csv) and Figure 31."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.balance import summarize_balance
from conflictlab.dataset import CONFLICT_TYPES
from conflictlab.figures import alpha_sweep_curves, save
from conflictlab.logs import configure_logging
from conflictlab.steering import METHOD_LABELS, steering_results, table4
from conflictlab.tables import marked_latex, marked_markdown, write_csv, write_text

log = configure_logging(snakemake.log[0], "table4")
params = snakemake.params
inputs = dict(snakemake.input.items())


def read_all(paths):
    return pa.concat_tables(pq.read_table(p) for p in paths) if paths else None


variants = {variant: tuple(spec) for variant, spec in params.variants.items()}
attributions = read_all(inputs.get("attributions"))
balance = None if attributions is None else summarize_balance(attributions, n_resamples=params.bootstrap, seed=params.seed)
results = steering_results(variants, read_all(inputs.get("accuracy")), balance)

columns = [(m, t) for m in ("accuracy", "balance") for t in sorted(set(r["conflict_type"] for r in results.to_pylist() if r["metric"] == m),
           key=CONFLICT_TYPES.index)]
headers = [(f"{m}:{t}", f"{'Acc' if m == 'accuracy' else 'Bal'} {t}") for m, t in columns]
rows, notes = table4(results, table_variants=params.table4_variants, columns=columns)
caption = (
    f"Table 4: steered reruns on the test split (alpha = {params.alpha:g}; %). Acc higher is better, "
    f"Bal (Balance under scorer {params.scorer}) lower is better. Best bold, second underlined within each model block."
)
write_text(marked_markdown(rows, ["model", "method"], headers, caption=caption, notes=notes), snakemake.output.table4[0])
write_text(marked_latex(rows, ["model", "method"], headers, caption=caption, group="model"), snakemake.output.table4[1])
marks = {(r["model"], r["variant"], key): r[key]["mark"] for r in rows for key, _ in headers if r[key] is not None}
long = results.append_column(
    "mark", pa.array([marks.get((r["model"], r["variant"], f"{r['metric']}:{r['conflict_type']}"), "") for r in results.to_pylist()])
)
write_csv(long, snakemake.output.table4[2])

for model in params.models:
    title = f"{model}: steering strength (Figure 31; base = no steering)"
    save(alpha_sweep_curves(results, model=model, columns=columns, title=title), f"results/figures/fig31_alpha_{model}")
log.info("%d result rows; %s", results.num_rows, ", ".join(METHOD_LABELS[v[0]] for v in variants.values()))
for note in notes:
    log.info("note: %s", note)

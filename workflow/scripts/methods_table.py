"""Rule methods_table: the conflict-resolution methods table (md, csv) and its figure."""

from pathlib import Path

import pyarrow as pa

from conflictlab.arbitration.methods import method_cells as arbitration_cells
from conflictlab.conflictbank.methods import method_cells as conflictbank_cells
from conflictlab.conflicts.methods import method_cells as conflicts_cells
from conflictlab.contextconflict.methods import method_cells as contextconflict_cells
from conflictlab.contextconflict.variants import BASE, SteeredModel
from conflictlab.io import read_tables
from conflictlab.lm.methods import GREEDY, MethodRun
from conflictlab.logs import configure_logging
from conflictlab.report.figures import save
from conflictlab.report.methods import METHOD_CELL_SCHEMA, methods_figure, methods_table, paired_markdown, with_paired
from conflictlab.report.tables import marked_markdown, write_csv, write_text

log = configure_logging(snakemake.log[0], "methods_table")
params, out = snakemake.params, snakemake.output
inputs = dict(snakemake.input.items())


def label(run: str) -> tuple[str, str]:
    """(model, row label) of a rerun: greedy decoding and the unsteered rerun are both the "base" row."""
    method_run = MethodRun.parse_if_method(run)
    if method_run is not None:
        spelled = method_run.method.format()
        return method_run.model, BASE if spelled == GREEDY else spelled
    steered = SteeredModel.parse(run)
    return steered.model, steered.variant.format()


cc_runs = {run: label(run) for run in params.cc_runs}
other_runs = {
    run: label(run)
    for run in (MethodRun(model, method).format() for model in params.models for method in params.methods)
}
greedy = {model: MethodRun(model, GREEDY).format() for model in params.models}
read = {key: read_tables(paths) for key, paths in inputs.items()}

cells = contextconflict_cells(
    cc_runs,
    accuracy=read.get("accuracy"),
    attributions=read.get("attributions"),
    faithfulness=read.get("faithfulness"),
    n_resamples=params.bootstrap,
    seed=params.seed,
)
if "conflicts" in read:
    cells += conflicts_cells(read["conflicts"], other_runs)
if "conflictbank" in read:
    cells += conflictbank_cells(read["conflictbank"], other_runs, greedy=greedy)
if "arbitration" in read:
    cells += arbitration_cells(read["arbitration_instances"], read["arbitration"], other_runs)
cells = with_paired(cells, base=BASE, min_n=params.min_n_mark, seed=params.seed)
table = pa.Table.from_pylist(cells, schema=METHOD_CELL_SCHEMA)

order = list(dict.fromkeys([BASE, *(label(run)[1] for run in params.cc_runs), *(label(run)[1] for run in other_runs)]))
rows, columns, notes = methods_table(table, methods=order, min_n=params.min_n_mark)
caption = (
    "Conflict-resolution methods, per model (%): rows Base (greedy), the steering variants of Table 4, CAD "
    "(cad-a<alpha>), "
    "AdaCAD and context-faithful prompts (cfp-*); columns each benchmark's headline metrics. ContextConflict on the "
    "steering "
    f"test split (Bal under scorer {params.scorer}, lower is better; Fth judged by {params.judge_label}); CONFLICTS "
    "Vanilla "
    "prompt; ConflictBank MR per conflict kind on the greedy read-out's scored subset (OAR, CAR in the CSV); "
    "arbitration on "
    "the conflict prompts, where CAD and AdaCAD are label-bias calibration: without its evidence the prompt says "
    "nothing "
    "about the answer, so the contrast subtracts the model's prior over the letters A/B at one position. "
    "Context-faithful "
    "prompting runs zero-shot: the paper's counterfactual demonstrations are not implemented. Cells: value [95% CI] "
    "(n); no interval at n < 2. Best bold within a model block only where the method beats every other row in paired "
    f"tests on the same items (Holm-corrected, 5%), each with n >= {params.min_n_mark}, and the metric has a better "
    "direction. Below: each method's paired difference from Base (the CSV: difference, difference_low, "
    "difference_high, p_paired, n_pairs)."
)
write_text(
    marked_markdown(rows, ["model", "method"], columns, caption=caption, notes=notes)
    + "\n"
    + paired_markdown(table, base=BASE),
    out.md,
)
write_csv(table, out.csv)
save(
    methods_figure(table, methods=order, title="Conflict-resolution methods (95% CIs; dashed: each model's base)"),
    Path(out.png).with_suffix(""),
)
log.info("%d cells, %d rows; notes: %s", table.num_rows, len(rows), "; ".join(notes))

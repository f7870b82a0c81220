"""The table audit finds what the statistics review found (README, Statistics)."""

import pyarrow as pa
import pyarrow.parquet as pq

from conflictlab.report.audit import audit_folder, audit_rows, intervals


def test_interval_columns_are_found_by_name():
    columns = [
        "model",
        "n",
        "accuracy",
        "ci_low",
        "ci_high",
        "n_recall",
        "answer_recall",
        "ar_low",
        "ar_high",
        "delta_high",
        "delta_high_ci_low",
        "delta_high_ci_high",
        "fth_n",
        "faithfulness",
        "fth_ci_low",
        "fth_ci_high",
    ]
    assert intervals(columns) == [
        ("accuracy", "ci_low", "ci_high"),
        ("answer_recall", "ar_low", "ar_high"),
        ("delta_high", "delta_high_ci_low", "delta_high_ci_high"),
        ("faithfulness", "fth_ci_low", "fth_ci_high"),
    ]


def test_each_broken_convention_is_named():
    columns = ["model", "n", "value", "ci_low", "ci_high"]
    rows = [
        {"model": "a", "n": "5", "value": "0.5", "ci_low": "0.2", "ci_high": "0.8"},  # fine
        {"model": "b", "n": "5", "value": "0.9", "ci_low": "0.2", "ci_high": "0.8"},  # outside
        {"model": "c", "n": "1", "value": "1.0", "ci_low": "1.0", "ci_high": "1.0"},  # n < 2
        {"model": "d", "n": "1", "value": "1.0", "ci_low": "", "ci_high": ""},  # fine: no interval
        {
            "model": "e",
            "n": "5",
            "value": "1.0",
            "ci_low": "1.0",
            "ci_high": "1.0",
        },  # zero width: no spread, not precision
    ]
    problems = audit_rows("t.csv", columns, rows)
    assert problems == [
        "t.csv, line 3: value = 0.9 outside its interval [0.2, 0.8]",
        "t.csv, line 4: finite interval of value on n = 1",
        "t.csv, line 4: zero-width interval of value [1, 1] (no spread is no interval)",
        "t.csv, line 6: zero-width interval of value [1, 1] (no spread is no interval)",
    ]
    assert audit_rows("u.csv", ["value", "ci_low", "ci_high"], rows[:1]) == ["u.csv: no n column for value"]
    p_rows = [{"n": "3", "kendall_p": "0.0", "p_floor": "0.333"}, {"n": "3", "kendall_p": "0.5", "p_floor": "0.333"}]
    assert audit_rows("p.csv", ["n", "kendall_p", "p_floor"], p_rows) == [
        "p.csv, line 2: kendall_p = 0 (a p-value is never 0)",
        "p.csv, line 2: kendall_p = 0 below p_floor 0.333",
    ]


def test_audit_folder_reads_tables_and_spectral_parquet(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "ok.csv").write_text("n,accuracy,ci_low,ci_high\n10,0.5,0.2,0.8\n")
    spectral = tmp_path / "mechanistic" / "m"
    spectral.mkdir(parents=True)
    # the old jackknife: reported value outside its own zero-width interval
    pq.write_table(
        pa.table({"delta_er": [0.0002], "ci_low": [0.0008], "ci_high": [0.0008], "n_pairs": [4]}),
        spectral / "spectral.parquet",
    )
    assert audit_folder(tmp_path) == [
        "mechanistic/m/spectral.parquet, line 2: delta_er = 0.0002 outside its interval [0.0008, 0.0008]",
        "mechanistic/m/spectral.parquet, line 2: zero-width interval of delta_er [0.0008, 0.0008] (no spread is no "
        "interval)",
    ]


def test_values_named_like_bounds_and_n_by_name_end():
    columns = [
        "n",
        "delta_high",
        "delta_high_ci_low",
        "delta_high_ci_high",
        "delta_low",
        "delta_low_ci_low",
        "delta_low_ci_high",
        "n_recall_all_gold",
        "answer_recall_all_gold",
        "ag_low",
        "ag_high",
    ]
    assert intervals(columns) == [
        ("delta_high", "delta_high_ci_low", "delta_high_ci_high"),
        ("delta_low", "delta_low_ci_low", "delta_low_ci_high"),
        ("answer_recall_all_gold", "ag_low", "ag_high"),
    ]
    row = {
        "n": "9",
        "delta_high": "1",
        "delta_high_ci_low": "0",
        "delta_high_ci_high": "2",
        "delta_low": "1",
        "delta_low_ci_low": "0",
        "delta_low_ci_high": "2",
        "n_recall_all_gold": "1",
        "answer_recall_all_gold": "1",
        "ag_low": "0.2",
        "ag_high": "1",
    }
    assert audit_rows("t.csv", columns, [row]) == [
        "t.csv, line 2: finite interval of answer_recall_all_gold on n_recall_all_gold = 1"
    ]


def test_a_figure_saved_twice_gives_the_same_bytes(tmp_path):
    """Figures are outputs like any other: no creation date in the PDF, so a
    rerun at another time writes the same file (PNG and PDF)."""
    import matplotlib

    matplotlib.use("Agg")
    import time

    from conflictlab.report.figures import panel_grid, save

    def draw(stem):
        fig, (ax,) = panel_grid(1)
        ax.plot([0, 1, 2], [1, 0, 2])
        return [p.read_bytes() for p in save(fig, tmp_path / stem)]

    first = draw("a")
    time.sleep(1.1)  # a creation date would now differ
    assert draw("b") == first and b"CreationDate" not in first[1]

"""The released MemoTrap CSV files read into one table, one row per prompt.

The release (github.com/liujch1998/memo-trap, ``data/``, commit d87b26abf4402b76d167d1326798d21d7ea2127e) has four
files, :data:`FILES`, each with the columns ``prompt``, ``classes`` and ``answer_index``. ``classes`` is a Python
list literal of the candidate continuations as a string (``"[' heavy.', ' fonder.']"``; file 4 quotes its strings
with double quotes), read with :func:`ast.literal_eval` as the release's README advises; each continuation starts
with the space that separates it from the prompt. ``answer_index`` is the position of the continuation the
instruction asks for. The Hugging Face copy used by lm-evaluation-harness (``pminervini/inverse-scaling``, config
``memo-trap``) holds the same fields plus ``round`` and ``part``; this reader takes the CSV files.

CAD (Shi et al. 2023) contrasts a model with and without its *context*; on MemoTrap the context is the instruction
and the input the text to continue (CAD's example: context ``Write a quote that ends in the word "early":``, input
``Better late than``). :func:`split_prompt` makes that cut in each file's layout.
"""

from __future__ import annotations

import ast
import csv
import os
from pathlib import Path

import pyarrow as pa

FILES = ("1-proverb-ending", "2-proverb-translation", "3-hate-speech-ending", "4-history-of-science-qa")
COLUMNS = ("prompt", "classes", "answer_index")
# File 2's instruction ends with the foreign sentence and a line "to:"; the English text to continue follows.
TRANSLATION_CUT = "\nto:\n"

ITEM_SCHEMA = pa.schema(
    [
        pa.field("item_id", pa.string(), nullable=False),  # "<file>:<data row, from 1>"
        pa.field("file", pa.string(), nullable=False),
        pa.field("row", pa.int32(), nullable=False),
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("context", pa.string(), nullable=False),  # the instruction
        pa.field("query", pa.string(), nullable=False),  # the prompt without the instruction
        pa.field("classes", pa.list_(pa.string()), nullable=False),
        pa.field("answer_index", pa.int32(), nullable=False),
    ]
)


def split_prompt(file: str, prompt: str) -> tuple[str, str]:
    """(context, query) of a prompt of ``file`` (one of :data:`FILES`): the instruction, and the text after it.

    File 2 (translation) cuts after its last line ``to:``, whatever the foreign sentence before it holds. The
    others cut after the first colon that is followed by white space and not inside double quotes: the end of
    ``Write a quote that ends in the word "heavy":`` (files 1 and 3, whose quoted phrases may hold colons) and of
    ``What was the common wisdom before the following event:`` (file 4). ValueError where there is no such cut
    or nothing follows it.
    """
    if file not in FILES:
        raise ValueError(f"not a MemoTrap file: {file!r} (one of {', '.join(FILES)})")
    if file == "2-proverb-translation":
        at = prompt.rfind(TRANSLATION_CUT)
        cut = -1 if at < 0 else at + len(TRANSLATION_CUT)
    else:
        cut, quoted = -1, False
        for i, char in enumerate(prompt[:-1]):
            if char == '"':
                quoted = not quoted
            elif char == ":" and not quoted and prompt[i + 1].isspace():
                cut = i + 1
                break
    query = prompt[cut:].lstrip() if cut >= 0 else ""
    if not query:
        raise ValueError("no instruction to cut off: " + ("no line 'to:'" if file == FILES[1] else "no ': '"))
    return prompt[:cut], query


def parse_classes(text: str) -> list[str]:
    """The candidate continuations of a ``classes`` cell: a Python list literal of at least two distinct,
    non-empty strings; ValueError otherwise."""
    try:
        classes = ast.literal_eval(text)
    except (ValueError, SyntaxError) as error:
        raise ValueError(f"not a Python list literal ({error.__class__.__name__}): {text!r}") from None
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise ValueError(f"not a list of strings: {text!r}")
    if len(classes) < 2 or any(not c.strip() for c in classes) or len(set(classes)) < len(classes):
        raise ValueError(f"needs at least two distinct, non-empty continuations: {text!r}")
    return classes


def read_file(path: str | os.PathLike, file: str) -> list[dict]:
    """The rows of one released CSV ``path`` holding MemoTrap file ``file``, as :data:`ITEM_SCHEMA` dicts.

    A missing or extra column, or a bad cell, is a ValueError naming the path, the data row (from 1), its line
    and the field; nothing is skipped.
    """
    rows = []
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames}; the MemoTrap release has {', '.join(COLUMNS)}")
        for number, record in enumerate(reader, start=1):
            where = f"{path}, data row {number} (ending on line {reader.line_num})"
            if None in record or any(record[c] is None for c in COLUMNS):
                raise ValueError(f"{where}: {len(record)} cells, expected {len(COLUMNS)}")
            field = "classes"
            try:
                classes = parse_classes(record["classes"])
                field = "answer_index"
                index = int(record["answer_index"])
                if not 0 <= index < len(classes):
                    raise ValueError(f"{index} is not an index of {len(classes)} classes")
                field = "prompt"
                context, query = split_prompt(file, record["prompt"])
            except ValueError as error:
                raise ValueError(f"{where}: field '{field}': {error}") from None
            rows.append(
                {
                    "item_id": f"{file}:{number}",
                    "file": file,
                    "row": number,
                    "prompt": record["prompt"],
                    "context": context,
                    "query": query,
                    "classes": classes,
                    "answer_index": index,
                }
            )
    if not rows:
        raise ValueError(f"{path}: no data rows")
    return rows


def load(root: str | os.PathLike, files=FILES) -> pa.Table:
    """:data:`ITEM_SCHEMA` rows of ``root/<file>.csv`` for each of ``files`` (the release's ``data/`` folder)."""
    rows = [row for file in files for row in read_file(Path(root) / f"{file}.csv", file)]
    return pa.Table.from_pylist(rows, schema=ITEM_SCHEMA)

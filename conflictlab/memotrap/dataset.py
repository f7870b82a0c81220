"""The released MemoTrap CSV files read into one table, one row per prompt.

The release (github.com/liujch1998/memo-trap, ``data/``, commit d87b26abf4402b76d167d1326798d21d7ea2127e) has four
files, :data:`FILES` (:data:`RELEASE_ROWS` rows each), with the columns ``prompt``, ``classes`` and
``answer_index``. ``classes`` is a Python list literal of the candidate continuations held as a string, read with
:func:`ast.literal_eval` as the release's README advises: files 1-3 quote their strings with single quotes, except
where a class holds an apostrophe (``"[' proceed.', \" don't.\"]"``, rows 206 and 502 of file 1, 202 and 492 of
file 2), and file 4 with double quotes (``["" A"", "" B""]`` inside the CSV). Each continuation starts with the
space that separates it from the prompt; ``answer_index`` is the position of the one the prompt asks for. Files 1,
2 and 4 end their rows with CRLF and break lines inside a quoted cell with a bare LF (the prompts of files 2 and 4
span four lines); file 3 ends its rows with LF. A CRLF inside a cell (a copy whose line ends were converted, as git
does on checkout with ``core.autocrlf``) is read as LF, so every copy gives the release's prompts. The Hugging Face
copy used by lm-evaluation-harness (``pminervini/inverse-scaling``, config ``memo-trap``) holds the same fields
plus ``round`` and ``part``; this reader takes the CSV files.

CAD (Shi et al. 2023) contrasts a model with and without its *context*; on MemoTrap the context is what asks for
an ending other than the memorised one, and the input is the rest (CAD's example: context ``Write a quote that
ends in the word "early":``, input ``Better late than``). :func:`split_prompt` makes that cut in each file:

* ``1-proverb-ending``: the instruction ``Write a quote that ends in the word "heavy":``; the input is the
  proverb's beginning. Without the instruction the proverb's memorised ending is the natural continuation.
* ``2-proverb-translation``: ``Translate the following sentence from <language> into English.``, the foreign
  sentence and the line ``to:``; the input is the English beginning. The foreign sentence belongs to the context
  because it is what carries the altered ending: it is the evidence that contradicts the memorised proverb.
* ``3-hate-speech-ending``: the instruction (``Write a sign that says "no driving":``); the input is the
  beginning of a hateful text whose memorised ending is the discriminatory one.
* ``4-history-of-science-qa``: the question asking for what was believed *before* an event; the input is the
  event, the two options and ``Answer:``. Without the question, event and options read as "which is true?",
  which the memorised present-day fact answers. The file has two layouts (rows 1-368 and 369-736 of the release):
  the question first (``What was the common wisdom before the following event: <event>``) or after the event
  (``<event> Before the aforementioned event, what was the common wisdom?``), then ``A. ...``, ``B. ...`` and
  ``Answer:`` on lines of their own. In the second layout the context is not a prefix of the prompt: the query is
  the prompt with the question (and the space before it) taken out.

The with-context pass reads the prompt as released; the context-free pass reads the query
(:mod:`conflictlab.memotrap.scoring`).
"""

from __future__ import annotations

import ast
import csv
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

FILES = ("1-proverb-ending", "2-proverb-translation", "3-hate-speech-ending", "4-history-of-science-qa")
# Rows per file in the release (its README's table, and what the files hold): a full copy reads exactly these.
RELEASE_ROWS = dict(zip(FILES, (860, 843, 100, 736)))
COLUMNS = ("prompt", "classes", "answer_index")
# File 2's instruction ends with the foreign sentence and a line "to:"; the English text to continue follows.
TRANSLATION_CUT = "\nto:\n"
# File 4, question first: "What was ... the following event: <event>" on the prompt's first line.
QUESTION_FIRST = re.compile(r"What was [^:\n]*\bevent:(?=\s)")
# File 4, event first: the first line's last sentence is the question ("<event>. Before the aforementioned event,
# what was the common wisdom?"): a capital after a sentence's end, no further sentence end before the "?".
QUESTION_LAST = re.compile(r"(?<=[.!?\"')])\s+([A-Z][^.!?\n]*\?)$")

ITEM_SCHEMA = pa.schema(
    [
        pa.field("item_id", pa.string(), nullable=False),  # "<file>:<data row, from 1>"
        pa.field("file", pa.string(), nullable=False),
        pa.field("row", pa.int32(), nullable=False),
        pa.field("prompt", pa.string(), nullable=False),
        pa.field("context", pa.string(), nullable=False),  # the instruction (CAD's context)
        pa.field("query", pa.string(), nullable=False),  # the prompt without the instruction (CAD's input)
        pa.field("classes", pa.list_(pa.string()), nullable=False),
        pa.field("answer_index", pa.int32(), nullable=False),
    ]
)

# A row a reader given a rejection list (:func:`read_file`) set aside instead of stopping on.
REJECTION_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),
        pa.field("row", pa.int32(), nullable=False),  # data row, from 1
        pa.field("line", pa.int32(), nullable=False),  # the line the row starts on, from 1 (the header is line 1)
        pa.field("field", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
    ]
)


class RowError(ValueError):
    """A row that cannot be read; the message names the path, the data row, its lines and the field."""

    def __init__(self, path: str, row: int, first_line: int, last_line: int, field: str, problem: str):
        lines = f"line {first_line}" if first_line == last_line else f"lines {first_line}-{last_line}"
        super().__init__(f"{path}, data row {row} ({lines}): field '{field}': {problem}")
        self.path, self.row, self.line, self.field, self.problem = path, row, first_line, field, problem

    def rejection(self, file: str) -> dict:
        """The row of :data:`REJECTION_SCHEMA` that records it."""
        return {
            "path": self.path,
            "file": file,
            "row": self.row,
            "line": self.line,
            "field": self.field,
            "reason": self.problem,
        }


def _split_history_qa(prompt: str) -> tuple[str, str]:
    head, newline, rest = prompt.partition("\n")
    first = QUESTION_FIRST.match(head)
    if first:
        return prompt[: first.end()], prompt[first.end() :].lstrip()
    last = QUESTION_LAST.search(head)
    if last:
        return last[1], head[: last.start()] + newline + rest
    raise ValueError(
        "no question to cut off: the first line neither opens with 'What was ... event:' nor ends with a question"
    )


def split_prompt(file: str, prompt: str) -> tuple[str, str]:
    """(context, query) of a prompt of ``file`` (one of :data:`FILES`): the instruction, and the prompt without it.

    File 2 (translation) cuts after its last line ``to:``, whatever the foreign sentence before it holds. File 4
    takes the question out of the first line in either layout (see the module's docstring): up to the colon of
    ``What was ... the following event:``, or the last sentence where it is a question. Files 1 and 3 cut after the
    first colon that is followed by white space and not inside double quotes: the end of ``Write a quote that
    ends in the word "heavy":`` (the quoted phrases, and the text to continue, may hold colons). ValueError where
    there is no such cut or nothing is left of the prompt.
    """
    if file not in FILES:
        raise ValueError(f"not a MemoTrap file: {file!r} (one of {', '.join(FILES)})")
    if file == "4-history-of-science-qa":
        context, query = _split_history_qa(prompt)
    elif file == "2-proverb-translation":
        at = prompt.rfind(TRANSLATION_CUT)
        if at < 0:
            raise ValueError("no instruction to cut off: no line 'to:'")
        context, query = prompt[: at + len(TRANSLATION_CUT)], prompt[at + len(TRANSLATION_CUT) :].lstrip()
    else:
        cut, quoted = -1, False
        for i, char in enumerate(prompt[:-1]):
            if char == '"':
                quoted = not quoted
            elif char == ":" and not quoted and prompt[i + 1].isspace():
                cut = i + 1
                break
        if cut < 0:
            raise ValueError("no instruction to cut off: no ': ' outside double quotes")
        context, query = prompt[:cut], prompt[cut:].lstrip()
    if not query.strip():
        raise ValueError("nothing follows the instruction")
    return context, query


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


def _records(path: str, handle) -> Iterator[tuple[int, int, int, dict]]:
    """(data row, first line, last line, cells) of each row of an open CSV file, after checking its header."""
    reader = csv.DictReader(handle)
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"{path}: columns {reader.fieldnames}; the MemoTrap release has {', '.join(COLUMNS)}")
    last = reader.line_num
    for number, record in enumerate(reader, start=1):
        yield number, last + 1, reader.line_num, record
        last = reader.line_num


def _item(file: str, number: int, record: dict) -> tuple[dict | None, str, str]:
    """(the :data:`ITEM_SCHEMA` row of a record, or None; the field at fault; why)."""
    if None in record or any(record[c] is None for c in COLUMNS):
        return None, "(row)", f"{len(record)} cells, expected {len(COLUMNS)}"
    field = "classes"
    try:
        classes = parse_classes(record["classes"])
        field = "answer_index"
        index = int(record["answer_index"])
        if not 0 <= index < len(classes):
            raise ValueError(f"{index} is not an index of {len(classes)} classes")
        field = "prompt"
        prompt = record["prompt"].replace("\r\n", "\n")
        context, query = split_prompt(file, prompt)
    except ValueError as error:
        return None, field, str(error)
    item = {"item_id": f"{file}:{number}", "file": file, "row": number, "prompt": prompt, "context": context}
    item.update(query=query, classes=classes, answer_index=index)
    return item, "", ""


def read_file(path: str | os.PathLike, file: str, rejections: list | None = None) -> list[dict]:
    """The rows of one released CSV ``path`` holding MemoTrap file ``file``, as :data:`ITEM_SCHEMA` dicts.

    A bad row is a :class:`RowError` naming the path, the data row (from 1), its lines and the field; given a
    list ``rejections``, the row is appended to it as a :data:`REJECTION_SCHEMA` dict instead and reading goes on.
    A file that cannot be read as a whole (not UTF-8, a missing or extra column, no data row) is a ValueError
    naming the path either way.
    """
    path = os.fspath(path)
    rows, bad = [], 0
    try:
        # utf-8-sig: a copy saved with a byte-order mark (as spreadsheet programs do) keeps its first column's name
        with open(path, newline="", encoding="utf-8-sig") as handle:
            for number, first, last, record in _records(path, handle):
                item, field, problem = _item(file, number, record)
                if item is not None:
                    rows.append(item)
                    continue
                error = RowError(path, number, first, last, field, problem)
                if rejections is None:
                    raise error
                rejections.append(error.rejection(file))
                bad += 1
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text (byte {error.start}: {error.reason})") from None
    if not rows and not bad:
        raise ValueError(f"{path}: no data rows")
    return rows


def load(root: str | os.PathLike, files=FILES, rejections: list | None = None) -> pa.Table:
    """:data:`ITEM_SCHEMA` rows of ``root/<file>.csv`` for each of ``files`` (the release's ``data/`` folder);
    ``rejections`` as in :func:`read_file`."""
    rows = [row for file in files for row in read_file(Path(root) / f"{file}.csv", file, rejections)]
    return pa.Table.from_pylist(rows, schema=ITEM_SCHEMA)

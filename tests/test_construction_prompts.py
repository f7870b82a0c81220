"""Every ContextConflict construction prompt is byte-equal to the paper's text copy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conflictlab.construction import prompts

# ../shared beside the checkout (DESIGN.md), or the team's shared folder for a worktree deeper down
SHARED = [
    Path(__file__).resolve().parents[2] / "shared" / "papers" / "000_9b6c6cf2b7e20b09.txt",
    Path("/work/shared/papers/000_9b6c6cf2b7e20b09.txt"),
]

# (constant, the figure box's title in the copy, what follows the box in the copy)
BOXES = [
    (
        prompts.MISINFORMATION_QUESTION,
        "Misinformation: Question Generation",
        "\n\nMisinformation: Conflicting Evidence Generation",
    ),
    (prompts.MISINFORMATION_EVIDENCE, "Misinformation: Conflicting Evidence Generation", "\n\nFigure 6:"),
    (prompts.INFERENTIAL_PREMISES, "FOLIO: Conflicting Premise Generation", "Figure 7:"),
    (prompts.TEMPORAL_QUESTION, "Temporal Conflicts: Question Generation", "Figure 9:"),
    (prompts.GENERAL_QUESTION, "General ConflictBank: Question Generation", "Figure 10:"),
]


def _unescape(text: str) -> str:
    """The copy's Markdown escapes removed, and the LaTeX source it prints
    beside a rendered formula ("≤\\\\leq20" is "≤20")."""
    text = text.replace("\\\\leq", "")
    return re.sub(r"\\([\\`*_{}\[\]()#+\-.!|~<>])", r"\1", text)


@pytest.fixture(scope="module")
def copy_text() -> str:
    for path in SHARED:
        if path.exists():
            return path.read_text(encoding="utf-8")
    pytest.skip("the paper's text copy (../shared/papers/000_9b6c6cf2b7e20b09.txt) is not on this machine")


@pytest.mark.parametrize("constant, title, after", BOXES, ids=[b[1] for b in BOXES])
def test_prompt_is_byte_equal_to_the_papers_text_copy(copy_text, constant, title, after):
    start = copy_text.index(title) + len(title)
    assert _unescape(copy_text[start : copy_text.index(after, start)]).encode() == constant.encode()


def test_registry_names_every_quoted_prompt_with_its_figure():
    assert {text for text, _ in prompts.PROMPTS.values()} == {b[0] for b in BOXES}
    assert all(source.startswith("Appendix B.1, Figure") for _, source in prompts.PROMPTS.values())


def test_filling_replaces_only_the_printed_placeholders():
    filled = prompts.general_question("Ada", "Ada worked for X.", "Ada worked for Y.")
    assert filled.startswith(prompts.GENERAL_QUESTION)  # the quoted text untouched, "{subject}" included
    assert filled.endswith("Subject: Ada\nDefault claim: Ada worked for X.\nConflicting claim: Ada worked for Y.")
    assert "{claim}" not in prompts.misinformation_question("c", ["e1", "e2"])
    assert '["p1", "p2"]' in prompts.inferential_premises(["p1", "p2"], "h")

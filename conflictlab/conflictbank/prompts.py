"""ConflictBank's prompt settings.

The two instructions and the layout ("Evidence: …\\nQuestion: …\\nA. …
Answer:", the temporal suffix, the semantic description line with its
"quesion" typo) are the protocol of the authors' ``prompt.py``
(github.com/zhaochen0110/conflictbank, commit
3024a20ed69e290d616649547c3e533bcaf3c841, CC BY-SA 4.0), quoted exactly.
Their twelve settings always put the correct evidence first in a mixed
prompt; the paper also studies the order (later evidence is preferred), so
every mixed setting here has a ``_reversed`` twin with the conflicting
evidence first, which the authors' code lacks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from conflictlab.lm.methods import INSTRUCTION, PROMPT_STYLES, opinion_context, opinion_question

INSTRUCTION_WITHOUT_EVIDENCE = "According to your knowledge, choose the best choice from the following options."
INSTRUCTION_WITH_EVIDENCE = (
    "According to the evidence provided and your knowledge, choose the best choice from the following options."
)


@dataclass(frozen=True)
class Setting:
    """One prompt setting: which evidence, in which order, and whether the
    conflict's description (time span or subject sense) is added."""

    name: str
    evidence: tuple[str, ...]
    description: str | None = None

    @property
    def conflict(self) -> str | None:
        """The conflict kind this setting presents, None for default/correct."""
        kinds = [kind for kind in self.evidence if kind != "default"]
        return kinds[0] if kinds else None

    @property
    def mixed(self) -> bool:
        return len(self.evidence) == 2

    @property
    def conflict_first(self) -> bool:
        return self.mixed and self.evidence[0] != "default"


def _settings() -> tuple[Setting, ...]:
    settings = [Setting("default", ()), Setting("correct", ("default",))]
    settings += [Setting(kind, (kind,)) for kind in ("misinformation", "temporal", "semantic")]
    settings += [Setting(f"{kind}_description", (kind,), kind) for kind in ("temporal", "semantic")]
    mixed = [Setting(f"correct_{kind}", ("default", kind)) for kind in ("misinformation", "temporal", "semantic")]
    mixed += [Setting(f"correct_{kind}_description", ("default", kind), kind) for kind in ("temporal", "semantic")]
    reversed_ = [Setting(f"{s.name}_reversed", tuple(reversed(s.evidence)), s.description) for s in mixed]
    return tuple(settings + mixed + reversed_)


SETTINGS: tuple[Setting, ...] = _settings()
# Where a conflict-resolution method is read out (conflictlab.conflictbank.methods):
# one setting per conflict kind, its evidence alone; the greedy read-out also
# in the settings that fix the scored subset.
METHOD_SETTINGS = ("misinformation", "temporal", "semantic")
SUBSET_SETTINGS = ("default", "correct")
SETTINGS_BY_NAME = {setting.name: setting for setting in SETTINGS}
AUTHOR_SETTINGS = tuple(s.name for s in SETTINGS if not s.name.endswith("_reversed"))


def render_prompt(record: Mapping, setting: Setting, style: str | None = None) -> str:
    """The prompt text of ``record`` (a row of ``RECORD_SCHEMA``) under ``setting``.

    ``style``: a context-faithful prompt style (Zhou et al. 2023;
    :data:`conflictlab.lm.methods.PROMPT_STYLES`) applied to the authors'
    prompt: ``opinion`` puts the evidence in the narrator's mouth and asks
    for the narrator's opinion, ``instructed`` puts the paper's instruction
    first, ``opinion_instructed`` does both. It changes only a prompt with
    evidence (without any, there is no context to be faithful to).
    """
    if style is not None and style not in PROMPT_STYLES:
        raise ValueError(f"not a context-faithful prompt style: {style!r} (one of {', '.join(PROMPT_STYLES)})")
    style = style if setting.evidence else None
    question = record["question"]
    if setting.description == "temporal":
        span = list(record["temporal_span"])
        question += f" in {span[0]}" if len(span) == 1 else f" from {span[0]} to {span[1]}"
    if style and "opinion" in style:
        question = opinion_question(question)
    lines = [f"Question: {question}"]
    if setting.description == "semantic":
        lines.append(f"{record['subject']} in this quesion means {record['semantic_description']}")
    lines += [f"{letter}. {option}" for letter, option in zip("ABCD", record["options"])]
    body = "\n".join(lines) + "\nAnswer:"
    if not setting.evidence:
        return f"{INSTRUCTION_WITHOUT_EVIDENCE}\n\n{body}"
    evidence = "\n".join(record[f"{kind}_evidence"] for kind in setting.evidence)
    if style and "opinion" in style:
        evidence = opinion_context(evidence)
    prompt = f"{INSTRUCTION_WITH_EVIDENCE}\n\nEvidence: {evidence}\n{body}"
    return f"{INSTRUCTION}\n\n{prompt}" if style and "instructed" in style else prompt


def settings_named(names) -> list[Setting]:
    unknown = [name for name in names if name not in SETTINGS_BY_NAME]
    if unknown:
        raise ValueError(f"unknown ConflictBank settings {unknown}; known: {list(SETTINGS_BY_NAME)}")
    return [SETTINGS_BY_NAME[name] for name in names]

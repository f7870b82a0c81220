"""Which of a paper's model names is one of this run's models.

The papers name models their own way ("Gemma 3 27B", "GPT-OSS-20B",
"llama-3.1-8b-instruct", "Mistral-7B"); a run names them by its config
keys, whose entries hold a hub repository (``hf:<repo>``) or a hosted
model's id (``hosted:<id>``). :func:`paper_model_name` matches the two, for
the model profile pages and the reproduction report alike.

A match is exact after dropping case and punctuation (``_normal``), so a
size or variant suffix never matches loosely: ``Llama-3.1-8B`` is not
``Llama-3.1-8B-Instruct``, ``Gemini 2.5 Flash`` is not its Thinking variant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from conflictlab.run_config import conflicts_judge

# Names the papers use that spell neither the config name nor the hub
# repository's own name (nor a hosted id), by hub repository or hosted id
# without its date (lower case). Each is the model config/paper.yaml runs for
# that paper's rows.
PAPER_MODEL_NAMES: dict[str, tuple[str, ...]] = {
    # ContextConflict, §3.3 and Figure 25: Anthropic's id orders the words the other way
    "claude-sonnet-4-5": ("claude-4.5-sonnet",),
    # CONFLICTS, Tables 4-5
    "google/gemma-3-27b-it": ("Gemma 3 27B",),
    "qwen/qwen2.5-72b-instruct": ("Qwen 2.5 72B",),
    # ConflictBank (§3.1, C.2: its continued-pre-training models)
    "mistralai/mistral-7b-v0.1": ("Mistral-7B",),
    "meta-llama/meta-llama-3-8b": ("LLaMA3-8B",),
    # CAD, Table 3: its GPT-Neo sizes are rounded ("GPT-Neo 3B" is the 2.7B release; "GPT-Neo 20B" is GPT-NeoX-20B)
    "eleutherai/gpt-neo-2.7b": ("GPT-Neo 3B",),
    "eleutherai/gpt-neox-20b": ("GPT-Neo 20B",),
}


# Models a paper's rows name that no config can run, with the reason (by the
# paper's name). tests/test_paper_configs.py requires every other model a row
# names to be in that paper's config.
UNRUNNABLE_MODELS: dict[str, str] = {}

# A row's model that names a group ("the best of the seven models", "each of
# its seven models", "three models") names no one model: no config entry can
# match it, so such a row must not be looked up in a model list.
_GROUP = re.compile(r"\bmodels?\b", re.I)


def named_models(model: str | None) -> list[str]:
    """The models a paper row's ``model`` names: none for None (a number about
    the data or the study) or a group (its text has the word "model" or
    "models"), else each of its comma-separated names
    (``"Llama-3.1-8B-Instruct, GPT-OSS-20B"`` names two)."""
    if model is None or _GROUP.search(model):
        return []
    return [name.strip() for name in model.split(",") if name.strip()]


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "", name.lower())


def spellings(model: str, source: str | None) -> list[str]:
    """Every name ``model`` may go by in a paper: its config name, its hub
    repository's name (``meta-llama/Llama-3.2-1B`` is ``Llama-3.2-1B``) and
    the names of :data:`PAPER_MODEL_NAMES`, or a hosted model's id with a
    trailing date dropped (``gpt-4o-2024-08-06`` is GPT-4o) and its names in
    :data:`PAPER_MODEL_NAMES`, unless the config name extends it (a variant of
    that model)."""
    names = [model]
    if source and source.startswith("hf:"):
        repo = source[3:]
        names += [repo.rsplit("/", 1)[-1], *PAPER_MODEL_NAMES.get(repo.lower(), ())]
    elif source and source.startswith("hosted:"):
        # a snapshot date, 2024-08-06 (OpenAI) or 20250929 (Anthropic), names no other model
        hosted = re.sub(r"-\d{4}-?\d{2}-?\d{2}$", "", source[len("hosted:") :])
        # A config name that extends the id names a variant of that model
        # (gemini-2.5-flash-thinking calls gemini-2.5-flash with thinking on):
        # the bare id is then another configuration's name, not this one's.
        if not _normal(model).startswith(_normal(hosted)) or _normal(model) == _normal(hosted):
            names += [hosted, *PAPER_MODEL_NAMES.get(hosted.lower(), ())]
    return names


def paper_model_name(model: str, source: str | None, paper_names: Iterable[str]) -> str | None:
    """The first of ``paper_names`` that names ``model`` (config name, with
    its ``source``: ``hf:<repo>``, ``hosted:<id>`` or any other), else None."""
    wanted = {_normal(s) for s in spellings(model, source)}
    return next((name for name in paper_names if _normal(name) in wanted), None)


def source(entry: Mapping) -> str:
    """A config ``models`` entry's source as :func:`spellings` takes it: ``hf:<repo>`` (or another
    local source) or ``hosted:<id>``."""
    return entry.get("source") or f"hosted:{entry['hosted']['model']}"


def model_sources(config: Mapping, lists: Iterable[Iterable[str]]) -> dict[str, str]:
    """``{model: source}`` of every configured model named in one of ``lists``."""
    named = {m for models in lists for m in models}
    return {name: source(entry) for name, entry in config["models"].items() if name in named}


def instruments(config: Mapping) -> dict[str, list[str]]:
    """The models a paper's number may depend on besides its own, by
    :class:`conflictlab.report.reproduction.Instrument` role: ``judge``
    (config ``judges``: ContextConflict's rows), ``conflicts judge`` (the
    CONFLICTS judge, ``conflicts.judge`` over ``judges``) and ``scorer``."""
    return {
        "judge": [config["judges"]["model"]],
        "conflicts judge": [conflicts_judge(config)["model"]],
        "scorer": list(config["scorers"]),
    }

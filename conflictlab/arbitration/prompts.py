"""Arbitration instances and their prompts: every block of text the models read.

The prompt blocks (framing, instruction, series, summary, tool forecast,
question, answer options) follow the paper's appendix. Each instance gives
the conflict prompt in both evidence orders and the unimodal reference.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pyarrow as pa

from conflictlab.arbitration.text import UNRELIABLE_NOTES, describe
from conflictlab.arbitration.trajectories import THRESHOLD, TrajectoryConfig, sample_trajectory
from conflictlab.lm.chat_template import render_chat
from conflictlab.lm.methods import INSTRUCTION, PROMPT_STYLES, opinion_context, opinion_question

SETTINGS = ("modality", "recency", "reliability", "tool")
ORDERS = ("aligned_first", "aligned_last")

DOMAINS = {
    "generic": {
        "entity": "system",
        "risk": "risk",
        "framing": "The system has a risk between 0 and 1, where higher values indicate greater risk and lower values "
        "indicate lower risk.",
    },
    "healthcare": {
        "entity": "patient",
        "risk": "deterioration risk",
        "framing": "The patient has a deterioration risk between 0 and 1, where higher values indicate greater risk of "
        "clinical deterioration and lower values indicate lower risk.",
    },
    "industrial": {
        "entity": "machine",
        "risk": "failure risk",
        "framing": "The machine has a failure risk between 0 and 1, where higher values indicate greater risk of "
        "failure, and lower values indicate lower risk.",
    },
    "finance": {
        "entity": "asset",
        "risk": "financial distress risk",
        "framing": "The asset has a financial distress risk between 0 and 1, where higher values indicate greater risk "
        "of financial distress and lower values indicate lower risk.",
    },
}


@dataclass(frozen=True)
class AnswerChoices:
    a_means: str = "high"  # label of option "A"
    a_first: bool = True  # "A) ..." listed before "B) ..."

    def letter(self, label: str) -> str:
        return "A" if label == self.a_means else "B"

    def lines(self) -> list[str]:
        b_means = "low" if self.a_means == "high" else "high"
        options = [f"A) {self.a_means}", f"B) {b_means}"]
        return options if self.a_first else options[::-1]


def _clock(start_minutes: int, count: int) -> list[str]:
    return [f"{(start_minutes + i) // 60 % 24:02d}:{(start_minutes + i) % 60:02d}" for i in range(count)]


def _series_block(values: list[float | None], times: list[str]) -> str:
    lines = [f"{t}: {'nan' if v is None else f'{v:.2f}'}" for t, v in zip(times, values)]
    return "Time series:\n" + "\n".join(lines)


def _instruction(setting: str, condition: str, context: str, entity: str, risk: str) -> str:
    task = f"The task is to predict whether the {entity}'s {risk} at the target time point will be high or low."
    single = {
        "numbers": "You are given a time series of numerical risk observations over a past time period.",
        "text": "You are given a text summary of risk observations over a past time period.",
    }
    if setting == "tool" and condition == "conflict":
        return (
            f"{single[context][:-1]}. An external forecasting tool has analyzed these same observations and "
            f"produced a predicted risk value at a future time point. {task}"
        )
    if condition == "unimodal":
        return f"{single[context]} {task}"
    if setting == "recency":
        return (
            "You are given two timestamped sources describing risk over past time periods: a text summary of risk "
            "observations and a time series of numerical risk observations. The two sources may refer to different "
            f"time windows, and one source may be earlier or more recent than the other. {task}"
        )
    return (
        "You are given two sources describing risk over the same time window: a text summary of risk observations "
        f"and a time series of numerical risk observations. {task}"
    )


INSTANCE_SCHEMA = pa.schema(
    [
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("setting", pa.string(), nullable=False),
        pa.field("condition", pa.string(), nullable=False),  # conflict | unimodal
        pa.field("order", pa.string()),  # aligned_first | aligned_last (conflict only)
        pa.field(
            "aligned_source", pa.string(), nullable=False
        ),  # text | numbers (tool setting: the context's modality)
        pa.field("domain", pa.string(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("label", pa.string(), nullable=False),
        pa.field("answer_letter", pa.string(), nullable=False),
        pa.field("target", pa.float64(), nullable=False),
        pa.field("target_time", pa.string(), nullable=False),
        pa.field("latent", pa.string(), nullable=False),  # JSON: trajectories, slopes, margins, forecast, masks
        pa.field("prompt", pa.string(), nullable=False),
        # The prompt's evidence blocks (as they appear in it, in its order) and
        # its question line: what a conflict-resolution method removes or rewrites.
        pa.field("context", pa.string(), nullable=False),
        pa.field("question", pa.string(), nullable=False),
    ]
)


@dataclass
class ArbitrationConfig:
    n_per_setting: int = 16  # instances per setting (half high, half low)
    seeds: tuple[int, ...] = (0, 1, 2)
    domain: str = "generic"
    choices: AnswerChoices = field(default_factory=AnswerChoices)
    trajectory: TrajectoryConfig = field(default_factory=TrajectoryConfig)
    settings: tuple[str, ...] = SETTINGS
    tool_min_distance: float = 0.15

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


def generate_instances(cfg: ArbitrationConfig, *, tag: str = "main") -> pa.Table:
    """Every prompt of one configuration: per seed, setting and instance, the
    conflict prompt in both orders and the unimodal reference.

    The same ``cfg`` always gives the same table (all randomness is seeded
    from the seed, the setting and the instance index).
    """
    cfg.trajectory.validate()
    if cfg.n_per_setting % 2:
        raise ValueError(f"n_per_setting must be even (balanced labels), got {cfg.n_per_setting}")
    if cfg.domain not in DOMAINS:
        raise ValueError(f"unknown domain {cfg.domain!r}; known: {sorted(DOMAINS)}")
    rows = []
    for seed in cfg.seeds:
        for setting in cfg.settings:
            if setting not in SETTINGS:
                raise ValueError(f"unknown arbitration setting {setting!r}; known: {SETTINGS}")
            for index in range(cfg.n_per_setting):
                rows += _instance_rows(cfg, seed, setting, index, tag)
    return pa.Table.from_pylist(rows, schema=INSTANCE_SCHEMA)


def _instance_rows(cfg: ArbitrationConfig, seed: int, setting: str, index: int, tag: str) -> list[dict]:
    setting_index = SETTINGS.index(setting)
    nprng = np.random.default_rng([seed, setting_index, index])
    textrng = random.Random(f"{seed}:{setting}:{index}")
    domain = DOMAINS[cfg.domain]
    t = cfg.trajectory
    label = "high" if index % 2 == 0 else "low"
    opposite = "low" if label == "high" else "high"
    # The aligned modality alternates with every label pair, so it is
    # balanced against the label too.
    aligned = "numbers" if (index // 2) % 2 == 0 else "text"
    other = "text" if aligned == "numbers" else "numbers"
    start = int(nprng.integers(8 * 60, 16 * 60))
    truth = sample_trajectory(label, t, nprng)
    latent: dict = {"truth": asdict(truth)}

    if setting == "recency":
        # The aligned (more recent) window ends at the question's horizon;
        # the other, opposite-label window ends just before it starts.
        stale = sample_trajectory(opposite, t, nprng)
        latent["other"] = asdict(stale)
        recent_times = _clock(start + t.length, t.length)
        stale_times = _clock(start, t.length)
        windows = {aligned: (truth, recent_times), other: (stale, stale_times)}
        end_time_minutes = start + 2 * t.length - 1
    else:
        times = _clock(start, t.length)
        end_time_minutes = start + t.length - 1
        if setting in ("modality", "reliability"):
            conflicting = sample_trajectory(opposite, t, nprng)
            latent["other"] = asdict(conflicting)
            windows = {aligned: (truth, times), other: (conflicting, times)}
        else:  # tool: the context alone, aligned with the truth
            aligned, other = ("numbers" if (index // 2) % 2 == 0 else "text"), "tool"
            windows = {aligned: (truth, times)}
    target_time = _clock(end_time_minutes + t.horizon, 1)[0]

    def block(source: str, unreliable: bool = False) -> str:
        if source == "tool":
            side = 1.0 if opposite == "high" else -1.0
            value = THRESHOLD + side * nprng_tool.uniform(cfg.tool_min_distance, 0.5)
            latent["tool_forecast"] = value
            return f"External forecasting tool risk prediction at time {target_time}: {value:.2f}"
        traj, ts = windows[source]
        if source == "numbers":
            values: list[float | None] = list(traj.values)
            if unreliable:
                hidden = nprng_mask.choice(len(values), size=len(values) // 2, replace=False)
                latent["nan_positions"] = sorted(int(i) for i in hidden)
                for i in hidden:
                    values[i] = None
            return _series_block(values, ts)
        text = describe(traj, ts, domain["risk"], textrng)
        if unreliable:
            text += " " + textrng.choice(UNRELIABLE_NOTES)
        return f'Text summary:\n"{text}"'

    # Separate streams so that adding a block never shifts another's draws.
    nprng_tool = np.random.default_rng([seed, setting_index, index, 1])
    nprng_mask = np.random.default_rng([seed, setting_index, index, 2])
    aligned_block = block(aligned)
    other_block = block(other, unreliable=(setting == "reliability"))
    question = (
        f"Question: Based on the information above, will the {domain['entity']}'s {domain['risk']} at time "
        f"{target_time} be high (>{THRESHOLD}) or low (<{THRESHOLD})?"
    )
    closing = (
        "\n".join(cfg.choices.lines())
        + "\n\nAnswer with only A or B. Do not add any explanation or additional text.\n\nAnswer:"
    )

    def prompt(condition: str, blocks: list[str]) -> dict:
        head = [domain["framing"], _instruction(setting, condition, aligned, domain["entity"], domain["risk"])]
        return {
            "prompt": "\n\n".join(head + blocks + [question, closing]),
            "context": "\n\n".join(blocks),
            "question": question,
        }

    base = {
        "setting": setting,
        # In the tool setting the context (numbers or text) is the aligned
        # source: keep its modality so the two contexts are not pooled.
        "aligned_source": aligned,
        "domain": cfg.domain,
        "seed": seed,
        "label": label,
        "answer_letter": cfg.choices.letter(label),
        "target": truth.target,
        "target_time": target_time,
        "latent": json.dumps(latent, sort_keys=True),
    }
    stem = f"{tag}/{setting}/s{seed}/{index}"
    return [
        {
            **base,
            "instance_id": f"{stem}/conflict/aligned_first",
            "condition": "conflict",
            "order": "aligned_first",
            **prompt("conflict", [aligned_block, other_block]),
        },
        {
            **base,
            "instance_id": f"{stem}/conflict/aligned_last",
            "condition": "conflict",
            "order": "aligned_last",
            **prompt("conflict", [other_block, aligned_block]),
        },
        {
            **base,
            "instance_id": f"{stem}/unimodal",
            "condition": "unimodal",
            "order": None,
            **prompt("unimodal", [aligned_block]),
        },
    ]


def method_prompt(instance: Mapping, style: str | None = None) -> str:
    """An instance's prompt (an ``INSTANCE_SCHEMA`` row) for a
    conflict-resolution method: ``style`` None, the prompt itself; a
    context-faithful style (:data:`conflictlab.lm.methods.PROMPT_STYLES`),
    its evidence as the narrator's statement and the question asked of the
    narrator's opinion (``opinion``), the paper's instruction first
    (``instructed``), or both."""
    prompt, context, question = instance["prompt"], instance["context"], instance["question"]
    if style is None:
        return prompt
    if style not in PROMPT_STYLES:
        raise ValueError(f"not a context-faithful prompt style: {style!r} (one of {', '.join(PROMPT_STYLES)})")
    if "opinion" in style:
        prompt = _replace_once(
            _replace_once(prompt, context, opinion_context(context)), question, opinion_question(question)
        )
    return f"{INSTRUCTION}\n\n{prompt}" if "instructed" in style else prompt


# What the question asks of the evidence; the closed-book prompt asks it plainly.
_EVIDENCE_QUESTION = "Question: Based on the information above, will "
_TASK = "The task is to predict"


def context_free_prompt(instance: Mapping) -> str:
    """The closed-book prompt CAD and AdaCAD contrast an instance's prompt
    with (one for every setting, written here): the domain's framing, the
    task sentence, the question without "Based on the information above",
    the answer options and the closing instruction. The instruction's
    description of the sources and every evidence block are left out, so it
    never mentions evidence it does not hold::

        {framing}\n\n{task}\n\nQuestion: Will the {entity}'s {risk} at time {t} be high (>…) or low (<…)?\n\n{options
    and closing}

    Without its evidence the prompt holds nothing about the answer, so the
    context-free logits are the model's prior over the answer letters, and
    CAD here is label-bias calibration (the methods table says so)."""
    prompt, context, question = instance["prompt"], instance["context"], instance["question"]
    _replace_once(prompt, context, context)  # exactly once, else a clear error
    head, rest = prompt.split("\n\n" + context, 1)
    framing, _, instruction = head.partition("\n\n")
    if _TASK not in instruction or not question.startswith(_EVIDENCE_QUESTION) or question not in rest:
        raise ValueError(
            f"arbitration prompt of {instance.get('instance_id')!r}: not in the form the closed-book prompt rewrites"
        )
    task = instruction[instruction.index(_TASK) :]
    closed_question = "Question: Will " + question.removeprefix(_EVIDENCE_QUESTION)
    closing = rest[rest.index(question) + len(question) :]
    return f"{framing}\n\n{task}\n\n{closed_question}{closing}"


def _replace_once(text: str, old: str, new: str) -> str:
    if text.count(old) != 1:
        raise ValueError(
            f"arbitration prompt: expected its piece {old[:40]!r}... exactly once, found it {text.count(old)} times"
        )
    return text.replace(old, new)


def encode_arbitration_prompt(tokenizer, prompt: str) -> list[int]:
    """The prompt as the user turn of a chat model, or as plain text."""
    if getattr(tokenizer, "chat_template", None):
        return render_chat(tokenizer, [{"role": "user", "content": prompt}], tokenize=True)
    return list(tokenizer(prompt, add_special_tokens=True)["input_ids"])


def config_from_mapping(settings: dict, *, n_per_setting: int, seeds) -> ArbitrationConfig:
    """An ArbitrationConfig from the workflow config's ``arbitration`` mapping."""
    choices = settings.get("answer_choices", {})
    traj = settings.get("trajectory", {})
    return ArbitrationConfig(
        n_per_setting=n_per_setting,
        seeds=tuple(seeds),
        domain=settings.get("domain", "generic"),
        choices=AnswerChoices(a_means=choices.get("a_means", "high"), a_first=choices.get("a_first", True)),
        trajectory=TrajectoryConfig(
            length=traj.get("length", 16),
            horizon=traj.get("horizon", 1),
            sigma=traj.get("sigma", 0.05),
            margin=tuple(traj.get("margin", (0.35, 0.45))),
        ),
        tool_min_distance=settings.get("tool_min_distance", 0.15),
    )


def sensitivity_variants(base: ArbitrationConfig, sweep: dict) -> list[tuple[str, ArbitrationConfig]]:
    """The baseline and one-factor-at-a-time variants, in the modality setting."""
    base = replace(base, settings=("modality",))
    variants = [("sens/baseline", base)]
    for domain in sweep.get("domains", []):
        variants.append((f"sens/domain={domain}", replace(base, domain=domain)))
    for c in sweep.get("answer_choices", []):
        choice = AnswerChoices(a_means=c["a_means"], a_first=c["a_first"])
        variants.append(
            (
                f"sens/choices=A-{choice.a_means}-{'first' if choice.a_first else 'second'}",
                replace(base, choices=choice),
            )
        )
    for length in sweep.get("lengths", []):
        variants.append((f"sens/T={length}", replace(base, trajectory=replace(base.trajectory, length=length))))
    for sigma in sweep.get("sigmas", []):
        variants.append((f"sens/sigma={sigma}", replace(base, trajectory=replace(base.trajectory, sigma=sigma))))
    for margin in sweep.get("margins", []):
        variants.append(
            (
                f"sens/margin={margin[0]}-{margin[1]}",
                replace(base, trajectory=replace(base.trajectory, margin=tuple(margin))),
            )
        )
    return variants


def instance_unit(instance_id: str) -> str:
    """The instance an id belongs to: ``<stem>/conflict/<order>`` -> ``<stem>``,
    so that an instance asked in both evidence orders is one unit of analysis."""
    for order in ORDERS:
        suffix = f"/conflict/{order}"
        if instance_id.endswith(suffix):
            return instance_id[: -len(suffix)]
    return instance_id

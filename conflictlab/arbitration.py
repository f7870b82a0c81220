"""Evidence arbitration between text, numbers and tool forecasts (synthetic).

Reproduces the benchmark of "When Text and Numbers Disagree: Evidence
Arbitration in LLMs" (Appendix B-C). Every instance derives from a latent
risk trajectory in [0, 1]; the model must say whether the value at T+k is
high (> 0.5) or low (< 0.5). In conflict conditions exactly one of two
sources agrees with the truth; unimodal references show that source alone.

Trajectories (B.1): label high/low; margin m ~ U(m_low, m_high); target
y = 0.5 ± m; slope s ~ U(-0.05, 0.05), shared by both labels; x_T = y − s·k − ε,
then backwards x_t = x_{t+1} − s + ε_t, ε ~ N(0, σ²). A draw is rejected and
redrawn when a value leaves [0, 1] or the forward check fails: a fresh
k-step forward simulation from x_T must land on the label's side of 0.5 by
at least m_low − 1.5·σ·√k (our reading of the paper's "margin condition",
which is ≥ 0 exactly when the configuration is valid). A configuration with
m_low < 1.5·σ·√k is refused.

Text (B.2), bins chosen here: levels [0, .15) low, [.15, .35) moderately
below, [.35, .5) slightly below, [.5, .65) slightly above, [.65, .85)
elevated, [.85, 1] high; trend strength by |s|: < .015 weak, < .035
moderate, else strong. No number other than the two timestamps appears in
a summary.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import asdict, dataclass, field

import numpy as np
import pyarrow as pa

THRESHOLD = 0.5
SETTINGS = ("modality", "recency", "reliability", "tool")
ORDERS = ("aligned_first", "aligned_last")

DOMAINS = {
    "generic": {
        "entity": "system",
        "risk": "risk",
        "framing": "The system has a risk between 0 and 1, where higher values indicate greater risk and lower values indicate lower risk.",
    },
    "healthcare": {
        "entity": "patient",
        "risk": "deterioration risk",
        "framing": "The patient has a deterioration risk between 0 and 1, where higher values indicate greater risk of clinical deterioration and lower values indicate lower risk.",
    },
    "industrial": {
        "entity": "machine",
        "risk": "failure risk",
        "framing": "The machine has a failure risk between 0 and 1, where higher values indicate greater risk of failure, and lower values indicate lower risk.",
    },
    "finance": {
        "entity": "asset",
        "risk": "financial distress risk",
        "framing": "The asset has a financial distress risk between 0 and 1, where higher values indicate greater risk of financial distress and lower values indicate lower risk.",
    },
}


@dataclass(frozen=True)
class TrajectoryConfig:
    length: int = 16  # T observed points
    horizon: int = 1  # k
    sigma: float = 0.05
    margin: tuple[float, float] = (0.35, 0.45)
    slope: float = 0.05  # s ~ U(-slope, slope)

    def validate(self) -> None:
        low, high = self.margin
        if not 0 < low <= high < 0.5:
            raise ValueError(f"margin range {self.margin} must satisfy 0 < m_low <= m_high < 0.5")
        if low < 1.5 * self.sigma * math.sqrt(self.horizon):
            raise ValueError(
                f"invalid configuration: m_low={low} < 1.5·σ·√k = {1.5 * self.sigma * math.sqrt(self.horizon):.4f} "
                f"(σ={self.sigma}, k={self.horizon}); the noise over the horizon could flip labels"
            )
        if self.length < 2 or self.horizon < 1:
            raise ValueError(f"need T >= 2 and k >= 1, got T={self.length}, k={self.horizon}")


@dataclass
class Trajectory:
    label: str  # "high" | "low"
    values: list[float]
    target: float
    margin: float
    slope: float
    attempts: int


def sample_trajectory(label: str, cfg: TrajectoryConfig, rng: np.random.Generator, max_attempts: int = 10_000) -> Trajectory:
    """One trajectory with the given label, by rejection sampling (B.1)."""
    sign = 1.0 if label == "high" else -1.0
    min_forward = cfg.margin[0] - 1.5 * cfg.sigma * math.sqrt(cfg.horizon)
    for attempt in range(1, max_attempts + 1):
        margin = rng.uniform(*cfg.margin)
        target = THRESHOLD + sign * margin
        slope = rng.uniform(-cfg.slope, cfg.slope)
        values = np.empty(cfg.length)
        values[-1] = target - slope * cfg.horizon - rng.normal(0.0, cfg.sigma)
        for t in range(cfg.length - 2, -1, -1):
            values[t] = values[t + 1] - slope + rng.normal(0.0, cfg.sigma)
        forward = values[-1] + slope * cfg.horizon + rng.normal(0.0, cfg.sigma * math.sqrt(cfg.horizon))
        if sign * (forward - THRESHOLD) < min_forward:
            continue
        if values.min() < 0.0 or values.max() > 1.0 or not 0.0 <= target <= 1.0:
            continue
        return Trajectory(label, values.tolist(), float(target), float(margin), float(slope), attempt)
    raise RuntimeError(f"no valid {label} trajectory in {max_attempts} attempts for {cfg}")


# --------------------------------------------------------------------------
# Text summaries.

_LEVELS = [
    (0.15, "low", ["a low level", "a clearly low value"]),
    (0.35, "moderately_below", ["a moderate value below {thr}", "a level moderately below {thr}"]),
    (0.50, "slightly_below", ["a level slightly below {thr}", "a value marginally below {thr}"]),
    (0.65, "slightly_above", ["a level slightly above {thr}", "a value marginally above {thr}"]),
    (0.85, "elevated", ["an elevated level", "a raised value above {thr}"]),
    (math.inf, "high", ["a high level", "a clearly high value"]),
]
_TRENDS = {
    ("up", "weak"): ["rose slightly", "edged upwards", "increased marginally"],
    ("up", "moderate"): ["increased steadily", "rose at a moderate pace", "climbed gradually"],
    ("up", "strong"): ["climbed significantly", "rose sharply", "increased strongly"],
    ("down", "weak"): ["dipped slightly", "edged downwards", "decreased marginally"],
    ("down", "moderate"): ["declined gradually", "fell at a moderate pace", "decreased steadily"],
    ("down", "strong"): ["dropped significantly", "fell sharply", "decreased strongly"],
}
_STATUS = {
    ("below", "below"): ["it continued to stay contained", "it still remained limited", "it was still under control"],
    ("above", "above"): ["it remained concerning", "it was still elevated", "it stayed in a concerning range"],
    ("below", "above"): ["it became concerning", "it rose into an elevated state", "it moved into a concerning range"],
    ("above", "below"): ["it returned to a controlled range", "it eased into a contained state", "it came back under control"],
}
_OPENINGS = ["Initially, at {t0}, ", "Starting at {t0}, ", "At {t0}, "]
_CLOSINGS = ["by {t1}", "as of {t1}"]
_THRESHOLDS = ["the threshold", "the critical level", "the cutoff level"]
_CONNECTORS = ["then", "after that", "from there"]
UNRELIABLE_NOTES = [
    "Note: this summary was produced using partially corrupted data from the observation window.",
    "Note: this report was generated from partially corrupted data within the observation window.",
]


def level_category(value: float) -> str:
    return next(name for upper, name, _ in _LEVELS if value < upper)


def trend_category(slope: float) -> tuple[str, str]:
    strength = "weak" if abs(slope) < 0.015 else "moderate" if abs(slope) < 0.035 else "strong"
    return ("up" if slope >= 0 else "down", strength)


def describe(traj: Trajectory, times: list[str], risk: str, rng: random.Random) -> str:
    """A summary of ``traj`` with no numbers besides its first and last timestamps."""
    thr = rng.choice(_THRESHOLDS)

    def level(value: float) -> str:
        phrases = next(p for upper, _, p in _LEVELS if value < upper)
        return rng.choice(phrases).format(thr=thr)

    start, end = traj.values[0], traj.values[-1]
    regions = ("above" if start >= THRESHOLD else "below", "above" if end >= THRESHOLD else "below")
    opening = rng.choice(_OPENINGS).format(t0=times[0])
    closing = rng.choice(_CLOSINGS).format(t1=times[-1])
    return (
        f"{opening}{risk} was at {level(start)}; {rng.choice(_CONNECTORS)}, it {rng.choice(_TRENDS[trend_category(traj.slope)])}, "
        f"and {closing} {rng.choice(_STATUS[regions])}, settling at {level(end)}."
    )


# --------------------------------------------------------------------------
# Instances and prompts.


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
        pa.field("aligned_source", pa.string(), nullable=False),  # text | numbers | context
        pa.field("domain", pa.string(), nullable=False),
        pa.field("seed", pa.int64(), nullable=False),
        pa.field("label", pa.string(), nullable=False),
        pa.field("answer_letter", pa.string(), nullable=False),
        pa.field("target", pa.float64(), nullable=False),
        pa.field("target_time", pa.string(), nullable=False),
        pa.field("latent", pa.string(), nullable=False),  # JSON: trajectories, slopes, margins, forecast, masks
        pa.field("prompt", pa.string(), nullable=False),
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
    closing = "\n".join(cfg.choices.lines()) + "\n\nAnswer with only A or B. Do not add any explanation or additional text.\n\nAnswer:"

    def prompt(condition: str, blocks: list[str]) -> str:
        context = aligned
        head = [domain["framing"], _instruction(setting, condition, context, domain["entity"], domain["risk"])]
        return "\n\n".join(head + blocks + [question, closing])

    base = {
        "setting": setting,
        "aligned_source": "context" if setting == "tool" else aligned,
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
        {**base, "instance_id": f"{stem}/conflict/aligned_first", "condition": "conflict", "order": "aligned_first",
         "prompt": prompt("conflict", [aligned_block, other_block])},
        {**base, "instance_id": f"{stem}/conflict/aligned_last", "condition": "conflict", "order": "aligned_last",
         "prompt": prompt("conflict", [other_block, aligned_block])},
        {**base, "instance_id": f"{stem}/unimodal", "condition": "unimodal", "order": None,
         "prompt": prompt("unimodal", [aligned_block])},
    ]


# --------------------------------------------------------------------------
# Logit read-out.


def answer_token_ids(tokenizer, *, chat: bool) -> tuple[int, int]:
    """Token ids of "A" and "B" as the model's next token.

    After a chat template's generation prompt the answer starts a turn
    ("A"); after the plain "Answer:" it follows a space (" A"). Each must be
    exactly one token for this tokenizer, else the read-out is refused.
    """
    ids = []
    for letter in ("A", "B"):
        text = letter if chat else f" {letter}"
        encoded = tokenizer(text, add_special_tokens=False)["input_ids"]
        if len(encoded) != 1:
            raise ValueError(
                f"answer option {text!r} is {len(encoded)} tokens for {type(tokenizer).__name__} "
                f"({tokenizer.name_or_path}); the logit read-out needs exactly one"
            )
        ids.append(encoded[0])
    return ids[0], ids[1]


def encode_arbitration_prompt(tokenizer, prompt: str) -> list[int]:
    """The prompt as the user turn of a chat model, or as plain text."""
    if getattr(tokenizer, "chat_template", None):
        return list(
            tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=True, add_generation_prompt=True, return_dict=False
            )
        )
    return list(tokenizer(prompt, add_special_tokens=True)["input_ids"])


def next_token_logits(model, prompts: list[list[int]], token_ids: tuple[int, ...], *, batch_size: int = 8, pad_id: int = 0) -> np.ndarray:
    """Logits of ``token_ids`` at the next position after each prompt.

    Left-padded batches, longest first; only the last position's logits are
    computed. Returns shape (len(prompts), len(token_ids)).
    """
    import torch

    device = next(model.parameters()).device
    from conflictlab.batching import longest_first, pad_batch

    order = longest_first(prompts)
    out = np.empty((len(prompts), len(token_ids)))
    select = torch.tensor(token_ids, device=device)
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        ids, mask = pad_batch([prompts[i] for i in batch], pad_id, side="left")
        with torch.inference_mode():
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), logits_to_keep=1).logits[:, -1]
        out[batch] = logits[:, select].float().cpu().numpy()
    return out


PREDICTION_SCHEMA = pa.schema(
    [
        pa.field("instance_id", pa.string(), nullable=False),
        pa.field("model", pa.string(), nullable=False),
        pa.field("logit_a", pa.float64(), nullable=False),
        pa.field("logit_b", pa.float64(), nullable=False),
        pa.field("predicted_letter", pa.string(), nullable=False),
        pa.field("correct", pa.bool_(), nullable=False),
    ]
)


def evaluate_instances(model, tokenizer, instances: pa.Table, *, model_name: str, batch_size: int = 8) -> pa.Table:
    """A/B read-out for every instance (ties go to neither: counted wrong)."""
    chat = bool(getattr(tokenizer, "chat_template", None))
    a_id, b_id = answer_token_ids(tokenizer, chat=chat)
    prompts = [encode_arbitration_prompt(tokenizer, p) for p in instances.column("prompt").to_pylist()]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    logits = next_token_logits(model, prompts, (a_id, b_id), batch_size=batch_size, pad_id=pad)
    letters = np.where(logits[:, 0] > logits[:, 1], "A", np.where(logits[:, 1] > logits[:, 0], "B", "tie"))
    gold = instances.column("answer_letter").to_pylist()
    return pa.table(
        {
            "instance_id": instances.column("instance_id"),
            "model": [model_name] * instances.num_rows,
            "logit_a": logits[:, 0],
            "logit_b": logits[:, 1],
            "predicted_letter": letters.tolist(),
            "correct": [p == g for p, g in zip(letters.tolist(), gold)],
        },
        schema=PREDICTION_SCHEMA,
    )


# --------------------------------------------------------------------------
# Aggregates.


def calibrated_correct(instances: pa.Table, predictions: pa.Table) -> dict[str, bool]:
    """Correctness after removing each model's answer-letter bias: "A" when
    the margin logit_A − logit_B exceeds that model's median margin over the
    given prompts. Not the paper's protocol (which takes the raw argmax):
    a diagnostic for small models that answer "A" to everything, showing
    whether the evidence still moves their preference."""
    gold = dict(zip(instances.column("instance_id").to_pylist(), instances.column("answer_letter").to_pylist()))
    rows = predictions.to_pylist()
    out = {}
    for model in {r["model"] for r in rows}:
        mine = [r for r in rows if r["model"] == model]
        threshold = float(np.median([r["logit_a"] - r["logit_b"] for r in mine]))
        for r in mine:
            margin = r["logit_a"] - r["logit_b"]
            letter = "A" if margin > threshold else "B" if margin < threshold else "tie"
            out[(model, r["instance_id"])] = letter == gold[r["instance_id"]]
    return out


def accuracy_by_cell(instances: pa.Table, predictions: pa.Table) -> list[dict]:
    """Accuracy (raw and letter-bias calibrated) per (model, setting, order,
    condition, aligned source, seed).

    Unimodal references have no order; they are listed under both orders so
    that each setting × order panel shows its own reference.
    """
    meta = {r["instance_id"]: r for r in instances.select(["instance_id", "setting", "condition", "order", "aligned_source", "seed"]).to_pylist()}
    calibrated = calibrated_correct(instances, predictions)
    cells: dict[tuple, list[tuple[bool, bool]]] = {}
    for p in predictions.to_pylist():
        m = meta[p["instance_id"]]
        orders = [m["order"]] if m["order"] else list(ORDERS)
        for order in orders:
            key = (p["model"], m["setting"], order, m["condition"], m["aligned_source"], m["seed"])
            cells.setdefault(key, []).append((p["correct"], calibrated[(p["model"], p["instance_id"])]))
    return [
        dict(
            zip(("model", "setting", "order", "condition", "aligned_source", "seed"), key),
            n=len(v),
            accuracy=float(np.mean([raw for raw, _ in v])),
            calibrated=float(np.mean([cal for _, cal in v])),
        )
        for key, v in sorted(cells.items())
    ]


def mean_over_seeds(cells: list[dict]) -> pa.Table:
    """Mean and standard deviation of accuracy across seeds."""
    groups: dict[tuple, list[dict]] = {}
    for c in cells:
        groups.setdefault((c["model"], c["setting"], c["order"], c["condition"], c["aligned_source"]), []).append(c)
    rows = []
    for key, members in sorted(groups.items()):
        acc = np.array([m["accuracy"] for m in members])
        cal = np.array([m["calibrated"] for m in members])
        rows.append(
            dict(
                zip(("model", "setting", "order", "condition", "aligned_source"), key),
                n_seeds=len(members),
                n_per_seed=members[0]["n"],
                accuracy=float(acc.mean()),
                std=float(acc.std(ddof=1)) if len(acc) > 1 else float("nan"),
                calibrated_accuracy=float(cal.mean()),
            )
        )
    return pa.Table.from_pylist(rows)


def sensitivity_table(instances: pa.Table, predictions: pa.Table) -> pa.Table:
    """Mean ± std of |accuracy(variant) − accuracy(baseline)| per model,
    factor and evidence condition (text only, numbers only, conflict),
    aggregated over the factor's values, seeds and orders.

    Instance ids are ``sens/<factor>=<value>/modality/s<seed>/...`` with the
    baseline under ``sens/baseline``.
    """
    meta = {r["instance_id"]: r for r in instances.select(["instance_id", "condition", "order", "aligned_source", "seed"]).to_pylist()}
    acc: dict[tuple, list[bool]] = {}
    for p in predictions.to_pylist():
        m = meta[p["instance_id"]]
        variant = p["instance_id"].split("/")[1]
        group = "conflict" if m["condition"] == "conflict" else f"{m['aligned_source']} only"
        key = (p["model"], variant, group, m["seed"], m["order"] or "-")
        acc.setdefault(key, []).append(p["correct"])
    means = {k: float(np.mean(v)) for k, v in acc.items()}
    rows = []
    models = sorted({k[0] for k in means})
    factors = sorted({k[1].split("=")[0] for k in means if k[1] != "baseline"})
    for model in models:
        for factor in factors:
            for group in ("text only", "numbers only", "conflict"):
                deltas = [
                    abs(v - means[(model, "baseline", group, seed, order)])
                    for (mo, variant, g, seed, order), v in means.items()
                    if mo == model and g == group and variant.split("=")[0] == factor and (model, "baseline", group, seed, order) in means
                ]
                rows.append(
                    {
                        "model": model,
                        "factor": factor,
                        "condition": group,
                        "n_deltas": len(deltas),
                        "mean_abs_delta": float(np.mean(deltas)) if deltas else float("nan"),
                        "std_abs_delta": float(np.std(deltas, ddof=1)) if len(deltas) > 1 else float("nan"),
                    }
                )
    return pa.Table.from_pylist(rows)


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
    from dataclasses import replace

    base = replace(base, settings=("modality",))
    variants = [("sens/baseline", base)]
    for domain in sweep.get("domains", []):
        variants.append((f"sens/domain={domain}", replace(base, domain=domain)))
    for c in sweep.get("answer_choices", []):
        choice = AnswerChoices(a_means=c["a_means"], a_first=c["a_first"])
        variants.append((f"sens/choices=A-{choice.a_means}-{'first' if choice.a_first else 'second'}", replace(base, choices=choice)))
    for length in sweep.get("lengths", []):
        variants.append((f"sens/T={length}", replace(base, trajectory=replace(base.trajectory, length=length))))
    for sigma in sweep.get("sigmas", []):
        variants.append((f"sens/sigma={sigma}", replace(base, trajectory=replace(base.trajectory, sigma=sigma))))
    for margin in sweep.get("margins", []):
        variants.append((f"sens/margin={margin[0]}-{margin[1]}", replace(base, trajectory=replace(base.trajectory, margin=tuple(margin)))))
    return variants

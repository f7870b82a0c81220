"""Conflict-resolution methods beside activation steering: what they are, how
they are spelled, and the arithmetic they share across benchmarks.

A :class:`Method` travels through file names (:mod:`conflictlab.wildcards`):

==========================  =====================================================
``greedy``                  plain greedy decoding (the reference row)
``cad-a<alpha>``            context-aware decoding at a fixed ``alpha`` > 0
``adacad``                  AdaCAD: CAD with a per-step weight from the Jensen-Shannon divergence
``cfp-opinion``             context-faithful prompting, opinion-based prompt
``cfp-instructed``          context-faithful prompting, instructed prompt
``cfp-opinion_instructed``  both (the paper's combination "instr+opin")
==========================  =====================================================

``alpha`` is spelled by :func:`conflictlab.wildcards.format_alpha`, as the
steering strength is (``cad-a0.5``, ``cad-a1``); CAD at 0 is greedy decoding
and is spelled ``greedy``.

**Context-aware decoding** (CAD; Shi et al. 2023, "Trusting Your Evidence:
Hallucinate Less with Context-aware Decoding", arXiv 2305.14739): with ``ℓ`` the
next-token logits, ``c`` the context, ``x`` the query and ``y<t`` the tokens
generated so far::

    y_t ~ softmax[(1 + α) ℓθ(y_t | c, x, y<t) − α ℓθ(y_t | x, y<t)]

under greedy decoding the argmax of that bracket (:func:`cad_logits`). The
context-free pass is fed the same generated tokens as the contextual one.
(The formula as issue 35 and AdaCAD's released code state it; the CAD
paper's own equation text could not be retrieved here, only its abstract:
"a contrastive output distribution that amplifies the difference between
the output probabilities when a model is used with and without context".)

**AdaCAD** (Wang et al. 2024, "AdaCAD: Adaptively Decoding to Balance
Conflicts between Contextual and Parametric Knowledge", NAACL 2025, arXiv 2409.07394): the same
bracket with ``α`` replaced at every step by the Jensen-Shannon divergence of
the two next-token distributions (:func:`jensen_shannon`), floored at a
threshold ``τ`` in long-form generation::

    α_t = max( JSD( pθ(y_t | c, x, y<t) ‖ pθ(y_t | x, y<t) ), τ )
    y_t ~ softmax[(1 + α_t) ℓθ(y_t | c, x, y<t) − α_t ℓθ(y_t | x, y<t)]

Where the equation comes from: the paper's own text could not be retrieved
here (only its abstract: the weight "is measured by the Jensen-Shannon
divergence between distributions representing contextual and parametric
knowledge"), so the lines above are read from the authors' released code,
github.com/HanNight/AdaCAD, ``group_decode_fileio_adacad.py`` at commit
10af33af04be9843a90e4c4b11750af27f26ba1f (the version of the file that
carries the floor; earlier ones, e.g. 0658f8c0, added ``args.offset``
instead): ``alpha = get_jsd(score1, score2)`` then ``if alpha <
args.threshold: alpha = args.threshold``, with ``score1`` the contextual and
``score2`` the context-free logits, then ``(1 + alpha) * score`` summed with
``(0 - alpha) * score`` of the context-free process. ``--threshold``
defaults to 0.0; the same commit's ``run_summ.sh`` sets ``THRESHOLD="0.3"``
("warmup operation for long-form generation") for summarization, and its QA
script passes none. Here: τ = :data:`ADACAD_LONG_FORM_FLOOR` (0.3) wherever a
method generates text (ContextConflict's answers, reasoning included, and
CONFLICTS' responses run to sentences), τ = :data:`ADACAD_SHORT_ANSWER_FLOOR`
(0) for the one-token choice read-outs (ConflictBank, arbitration), the
authors' QA setting. The authors' code then samples from the top of the
result, where greedy decoding here takes its argmax. Its ``get_jsd`` is
``0.5 * (KL(p ‖ m) + KL(q ‖ m))`` with ``m = (p + q) / 2`` through
``torch.nn.functional.kl_div``, i.e. with the **natural logarithm**: the JSD
lies in [0, ln 2], and that is the base used here (so the floor 0.3 is in
nats, as theirs). (In base 2 it would lie in [0, 1];
``scipy.spatial.distance.jensenshannon`` returns the square root of the JSD,
in nats unless ``base`` is given.)

**Context-faithful prompting** (Zhou et al. 2023, "Context-faithful Prompting
for Large Language Models", arXiv 2303.11315): prompt-only, one pass.
The templates below are quoted from the authors' released code,
github.com/wzhouad/context-faithful-llm, ``knowledge_conflict.py``,
``qa_to_prompt`` (the paper's own figure of the templates could not be
retrieved here; its abstract: "Opinion-based prompts reframe the context as a
narrator's statement and inquire about the narrator's opinions")::

    base:        '{}\\nQ:{}\\nA:{}'.format(context, query, answer)
    opin:        context = context.replace('"', "")
                 'Bob said "{}"\\nQ: {} in Bob\\'s opinion?\\nA:{}'.format(context, query[:-1], answer)
    instr:       'Instruction: read the given information and answer the corresponding question.\\n\\n'
                 + the base prompt
    instr+opin:  the same instruction + the opinion-based prompt

(``query[:-1]`` drops the question mark.) Counterfactual demonstrations, which
the paper also studies, are not implemented: in the authors' code (commit
cd78bf2677b150031dd315458f1ae01a505ca2cb, ``--demo_mode counter``) they are
each item's ``ic_examples`` from their Natural Questions data file, which is
not in the repository and could not be retrieved here to quote; the methods
table's caption says the prompts run zero-shot. Every benchmark here has its own prompt
templates, so the rewrite is applied to a benchmark's pieces rather than
replacing its prompt: :func:`opinion_context` and :func:`opinion_question`
reframe the context and the question, :data:`INSTRUCTION` goes first in the
user's message. They live in this shared layer because all four benchmarks
apply the same rewrite and no benchmark may import another;
:func:`faithful_prompt` renders the paper's whole plain-text prompt for one
context and question.

**Backends**: CAD and AdaCAD need, at every step, the logits of a second
sequence (the context-free prompt extended by the tokens chosen for the
contextual one). :class:`conflictlab.lm.generation.HFBackend` runs both in
one batch. vLLM's logits processors (0.32: ``apply(logits)`` over the rows of
the persistent batch, each row a request sampling its own tokens) cannot
pair a request with a second one fed the first one's tokens, and a served or
hosted endpoint exposes no logits at all: only a backend with the ``logits``
capability (:mod:`conflictlab.lm.backends`) runs them, which the config's
validation checks before any job starts (:func:`conflictlab.run_config.capability_problems`)
and :func:`check_method_backend` checks again of the built backend. Prompting methods and
greedy decoding run on every backend.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from conflictlab.wildcards import ALPHA_PATTERN, MODEL_NAME_PATTERN, format_alpha, spelled

if TYPE_CHECKING:
    import numpy as np

GREEDY = "greedy"
CAD = "cad"
ADACAD = "adacad"
# context-faithful prompt styles, each a method "cfp-<style>"
PROMPT_STYLES = ("opinion", "instructed", "opinion_instructed")
PROMPTING = tuple(f"cfp-{style}" for style in PROMPT_STYLES)
KINDS = (GREEDY, CAD, ADACAD, *PROMPTING)
CONTRASTIVE = (CAD, ADACAD)

# AdaCAD's floor on its weight (the module docstring: the authors' threshold):
# long-form generation, and the one-token read-outs (their QA setting).
ADACAD_LONG_FORM_FLOOR = 0.3
ADACAD_SHORT_ANSWER_FLOOR = 0.0


@dataclass(frozen=True)
class Method:
    """A conflict-resolution method: ``kind`` (one of :data:`KINDS`) and,
    for ``cad`` only, its ``alpha`` (finite, > 0)."""

    kind: str
    alpha: float = 0.0

    PATTERN: ClassVar[str] = rf"{GREEDY}|{ADACAD}|{CAD}-a(?:{ALPHA_PATTERN})|(?:{'|'.join(PROMPTING)})"

    def __post_init__(self):
        alpha = self.alpha
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
            raise ValueError(f"method {self.kind!r}: alpha must be a number, got {alpha!r}")
        alpha = float(alpha)
        if self.kind == CAD:
            if not (math.isfinite(alpha) and alpha > 0.0):
                raise ValueError(f"method cad: alpha must be finite and > 0 (cad at 0 is {GREEDY}), got {alpha!r}")
        elif self.kind in KINDS:
            if alpha != 0.0:
                raise ValueError(f"method {self.kind} takes no alpha, got {alpha!r}")
        else:
            raise ValueError(f"not a method: {self.kind!r} (one of {', '.join(KINDS)})")
        object.__setattr__(self, "alpha", alpha)

    @property
    def contrastive(self) -> bool:
        """Whether decoding needs the context-free pass (CAD, AdaCAD)."""
        return self.kind in CONTRASTIVE

    @property
    def prompt_style(self) -> str | None:
        """The context-faithful prompt style (one of :data:`PROMPT_STYLES`), None for a decoding method."""
        return self.kind.removeprefix("cfp-") if self.kind in PROMPTING else None

    def format(self) -> str:
        return f"{CAD}-a{format_alpha(self.alpha)}" if self.kind == CAD else self.kind

    @classmethod
    def parse(cls, text: str) -> Method:
        spelled(cls.PATTERN, text, "method", f"one of {GREEDY}, {CAD}-a<alpha>, {ADACAD}, {', '.join(PROMPTING)}")
        if not text.startswith(f"{CAD}-a"):
            return cls(text)
        alpha = text.removeprefix(f"{CAD}-a")
        try:
            method = cls(CAD, float(alpha))
        except ValueError as error:
            raise ValueError(f"not a method: {text!r} ({error})") from None
        if method.format() != text:  # cad-a0.50: one value, one name
            raise ValueError(f"not a method: {text!r} (alpha {alpha!r} is spelled {format_alpha(float(alpha))!r})")
        return method


def as_method(method: Method | str) -> Method:
    return method if isinstance(method, Method) else Method.parse(method)


@dataclass(frozen=True)
class MethodRun:
    """The pseudo-model ``model@method`` of a conflict-resolution method's
    run, the ``model`` of its rows on every benchmark (on ContextConflict
    it answers the steering test split, as a steered rerun does, so the two
    compare on the same samples). ``model`` a registry model's name (or the
    wildcard ``{model}``)."""

    model: str
    method: Method

    SEPARATOR: ClassVar[str] = "@"
    PATTERN: ClassVar[str] = rf"(?:{MODEL_NAME_PATTERN})@(?:{Method.PATTERN})"

    def __post_init__(self):
        if not isinstance(self.model, str) or not self.model or "@" in self.model or "/" in self.model:
            raise ValueError(f"not a model name for a method's rerun: {self.model!r}")
        object.__setattr__(self, "method", as_method(self.method))

    def format(self) -> str:
        return f"{self.model}{self.SEPARATOR}{self.method.format()}"

    @classmethod
    def parse(cls, text: str) -> MethodRun:
        spelled(cls.PATTERN, text, "method rerun", "<model>@<method>")
        model, method = text.split(cls.SEPARATOR, 1)
        try:
            return cls(model, Method.parse(method))
        except ValueError as error:  # e.g. m@cad-a0: spelled like a method, but greedy decoding
            raise ValueError(f"not a method rerun: {text!r} ({error})") from None

    @classmethod
    def parse_if_method(cls, text: str) -> MethodRun | None:
        """A responding model's name read as a method's rerun; None for
        anything else (a registry model, a steered rerun)."""
        return cls.parse(text) if isinstance(text, str) and re.fullmatch(cls.PATTERN, text) else None


def check_method_backend(method: Method | str, backend) -> Method:
    """``method`` parsed, or ValueError when the built ``backend`` cannot run
    it: CAD and AdaCAD need ``generate_contrastive`` (the ``logits``
    capability of :mod:`conflictlab.lm.backends`)."""
    method = as_method(method)
    if method.contrastive and not hasattr(backend, "generate_contrastive"):
        raise ValueError(
            f"method {method.format()} needs the next-token logits of a second, context-free pass at every step, "
            f"which the {backend.name!r} backend cannot give (capability logits)"
        )
    return method


# --------------------------------------------------------------------------
# The contrast, on torch logits of shape (batch, vocab).


def cad_logits(with_context, without_context, alpha):
    """CAD's bracket ``(1 + α) ℓ(y | c, x) − α ℓ(y | x)``, float32 or wider.

    ``with_context``, ``without_context``: logits, shape (batch, vocab);
    ``alpha``: a float or a tensor of shape (batch,), one weight per row.
    Returns shape (batch, vocab). Where either logit is not finite (a token
    a model masks with −inf) the contextual logit stands: the bracket would
    give +inf for a token masked only without context, NaN for one masked in both.
    """
    import torch

    dtype = torch.promote_types(with_context.dtype, torch.float32)
    with_context, without_context = with_context.to(dtype), without_context.to(dtype)
    alpha = torch.as_tensor(alpha, dtype=dtype, device=with_context.device)
    if alpha.ndim == 1:
        alpha = alpha[:, None]
    contrast = (1 + alpha) * with_context - alpha * without_context
    return torch.where(torch.isfinite(without_context) & torch.isfinite(with_context), contrast, with_context)


def jensen_shannon(p_logits, q_logits):
    """JSD(softmax(p) ‖ softmax(q)) of each row, in nats (natural log, as
    AdaCAD's code computes it; see the module docstring), in [0, ln 2].

    ``p_logits``, ``q_logits``: shape (batch, vocab). Returns shape (batch,),
    float32 or wider. Tokens with zero probability in one distribution
    (−inf logits) contribute nothing on that side (0 log 0 = 0).
    """
    import torch

    dtype = torch.promote_types(p_logits.dtype, torch.float32)
    log_p = torch.log_softmax(p_logits.to(dtype), dim=-1)
    log_q = torch.log_softmax(q_logits.to(dtype), dim=-1)
    log_m = torch.logaddexp(log_p, log_q) - math.log(2.0)

    def kl_to_m(log_a):
        a = log_a.exp()
        return torch.where(a > 0, a * (log_a - log_m), torch.zeros_like(a)).sum(-1)

    return (0.5 * (kl_to_m(log_p) + kl_to_m(log_q))).clamp_min(0.0)


def contrast_weight(method: Method, with_context, without_context, *, floor: float = ADACAD_SHORT_ANSWER_FLOOR):
    """The weight α of each row, shape (batch,): ``method.alpha`` for CAD,
    for AdaCAD the rows' :func:`jensen_shannon` raised to ``floor`` where it
    is below (:data:`ADACAD_LONG_FORM_FLOOR` for generated text). Logits of
    shape (batch, vocab)."""
    import torch

    if method.kind == ADACAD:
        return jensen_shannon(with_context, without_context).clamp_min(floor)
    if method.kind == CAD:
        return torch.full((with_context.shape[0],), method.alpha, dtype=torch.float64, device=with_context.device)
    raise ValueError(f"method {method.format()} has no contrast")


def contrast_logits(method: Method, with_context, without_context, *, floor: float = ADACAD_SHORT_ANSWER_FLOOR):
    """The next-token logits ``method`` decodes from, and its weights:
    (logits of shape (batch, vocab), α of shape (batch,)); inputs of shape
    (batch, vocab), row i of both from the same sample; ``floor``: AdaCAD's
    (:func:`contrast_weight`)."""
    alpha = contrast_weight(method, with_context, without_context, floor=floor)
    return cad_logits(with_context, without_context, alpha.to(with_context.device)), alpha


# --------------------------------------------------------------------------
# Closed read-outs: logits over a fixed set of answer options.


def contrast_option_logits(with_context: np.ndarray, without_context: np.ndarray, alpha) -> np.ndarray:
    """CAD's bracket on the options' logits, float64, shape (n, options).

    ``with_context``, ``without_context``: each prompt's next-token logits
    at its answer options (:func:`conflictlab.lm.choices.choice_logits` of
    the prompts and of their context-free versions), shape (n, options);
    ``alpha``: a float or shape (n,). The bracket is elementwise, so the
    options' contrasted logits are the full vocabulary's contrasted logits
    at those tokens; AdaCAD's weight, which depends on the whole
    distribution, comes from :func:`conflictlab.lm.choices.contrastive_choice_logits`.
    """
    import numpy as np

    with_context = np.asarray(with_context, dtype=np.float64)
    without_context = np.asarray(without_context, dtype=np.float64)
    if with_context.shape != without_context.shape or with_context.ndim != 2:
        raise ValueError(
            f"option logits of shapes {with_context.shape} and {without_context.shape}; need two equal (n, options)"
        )
    alpha = np.asarray(alpha, dtype=np.float64)
    if alpha.ndim == 1:
        alpha = alpha[:, None]
    return (1 + alpha) * with_context - alpha * without_context


# --------------------------------------------------------------------------
# Context-faithful prompting: rewrites of a benchmark's context and question.

NARRATOR = "Bob"
INSTRUCTION = "Instruction: read the given information and answer the corresponding question."


def opinion_context(context: str) -> str:
    """The context as the narrator's statement: ``Bob said "{context}"``,
    its own double quotes removed (as the authors' code does)."""
    return f'{NARRATOR} said "{context.replace(chr(34), "")}"'


def opinion_question(question: str) -> str:
    """The question asked of the narrator's opinion: ``{question} in Bob's
    opinion?``, the question's own final question mark dropped (the authors'
    code drops the last character, assuming it is one; a question without
    one keeps all its characters here)."""
    return f"{question.rstrip().removesuffix('?')} in {NARRATOR}'s opinion?"


def faithful_prompt(context: str, question: str, style: str) -> str:
    """The whole zero-shot plain-text prompt of ``style`` (one of
    :data:`PROMPT_STYLES`) for one context and question, as the authors'
    ``qa_to_prompt`` renders it without demonstrations."""
    if style not in PROMPT_STYLES:
        raise ValueError(f"not a context-faithful prompt style: {style!r} (one of {', '.join(PROMPT_STYLES)})")
    if "opinion" in style:
        body = f"{opinion_context(context)}\nQ: {opinion_question(question)}\nA:"
    else:
        body = f"{context}\nQ:{question}\nA:"
    return f"{INSTRUCTION}\n\n{body}" if "instructed" in style else body

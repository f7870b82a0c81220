"""Seeded pseudo-text for synthetic inputs of realistic shape (README, Paper
scale): runs of random-syllable words, never real content."""

from __future__ import annotations

import random
import zlib

import numpy as np

_SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "ze",
    "an",
    "el",
    "or",
    "un",
    "bri",
    "dra",
    "ste",
    "pla",
    "qui",
    "mon",
    "ter",
)


def scaled(count: int, fraction: float) -> int:
    """``count`` at ``fraction`` of a paper's size: at least 1."""
    return max(1, round(count * fraction))


def chosen(n: int, share: float, rng: np.random.Generator) -> np.ndarray:
    """A boolean mask of exactly ``round(share * n)`` of ``n`` rows, seeded:
    how a planted model output (README, Paper scale) is right, supported or
    adhering for a known share of its rows."""
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(n)[: round(share * n)]] = True
    return mask


# Word frequencies fall with rank as 1/rank^ZIPF, the shortest words most
# frequent, as in English: SmolLM2's tokenizer then takes 1.51 tokens per
# pseudo-word against 1.47 per word of the shared ContextConflict sample's
# English (uniform frequencies: 3.3), so prompts have realistic token counts.
ZIPF = 1.2


class Words:
    """Seeded pseudo-words from ``seed`` (``rng`` is the one random source a
    generator draws everything else from too, so a seed fixes the output).
    ``text(n)`` is a slice of ``n`` words of one long random run, so a long
    text costs a join, not ``n`` random draws."""

    def __init__(self, seed: int, vocabulary: int = 4000, run: int = 200_000):
        self.rng = random.Random(seed)
        vocab = sorted(
            {"".join(self.rng.choices(_SYLLABLES, k=self.rng.randint(1, 4))) for _ in range(vocabulary)},
            key=lambda w: (len(w), w),
        )
        self.run = self.rng.choices(vocab, weights=[1 / rank**ZIPF for rank in range(1, len(vocab) + 1)], k=run)

    def count(self, mean_sd: tuple[float, float], minimum: int = 1) -> int:
        """A length drawn from a normal (mean, standard deviation), at least ``minimum``."""
        return max(minimum, round(self.rng.gauss(*mean_sd)))

    def text(self, n: int) -> str:
        n = min(n, len(self.run))
        start = self.rng.randrange(len(self.run) - n + 1)
        return " ".join(self.run[start : start + n])

    def sized(self, mean_sd: tuple[float, float], minimum: int = 1) -> str:
        return self.text(self.count(mean_sd, minimum))

    def weighted(self, weights: dict):
        """One key of ``weights`` ({value: weight})."""
        return self.rng.choices(list(weights), weights=list(weights.values()))[0]


class WordTokenizer:
    """A stand-in tokenizer for planted model outputs (README, Paper scale):
    one token per whitespace-separated word, its id a hash of the word. No
    chat template, so :func:`conflictlab.contextconflict.prompts.encode_messages`
    renders its plain-text format; the prompt lengths it gives have the right
    shape (they grow with the evidence) without loading any model's tokenizer."""

    name_or_path = "planted-words"
    vocab_size = 1 << 15

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
        ids = [zlib.crc32(word.encode("utf-8")) % self.vocab_size for word in text.split()]
        return {"input_ids": ([0] if add_special_tokens else []) + ids}

"""Table 3's piece choice: highest and lowest φ, not the clipped shares."""

import numpy as np
import pyarrow as pa

from conflictlab.contextconflict import causal
from conflictlab.contextconflict.causal import extreme_pieces


def test_extreme_pieces_use_phi_with_earliest_ties():
    assert extreme_pieces([0.5, -0.1, -0.3]) == (0, 2)  # both negative pieces have share 0
    assert extreme_pieces([0.2, 0.2, 0.0, 0.0]) == (0, 2)
    assert extreme_pieces([-1.0]) == (0, 0)


def test_causal_intervention_drops_the_lowest_phi_piece(monkeypatch):
    seen = []
    monkeypatch.setattr(causal, "encode_messages", lambda tokenizer, messages: (None, [messages]))
    monkeypatch.setattr(causal, "build_messages", lambda template, question, pieces: tuple(pieces))

    def fake_loglikelihoods(lm, prompts, responses):
        seen.extend(p[0] for p in prompts)
        return [np.array([-1.0]), np.array([-2.0]), np.array([-1.5])]

    monkeypatch.setattr(causal, "loglikelihoods", fake_loglikelihoods)
    attr = pa.Table.from_pylist(
        [
            {
                "sample_id": "s",
                "undefined": False,
                "phi": [0.5, -0.1, -0.3],
                "shares": [1.0, 0.0, 0.0],
                "scorer": "x",
                "conflict_type": "perspective",
            }
        ]
    )
    samples = pa.Table.from_pylist([{"sample_id": "s", "question": "q", "evidence": ["a", "b", "c"]}])
    responses = pa.Table.from_pylist([{"sample_id": "s", "template": "t", "response_token_ids": [1, 2]}])
    row = causal.causal_intervention(
        attr, samples, responses, type("LM", (), {"tokenizer": None})(), model_name="m"
    ).to_pylist()[0]
    assert (row["high_piece"], row["low_piece"]) == (1, 3)
    assert seen == [("a", "b", "c"), ("b", "c"), ("a", "b")]
    assert row["delta_high"] == 1.0 and row["delta_low"] == 0.5

"""The model layer: every benchmark runs models through these operations.

* :func:`conflictlab.lm.loading.load`: a prepared model folder ->
  :class:`~conflictlab.lm.loading.LoadedModel` (model, tokenizer, device,
  dtype, pad and end-of-sequence ids, chat template);
  :func:`conflictlab.lm.registry.prepare_model` materialises a configured
  source into such a folder; :mod:`conflictlab.lm.placement` sizes a model
  and spreads one too big for a GPU over several.
* generation (:mod:`conflictlab.lm.generation`): ``HFBackend``,
  ``VLLMBackend`` (:mod:`conflictlab.lm.vllm_engine`) and ``OpenAIBackend``
  behind one ``generate(prompts, params)`` interface;
  :mod:`conflictlab.lm.backends` declares every backend and what it can do,
  :func:`conflictlab.lm.builders.generation_backend` builds one from settings;
  sharded, resumable jobs in :mod:`conflictlab.lm.shards`;
  :func:`conflictlab.lm.server.serve_vllm` runs an OpenAI-compatible server.
* :func:`conflictlab.lm.likelihood.loglikelihoods` of continuations, with
  :class:`conflictlab.lm.subsets.SubsetScorer` as the prefix-sharing fast
  path for coalition values.
* :func:`conflictlab.lm.choices.choice_logits` over fixed answer tokens.
* :func:`conflictlab.lm.hidden.hidden_states`: every layer's residual stream
  at the last token, one forward.
* :class:`conflictlab.lm.steering.Steering`: hooks that add a direction to
  decoder layers.
* :mod:`conflictlab.lm.methods`: conflict-resolution methods (CAD, AdaCAD,
  context-faithful prompts), their names and arithmetic;
  :meth:`~conflictlab.lm.generation.HFBackend.generate_contrastive` runs the
  two passes of CAD and AdaCAD in one batch.
* :mod:`conflictlab.lm.batching`: the one batching helper and out-of-memory policy.

The layer takes token ids (or rendered messages) and never imports a
benchmark package. This file imports nothing, so that a rule's code hash and
environment cover only the submodules its script uses.
"""

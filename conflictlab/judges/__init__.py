"""LLM judges: closed verdicts read as constrained choices, every call cached.

* :mod:`conflictlab.judges.requests`: a judge request (a conversation, the
  reply's JSON shape) and the strict reading of a reply.
* :mod:`conflictlab.judges.backends`: the judge behind the model layer, in
  process (transformers: choice logits and prefilled generation) or guided
  (vLLM in process, vLLM's server started for the job, or any
  OpenAI-compatible endpoint: JSON-schema constrained decoding).
* :mod:`conflictlab.judges.cache`: (judge, template version, input hash) ->
  reply, in Parquet; a rerun with the same inputs calls nothing.
* :mod:`conflictlab.judges.prompts`: the prompts of generic judges, one module
  per judge family, so that a template edit reruns only the jobs that use it
  (a benchmark's own judge prompts live in its package).
* Metrics: :mod:`~conflictlab.judges.faithfulness` (RAGAS),
  :mod:`~conflictlab.judges.ratings` (LLM-as-a-Judge Balance, Cohen's kappa),
  :mod:`~conflictlab.judges.equivalence` (semantic answer match),
  :mod:`~conflictlab.judges.gold` (the judge's agreement on a team-written gold set).
"""
